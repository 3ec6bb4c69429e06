"""Typed Python entry points; each is one call of the registered op."""

import torch

_ops = torch.ops.rowops


def rms_norm_rows(x: torch.Tensor, eps: float = 1e-6):
    """Normalize x over its last dimension: returns (y, rstd)."""
    return _ops.rms_norm_rows(x, eps)


def fused_add_rms_norm(x: torch.Tensor, residual: torch.Tensor,
                       weight: torch.Tensor, eps: float = 1e-6):
    """h = x + residual; returns (h * rstd * weight, h, rstd)."""
    return _ops.fused_add_rms_norm(x, residual, weight, eps)


def fused_add_rms_norm_(x: torch.Tensor, residual: torch.Tensor,
                        weight: torch.Tensor, eps: float = 1e-6) -> None:
    """In place: residual <- x + residual; x <- normalized output."""
    _ops.fused_add_rms_norm_(x, residual, weight, eps)
