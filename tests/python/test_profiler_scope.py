"""The op runs its kernel inside a profiler scope named after the
implementation it picked ("rowops::kernel::<impl>"): torch.profiler and
the bench's attribution pass see the kernel inside the op's own range."""
import torch

import rowops


def _names(fn):
    with torch.profiler.profile(
            activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        fn()
    return [e.key for e in prof.key_averages()]


def test_kernel_scope_inside_the_op():
    x = torch.randn(8, 256)
    r = torch.randn_like(x)
    w = torch.randn(256)
    impl = rowops.explain_dispatch("fused_add_rms_norm", x, r, w).impl
    names = _names(lambda: torch.ops.rowops.fused_add_rms_norm(x, r, w, 1e-6))
    assert "rowops::fused_add_rms_norm" in names
    assert f"rowops::kernel::{impl}" in names, names


def test_strided_kernel_scope():
    x = torch.randn(64, 8).t()  # last-dimension stride 8: strided
    impl = rowops.explain_dispatch("rms_norm_rows", x).impl
    names = _names(lambda: torch.ops.rowops.rms_norm_rows(x, 1e-6))
    assert f"rowops::kernel::{impl}" in names, names


def test_reference_has_no_kernel_scope():
    x = torch.randn(4, 64)
    names = _names(lambda: torch.ops.rowops.rms_norm_rows_reference(x, 1e-6))
    assert not any(n.startswith("rowops::kernel::") for n in names), names
