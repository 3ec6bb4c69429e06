import os
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import rowops  # noqa: E402,F401  (loads the operator library)

DEVICES = ["cpu", "cuda"]


def device_param(device):
    """cuda parameters skip visibly where no GPU exists."""
    return pytest.param(device, marks=pytest.mark.skipif(
        device == "cuda" and not torch.cuda.is_available(),
        reason="no CUDA device on this machine"))


@pytest.fixture
def poisoned_outputs():
    """at::empty fills fresh float tensors with NaN while this is active, so
    an output element a kernel forgets to write fails the comparison."""
    old = torch.are_deterministic_algorithms_enabled()
    old_fill = torch.utils.deterministic.fill_uninitialized_memory
    torch.use_deterministic_algorithms(True)
    torch.utils.deterministic.fill_uninitialized_memory = True
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(old)
        torch.utils.deterministic.fill_uninitialized_memory = old_fill
