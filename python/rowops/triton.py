"""rowops.triton: fused residual-add + RMSNorm as a Triton kernel, registered
with ``torch.library.triton_op`` as ``rowops_triton::fused_add_rms_norm`` so
that ``torch.compile`` traces into it (Inductor sees the Triton kernel, not
an opaque call).

    import rowops.triton
    out, residual_out, rstd = rowops.triton.fused_add_rms_norm(x, residual,
                                                               weight, 1e-6)

Same contract as ``rowops.fused_add_rms_norm`` (docs/operators.md, Contract): h = x +
residual rounded to x's dtype, rstd = 1/sqrt(mean(h^2) + eps) as float32,
out = h * rstd * weight rounded once, fresh contiguous outputs. The kernel
runs for CUDA tensors of float32, float16 and bfloat16 (weight: x's dtype or
float32); anything else (CPU, float64, empty) runs rowops' aten reference
inside the op, so the op is defined everywhere (and opcheck runs without a
GPU). Rows are viewed as [rows, N] with their own strides; leading
dimensions that do not collapse to one are copied by reshape.

One program per row: N <= 16384 in one pass (the row in registers, block =
next power of two of N), beyond that two passes over blocks of 4096 (h
stored, then read back). Squares are float32 (the contract's dtype for
h^2), their sum float64, rstd rounded once to float32: the bound of the
CUDA kernels holds with room (docs/operators.md, Contract).

Importing this module needs triton; ``import rowops`` does not import it.
"""

from dataclasses import dataclass

import torch
import triton
import triton.language as tl
from torch.library import triton_op, wrap_triton

ONE_PASS_MAX = 16384
TWO_PASS_BLOCK = 4096
KERNEL_DTYPES = (torch.float32, torch.float16, torch.bfloat16)


@dataclass(frozen=True)
class Config:
    block: int
    one_pass: bool
    num_warps: int


