"""The eager-python path's row says how the call entered the library:
through rowops._fast where it sits beside the library, else through
torch.ops. Two builds that differ in it read 12-23 % apart at small B in
an A/A of opcost ab, with nothing in the rows to say why."""
import sys
from pathlib import Path

import torch

from rowops import _ops

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench" / "python"))
import opcost_bench as ob  # noqa: E402


def _runner(path):
    x = torch.randn(3, 16)
    r = torch.randn(3, 16)
    w = torch.randn(16)
    spec = [[(t.data_ptr(), "float32", tuple(t.shape), tuple(t.stride()))
             for t in (x, r, w)]]
    runner = ob.Runner(path, "fused_add_rms_norm", "float32", "contiguous",
                       1e-6, spec)
    runner._keep = (x, r, w)  # the wrapped memory
    return runner


def test_note_names_the_entry(monkeypatch):
    runner = _runner("eager-python")
    if _ops._fast is not None:
        assert runner.note() == "entered through rowops._fast"
    monkeypatch.setattr(_ops, "_fast", None)
    assert runner.note().startswith("entered through torch.ops.rowops: "
                                    "no rowops._fast beside the library")
    # and the call still runs, through torch.ops
    out = runner.fn(*runner.args[0])
    assert out[0].shape == (3, 16)


def test_other_paths_say_nothing_of_it():
    assert _runner("reference-python").note() == ""
