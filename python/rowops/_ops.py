"""Typed Python entry points; each is one call of the registered op.

Eager calls of the functional ops go through rowops._fast (CPython
functions built next to the operator library: ops/python_fast.cpp) when it
is there: one call into the dispatcher, as torch.add's binding makes,
instead of torch.ops' generic path (about 2 us more per call). Under
torch.compile, for tensor subclasses or torch-function modes (the C side
answers NotImplemented) the call is torch.ops', which handles them."""

import importlib.machinery
import importlib.util
from pathlib import Path

import torch

_ops = torch.ops.rowops


def _load_fast(library: Path):
    """rowops._fast from the operator library's directory, or None."""
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = library.parent / f"_fast{suffix}"
        if path.is_file():
            spec = importlib.util.spec_from_file_location("rowops._fast",
                                                          path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return module
    return None


_fast = None


def _use_fast(library: Path) -> None:
    global _fast
    _fast = _load_fast(library)


def rms_norm_rows(x: torch.Tensor, eps: float = 1e-6):
    """Normalize x over its last dimension: returns (y, rstd)."""
    if _fast is not None and not torch.compiler.is_compiling():
        result = _fast.rms_norm_rows(x, eps)
        if result is not NotImplemented:
            return result
    return _ops.rms_norm_rows(x, eps)


def fused_add_rms_norm(x: torch.Tensor, residual: torch.Tensor,
                       weight: torch.Tensor, eps: float = 1e-6):
    """h = x + residual; returns (h * rstd * weight, h, rstd)."""
    if _fast is not None and not torch.compiler.is_compiling():
        result = _fast.fused_add_rms_norm(x, residual, weight, eps)
        if result is not NotImplemented:
            return result
    return _ops.fused_add_rms_norm(x, residual, weight, eps)


def fused_add_rms_norm_(x: torch.Tensor, residual: torch.Tensor,
                        weight: torch.Tensor, eps: float = 1e-6) -> None:
    """In place: residual <- x + residual; x <- normalized output."""
    if _fast is not None and not torch.compiler.is_compiling():
        if _fast.fused_add_rms_norm_(x, residual, weight, eps) is None:
            return None
    _ops.fused_add_rms_norm_(x, residual, weight, eps)
