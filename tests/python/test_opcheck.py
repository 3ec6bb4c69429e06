"""torch.library.opcheck on one sample per (op, layout, dtype).

Deferred to the training-support issue: requires_grad samples and the
test_autograd_registration utility (no backward is registered yet)."""

import pytest
import torch

from conftest import device_param
from samples import samples

UTILS = ("test_schema", "test_faketensor", "test_aot_dispatch_dynamic")
QUICK = samples("cpu", quick=True)


def _inplace_args(sample):
    x, residual, weight, eps = sample.clone_args()
    return (x, residual, weight, eps)


@pytest.mark.parametrize("sample", QUICK, ids=lambda s: s.name)
def test_opcheck_functional(sample):
    op = getattr(torch.ops.rowops, sample.op).default
    torch.library.opcheck(op, sample.args, test_utils=UTILS)


@pytest.mark.parametrize("sample", [s for s in QUICK
                                    if s.op == "fused_add_rms_norm"
                                    and "expanded" not in s.tags],
                         ids=lambda s: s.name)
def test_opcheck_inplace(sample):
    torch.library.opcheck(torch.ops.rowops.fused_add_rms_norm_.default,
                          _inplace_args(sample), test_utils=UTILS)


@pytest.mark.parametrize("device", [device_param("cuda")])
def test_opcheck_cuda(device):
    for sample in samples(device, quick=True):
        op = getattr(torch.ops.rowops, sample.op).default
        torch.library.opcheck(op, sample.args, test_utils=UTILS)
