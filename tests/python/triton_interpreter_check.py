"""Run by test_triton.py under TRITON_INTERPRET=1 (Triton's CPU
interpreter): the Triton kernel itself, launched as the op launches it, on
CPU tensors of every layout, against the float64 formula; `one` checks the
one-pass form (N <= rowops.triton.ONE_PASS_MAX), `two` the two-pass form.
float32 and float16 only: the interpreter rounds float32 -> bfloat16
toward zero (a GPU rounds to nearest), so bfloat16 is left to the GPU run.

Exit 77: the interpreter itself cannot run a loop over a runtime bound
(Triton 3.6's interpreter with NumPy >= 2.4 fails int() of a one-element
array), shown by a four-line probe kernel that is not ours; the two-pass
form is then left to the GPU run, and the reason is printed."""

import sys
from pathlib import Path

import torch
import triton
import triton.language as tl

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))

import rowops  # noqa: E402,F401
import rowops.triton as rt  # noqa: E402
from samples import LAYOUTS, assert_matches_formula, make_sample  # noqa: E402

which = sys.argv[1] if len(sys.argv) > 1 else ""
if which not in ("one", "two"):
    sys.exit("usage: triton_interpreter_check.py one|two")


@triton.jit
def _runtime_range_probe(OUT, n):
    acc = tl.zeros([1], dtype=tl.float32)
    for _ in range(0, n, 1):
        acc += 1.0
    tl.store(OUT + tl.arange(0, 1), acc)


if which == "two":
    probe = torch.zeros(1)
    try:
        _runtime_range_probe[(1,)](probe, 3)
    except Exception as e:  # noqa: BLE001  (the interpreter's own failure)
        import numpy
        print(f"Triton {triton.__version__}'s interpreter with NumPy "
              f"{numpy.__version__} cannot run a loop over a runtime bound "
              f"(a probe kernel: {e!r}); the two-pass form is left to the "
              f"GPU run")
        sys.exit(77)
    assert probe.item() == 3.0, probe

checked = 0
for dtype, wdtype in ((torch.float32, None), (torch.float16, None),
                      (torch.float16, torch.float32)):
    for layout in LAYOUTS:
        for B, N in ((5, 64), (3, 33), (2, 20000)):
            if (N > rt.ONE_PASS_MAX) != (which == "two"):
                continue
            if N == 20000 and layout not in ("contiguous", "transposed"):
                continue
            s = make_sample("fused_add_rms_norm", layout, B, N, dtype,
                            weight_dtype=wdtype)
            out = torch.empty(s.x.shape, dtype=dtype)
            h = torch.empty_like(out)
            rstd = torch.empty(s.x.shape[:-1])
            x2, r2 = s.x.reshape(-1, N), s.residual.reshape(-1, N)
            cfg = rt.config(N)
            assert cfg.one_pass == (which == "one"), (N, cfg)
            rt._fused_add_rms_norm_kernel[(x2.shape[0],)](
                x2, r2, s.weight, out, h, rstd, N, x2.stride(0),
                x2.stride(1), r2.stride(0), r2.stride(1), s.weight.stride(0),
                s.eps, BLOCK=cfg.block, ONE_PASS=cfg.one_pass,
                num_warps=cfg.num_warps)
            assert_matches_formula(s, (out, h, rstd))
            checked += 1
assert checked > 0
print(f"triton interpreter: {checked} samples match the formula")
