"""rowops: fused residual-add + RMSNorm and row normalization as PyTorch
custom operators (namespace ``torch.ops.rowops``).

Importing the package loads the compiled operator library, found at
``$ROWOPS_LIBRARY`` or in the clone's ``build/`` folder.
"""

import os
from pathlib import Path

import torch

_HERE = Path(__file__).resolve().parent


def _library_path() -> Path:
    env = os.environ.get("ROWOPS_LIBRARY")
    if env:
        return Path(env)
    for candidate in (_HERE / "librowops_torch.so",
                      _HERE.parents[1] / "build" / "librowops_torch.so"):
        if candidate.exists():
            return candidate
    raise ImportError(
        "rowops: librowops_torch.so not found; build it with `make build` "
        "or point ROWOPS_LIBRARY at it")


LIBRARY_PATH = _library_path()
torch.ops.load_library(str(LIBRARY_PATH))

from . import boundary, nn, reference  # noqa: E402
from ._dispatch import Dispatch, explain_dispatch  # noqa: E402
from ._ops import fused_add_rms_norm, fused_add_rms_norm_, rms_norm_rows  # noqa: E402

__all__ = [
    "Dispatch",
    "boundary",
    "nn",
    "LIBRARY_PATH",
    "explain_dispatch",
    "fused_add_rms_norm",
    "fused_add_rms_norm_",
    "reference",
    "rms_norm_rows",
]
