"""The rowops ops on DTensor: sharding rules for torch.distributed.tensor.

Registered with torch's public experimental API
(``torch.distributed.tensor.experimental.register_sharding``) when this
module is imported (``import rowops`` imports it where torch.distributed
is available). A rule lists, per mesh dimension, the input placements an op
can run on locally and the placements of its outputs; DTensor moves any
other input placement to the listed one it costs least to reach (its
redistribution) and then calls the op on the local shards.

Rows are every dimension of x but the last; the norm reduces over the last.

  * Shard(d), d a row dimension: each rank normalizes its own rows; no
    communication. out, residual_out and rstd are Shard(d) (rstd has
    x.shape[:-1], so d is the same dimension). weight is Replicate.
  * Replicate: every rank computes the whole op; no communication.
  * Shard(last dimension) (the hidden dimension) or Partial: not computed
    where it lies. DTensor redistributes x (and residual) to Replicate or to
    a row shard, whichever its cost model finds cheaper (small inputs end
    Replicate, larger ones Shard(0)), and the op runs as above. For a
    hidden shard, with W ranks, N hidden and e bytes an element: to
    Replicate, one all-gather per sharded input, (W-1)*N*e bytes per token
    per tensor on the wire ((W-1)/W*N*e received by each rank; 8 KiB for
    W = 2, N = 4096, bfloat16); to Shard(0), an all-to-all of (W-1)/W*N*e
    bytes per token (gloo has no all-to-all: DTensor all-gathers, then
    keeps its rows). A Partial x is reduce-scattered to rows. A partial sum
    of squares and one all-reduce (4 bytes of float32 per token, another in
    the backward) would communicate far less but cannot use the registered
    kernel: the op computes rstd from the whole row, its schema takes no
    external sum of squares, and a sharding rule can only map placements
    to a local call of the same op. Redistribution keeps the fused kernel
    and the contract's results.
  * Backward ops: the gradient inputs follow the row placement. grad_x /
    grad_h are sharded like the rows; grad_weight, a sum over rows, is
    Partial("sum") when rows are sharded (each rank's sum over its own
    rows), reduced by DTensor when it is redistributed (e.g. into a
    Replicate parameter's gradient), and Replicate when the rows are.
  * The in-place ``fused_add_rms_norm_`` writes x and residual, which a
    redistribution would replace by copies: it runs only where x and
    residual have the same placements and each is a row shard or
    Replicate; otherwise the rule raises UnsupportedPlacementError, which
    DTensor passes on as a RuntimeError with the rule's message
    ("rowops.fused_add_rms_norm_: x and residual are written in place
    ..."), before anything is written.

Mixing DTensor and torch.Tensor arguments, or DTensors on different meshes,
raises DTensor's own error. No placement gives a silently wrong result.

:class:`SequenceParallelNorm` is torch's ``SequenceParallel`` style for a
norm module with several inputs (``rowops.nn.FusedAddRMSNorm`` takes x and
residual; torch's style converts only the first input).
"""

import torch
from torch.distributed.tensor import DTensor, Partial, Replicate, Shard
from torch.distributed.tensor.experimental import register_sharding
from torch.distributed.tensor.parallel import SequenceParallel

__all__ = ["SequenceParallelNorm", "UnsupportedPlacementError",
           "row_placements", "supported"]

_ops = torch.ops.rowops


class UnsupportedPlacementError(RuntimeError):
    """A DTensor placement the rowops op cannot run on without a silently
    wrong result (raised only where DTensor cannot redistribute)."""


def _rows(ndim):
    """The row dimensions of an ndim-dimensional x: every one but the last."""
    return range(ndim - 1)


def _normalized(p, ndim):
    return Shard(p.dim % ndim) if isinstance(p, Shard) else p


def supported(placement, ndim):
    """Whether ``placement`` (of an ndim-dimensional x) runs locally:
    Replicate, or Shard of a row dimension."""
    if isinstance(placement, Replicate):
        return True
    return type(placement) is Shard and placement.dim % ndim < ndim - 1


def row_placements(x_placements, ndim):
    """x's placements if each is supported (see :func:`supported`), else
    raises UnsupportedPlacementError naming the placement."""
    for p in x_placements:
        if not supported(p, ndim):
            raise UnsupportedPlacementError(
                f"rowops: placement {p} of a {ndim}-dimensional x is not a "
                f"row shard (Shard(d), d < {ndim - 1}) or Replicate")
    return tuple(_normalized(p, ndim) for p in x_placements)


def _maybe(spec, placement):
    """An optional tensor argument's placement: None where it is None."""
    return None if spec is None else placement


