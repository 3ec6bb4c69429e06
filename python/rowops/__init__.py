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
from . import _ops  # noqa: E402

_ops._use_fast(LIBRARY_PATH)
try:  # DTensor sharding rules; absent where torch lacks torch.distributed
    from . import distributed  # noqa: E402,F401
except ImportError:
    distributed = None



def empty_cache() -> int:
    """Frees the CPU output blocks rowops keeps for reuse (outputs of 4 KiB
    and more, at most 64 blocks; ROWOPS_CPU_BLOCK_CACHE_MB caps their
    bytes, 1024 by default, 0 turns the cache off). Returns the bytes
    released."""
    return torch.ops.rowops._empty_cpu_cache()


__all__ = [
    "Dispatch",
    "empty_cache",
    "boundary",
    "nn",
    "LIBRARY_PATH",
    "explain_dispatch",
    "fused_add_rms_norm",
    "fused_add_rms_norm_",
    "reference",
    "rms_norm_rows",
]
