"""The reference implementation: the contract written once as an aten
composite in ops/reference.cpp, reached through the dispatcher. The fallback
of the fast ops and the benchmark's reference path call the same op."""

import torch

_ops = torch.ops.rowops


def rms_norm_rows(x: torch.Tensor, eps: float = 1e-6):
    return _ops.rms_norm_rows_reference(x, eps)


def fused_add_rms_norm(x: torch.Tensor, residual: torch.Tensor,
                       weight: torch.Tensor, eps: float = 1e-6):
    return _ops.fused_add_rms_norm_reference(x, residual, weight, eps)