def config(n: int) -> Config:
    """The launch the op uses for rows of n elements."""
    if n <= ONE_PASS_MAX:
        block = triton.next_power_of_2(max(n, 1))
        # 8 elements of 16-bit (or float32) per thread up to 16 warps:
        # ptxas's report for sm_90 shows no stack frame for any of these
        # (tests/python/test_triton.py)
        return Config(block, True, max(1, min(16, block // 256)))
    return Config(TWO_PASS_BLOCK, False, 16)


@triton.jit
def _fused_add_rms_norm_kernel(X, R, W, OUT, H, RSTD, N, sxr, sxc, srr, src,
                               sw, eps, BLOCK: tl.constexpr,
                               ONE_PASS: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = X + row * sxr
    r_row = R + row * srr
    out_row = OUT + row * N
    h_row = H + row * N
    cols = tl.arange(0, BLOCK)
    if ONE_PASS:
        m = cols < N
        x = tl.load(x_row + cols * sxc, mask=m, other=0.0)
        r = tl.load(r_row + cols * src, mask=m, other=0.0)
        h = (x.to(tl.float32) + r.to(tl.float32)).to(H.dtype.element_ty)
        tl.store(h_row + cols, h, mask=m)
        hf = h.to(tl.float32)
        ss = tl.sum((hf * hf).to(tl.float64), axis=0)
        rstd = (1.0 / tl.sqrt(ss / N + eps)).to(tl.float32)
        w = tl.load(W + cols * sw, mask=m, other=0.0).to(tl.float32)
        tl.store(out_row + cols, (hf * rstd * w).to(OUT.dtype.element_ty),
                 mask=m)
    else:
        acc = tl.zeros([BLOCK], dtype=tl.float64)
        for start in range(0, N, BLOCK):
            c = start + cols
            m = c < N
            x = tl.load(x_row + c * sxc, mask=m, other=0.0)
            r = tl.load(r_row + c * src, mask=m, other=0.0)
            h = (x.to(tl.float32) + r.to(tl.float32)).to(H.dtype.element_ty)
            tl.store(h_row + c, h, mask=m)
            hf = h.to(tl.float32)
            acc += (hf * hf).to(tl.float64)
        ss = tl.sum(acc, axis=0)
        rstd = (1.0 / tl.sqrt(ss / N + eps)).to(tl.float32)
        for start in range(0, N, BLOCK):
            c = start + cols
            m = c < N
            hf = tl.load(h_row + c, mask=m, other=0.0).to(tl.float32)
            w = tl.load(W + c * sw, mask=m, other=0.0).to(tl.float32)
            tl.store(out_row + c, (hf * rstd * w).to(OUT.dtype.element_ty),
                     mask=m)
    tl.store(RSTD + row, rstd)


def _check(x, residual, weight, eps):
    op = "rowops.triton.fused_add_rms_norm"
    if x.dim() < 1:
        raise ValueError(f"{op}: x must have rank >= 1")
    if residual.shape != x.shape:
        raise ValueError(f"{op}: residual must have x's shape {tuple(x.shape)}"
                         f" (got {tuple(residual.shape)})")
    if weight.shape != (x.shape[-1],):
        raise ValueError(f"{op}: weight must have shape [N] = "
                         f"[{x.shape[-1]}] (got {tuple(weight.shape)})")
    if residual.dtype != x.dtype or weight.dtype not in (x.dtype,
                                                         torch.float32):
        raise TypeError(f"{op}: residual must have x's dtype and weight x's "
                        f"dtype or float32 (x {x.dtype}, residual "
                        f"{residual.dtype}, weight {weight.dtype})")
    if not (residual.device == x.device == weight.device):
        raise ValueError(f"{op}: x, residual and weight must be on one device")
    if not (eps >= 0 and eps != float("inf")):
        raise ValueError(f"{op}: eps must be finite and >= 0 (got {eps})")


@triton_op("rowops_triton::fused_add_rms_norm", mutates_args=())
def _fused_add_rms_norm(x: torch.Tensor, residual: torch.Tensor,
                        weight: torch.Tensor, eps: float = 1e-6
                        ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    _check(x, residual, weight, eps)
    if (x.device.type != "cuda" or x.dtype not in KERNEL_DTYPES
            or x.numel() == 0):
        o, h, r = torch.ops.rowops.fused_add_rms_norm_reference(
            x, residual, weight, eps)
        return (o.clone(memory_format=torch.contiguous_format),
                h.clone(memory_format=torch.contiguous_format),
                r.clone(memory_format=torch.contiguous_format))
    n = x.shape[-1]
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    h = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    rstd = torch.empty(x.shape[:-1], dtype=torch.float32, device=x.device)
    x2 = x.reshape(-1, n)
    r2 = residual.reshape(-1, n)
    cfg = config(n)
    wrap_triton(_fused_add_rms_norm_kernel)[(x2.shape[0],)](
        x2, r2, weight, out, h, rstd, n, x2.stride(0), x2.stride(1),
        r2.stride(0), r2.stride(1), weight.stride(0), eps, BLOCK=cfg.block,
        ONE_PASS=cfg.one_pass, num_warps=cfg.num_warps)
    return out, h, rstd


def fused_add_rms_norm(x, residual, weight, eps=1e-6):
    """(out, residual_out, rstd) from the Triton kernel; the stable Python
    entry (the op is torch.ops.rowops_triton.fused_add_rms_norm)."""
    return torch.ops.rowops_triton.fused_add_rms_norm(x, residual, weight,
                                                      eps)


_TRITON_TYPES = {torch.float32: "fp32", torch.float16: "fp16",
                 torch.bfloat16: "bf16"}


def compile_offline(dtype=torch.bfloat16, n=4096, weight_dtype=None,
                    arch=90):
    """Compiles the kernel for rows of n elements as the op would launch it,
    for CUDA compute capability `arch`, without a device (Triton targets a
    GPUTarget offline). Returns Triton's CompiledKernel (asm["cubin"] is
    the machine code)."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    cfg = config(n)
    t = _TRITON_TYPES[dtype]
    w = _TRITON_TYPES[weight_dtype or dtype]
    signature = {"X": f"*{t}", "R": f"*{t}", "W": f"*{w}", "OUT": f"*{t}",
                 "H": f"*{t}", "RSTD": "*fp32", "N": "i32", "sxr": "i64",
                 "sxc": "i32", "srr": "i64", "src": "i32", "sw": "i32",
                 "eps": "fp32", "BLOCK": "constexpr",
                 "ONE_PASS": "constexpr"}
    source = ASTSource(fn=_fused_add_rms_norm_kernel, signature=signature,
                       constexprs={"BLOCK": cfg.block,
                                   "ONE_PASS": cfg.one_pass})
    return triton.compile(source, target=GPUTarget("cuda", arch, 32),
                          options={"num_warps": cfg.num_warps})


__all__ = ["Config", "compile_offline", "config", "fused_add_rms_norm"]