# ---- forward


@register_sharding(_ops.rms_norm_rows.default)
def _rms_norm_rows(x, eps=1e-6):
    # (y, rstd), (x, eps)
    out = [([Replicate(), Replicate()], [Replicate(), None])]
    for d in _rows(x.ndim):
        out.append(([Shard(d), Shard(d)], [Shard(d), None]))
    return out


@register_sharding(_ops.fused_add_rms_norm.default)
def _fused_add_rms_norm(x, residual, weight, eps=1e-6):
    # (out, residual_out, rstd), (x, residual, weight, eps)
    out = [([Replicate()] * 3, [Replicate()] * 3 + [None])]
    for d in _rows(x.ndim):
        out.append(([Shard(d)] * 3, [Shard(d), Shard(d), Replicate(), None]))
    return out


@register_sharding(_ops.fused_add_rms_norm_.default)
def _fused_add_rms_norm_inplace(x, residual, weight, eps=1e-6):
    # (), (x, residual, weight, eps): x and residual are written, so they
    # must already be where the op runs (no redistribution of either).
    xp = tuple(x.placements)
    if tuple(residual.placements) != xp:
        raise UnsupportedPlacementError(
            f"rowops.fused_add_rms_norm_: x and residual are written in "
            f"place and must have the same placements (x {xp}, residual "
            f"{tuple(residual.placements)}); use fused_add_rms_norm")
    try:
        row_placements(xp, x.ndim)
    except UnsupportedPlacementError as e:
        raise UnsupportedPlacementError(
            f"rowops.fused_add_rms_norm_: x and residual are written in "
            f"place, so they cannot be redistributed: {e}; use "
            f"fused_add_rms_norm (which redistributes) or redistribute "
            f"them first") from None
    out = [([], [Replicate(), Replicate(), Replicate(), None])]
    for d in _rows(x.ndim):
        out.append(([], [Shard(d), Shard(d), Replicate(), None]))
    return out


# ---- backward


@register_sharding(_ops.rms_norm_rows_backward.default)
def _rms_norm_rows_backward(grad_y, grad_rstd, x, rstd):
    # grad_x, (grad_y, grad_rstd?, x, rstd)
    out = [([Replicate()], [Replicate(), _maybe(grad_rstd, Replicate()),
                            Replicate(), Replicate()])]
    for d in _rows(x.ndim):
        out.append(([Shard(d)], [Shard(d), _maybe(grad_rstd, Shard(d)),
                                 Shard(d), Shard(d)]))
    return out


@register_sharding(_ops.fused_add_rms_norm_backward.default)
def _fused_add_rms_norm_backward(grad_out, grad_residual_out, grad_rstd,
                                 residual_out, weight, rstd):
    # (grad_h, grad_weight),
    # (grad_out, grad_residual_out?, grad_rstd?, residual_out, weight, rstd)
    def inputs(p):
        return [p, _maybe(grad_residual_out, p), _maybe(grad_rstd, p), p,
                Replicate(), p]
    out = [([Replicate(), Replicate()], inputs(Replicate()))]
    for d in _rows(residual_out.ndim):
        # grad_weight = sum over rows: each rank's rows give a partial sum
        out.append(([Shard(d), Partial("sum")], inputs(Shard(d))))
    return out


# ---- tensor parallelism


class SequenceParallelNorm(SequenceParallel):
    """``SequenceParallel`` for a norm module taking several tensors (e.g.
    ``FusedAddRMSNorm(x, residual)``): parameters replicated, every tensor
    input sharded on the sequence dimension (a torch.Tensor is taken as the
    local shard, a DTensor is redistributed if it is elsewhere), each
    output a DTensor sharded on the sequence dimension (local tensors with
    ``use_local_output=True``). The norm itself runs without
    communication."""

    @staticmethod
    def _prepare_input_fn(sequence_sharding, mod, inputs, device_mesh):
        def one(t):
            if isinstance(t, DTensor):
                return t if t.placements == sequence_sharding else \
                    t.redistribute(placements=sequence_sharding)
            if isinstance(t, torch.Tensor):
                return DTensor.from_local(t, device_mesh, sequence_sharding,
                                          run_check=False)
            return t
        return tuple(one(t) for t in inputs)

    @staticmethod
    def _prepare_output_fn(use_local_output, mod, outputs, device_mesh):
        if not use_local_output:
            return outputs
        if isinstance(outputs, DTensor):
            return outputs.to_local()
        return type(outputs)(o.to_local() if isinstance(o, DTensor) else o
                             for o in outputs)
