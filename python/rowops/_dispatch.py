"""explain_dispatch: which implementation the eligibility function picks for
a call, and why. The answer comes from the same C function the kernels'
dispatch uses (kernels/eligibility.c)."""

from typing import NamedTuple

import torch

# The arguments each op takes, in schema order.
_PARAMS = {
    "rms_norm_rows": ("x", "eps"),
    "fused_add_rms_norm": ("x", "residual", "weight", "eps"),
    "fused_add_rms_norm_": ("x", "residual", "weight", "eps"),
    "rms_norm_rows_backward": ("grad_y", "grad_rstd", "x", "rstd"),
    "fused_add_rms_norm_backward": ("grad_out", "grad_residual_out",
                                    "grad_rstd", "residual_out", "weight",
                                    "rstd"),
}

# The tensor whose descriptor the backward's choice reads.
_ROWS_ARG = {"fused_add_rms_norm_backward": "residual_out"}


class Dispatch(NamedTuple):
    impl: str
    reason: str


def _op_name(op) -> str:
    if isinstance(op, torch._ops.OpOverload):
        name = op._schema.name
    elif isinstance(op, torch._ops.OpOverloadPacket):
        name = op._qualified_op_name
    elif isinstance(op, str):
        name = op
    else:
        name = getattr(op, "__name__", repr(op))
    name = name.split("::")[-1]
    if name not in _PARAMS:
        raise ValueError(
            f"explain_dispatch: op must be one of {', '.join(_PARAMS)} or "
            f"the op itself; got {op!r}")
    return name


def explain_dispatch(op, *args, **kwargs) -> Dispatch:
    """explain_dispatch(op, *args) with the arguments you would pass to op;
    returns Dispatch(impl, reason)."""
    name = _op_name(op)
    params = _PARAMS[name]
    if len(args) > len(params):
        raise TypeError(f"explain_dispatch: {name} takes at most "
                        f"{len(params)} arguments ({', '.join(params)})")
    bound = dict(zip(params, args))
    for key, value in kwargs.items():
        if key not in params or key in bound:
            raise TypeError(f"explain_dispatch: unexpected or repeated "
                            f"argument '{key}' for {name}")
        bound[key] = value
    rows_arg = _ROWS_ARG.get(name, "x")
    if rows_arg not in bound:
        raise TypeError(f"explain_dispatch: missing argument '{rows_arg}'")
    text = torch.ops.rowops._explain_dispatch(
        name, bound[rows_arg], bound.get("residual"), bound.get("weight"),
        bound.get("eps", 1e-6))
    impl, _, reason = text.partition(": ")
    return Dispatch(impl, reason)
