"""The output block cache (ops/block_cache.h): outputs of 4 KiB and more
reuse freed blocks instead of a malloc each (and, from 32 MiB, a fresh,
page-faulting mmap each)."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import rowops

# float32 [2048, 4096]: 32 MiB per output, where glibc would mmap.
B, N = 2048, 4096


def _inputs(dtype=torch.float32):
    g = torch.Generator().manual_seed(3)
    x = torch.randn(B, N, generator=g).to(dtype)
    r = torch.randn(B, N, generator=g).to(dtype)
    w = torch.rand(N, generator=g).to(dtype) + 0.5
    return x, r, w


def test_freed_outputs_are_reused_and_results_stay_right():
    rowops.empty_cache()
    x, r, w = _inputs()
    out, h, _ = torch.ops.rowops.fused_add_rms_norm(x, r, w, 1e-6)
    ptrs = {out.data_ptr(), h.data_ptr()}
    del out, h
    assert torch.ops.rowops._cpu_cache_held() >= 2 * B * N * 4
    out2, h2, rstd2 = torch.ops.rowops.fused_add_rms_norm(x, r, w, 1e-6)
    assert {out2.data_ptr(), h2.data_ptr()} == ptrs
    ro, rh, rr = rowops.reference.fused_add_rms_norm(x, r, w, 1e-6)
    torch.testing.assert_close(out2, ro)
    assert torch.equal(h2, rh)
    torch.testing.assert_close(rstd2, rr)
    # what the cache handed out is a normal, resizable CPU tensor
    assert out2.is_contiguous() and out2.device.type == "cpu"
    out2.resize_(B + 1, N)
    assert out2.shape == (B + 1, N)


def test_small_outputs_bypass_the_cache():
    """Outputs under 4 KiB (here 1 KiB) come from PyTorch's allocator."""
    rowops.empty_cache()
    x, r, w = torch.randn(4, 64), torch.randn(4, 64), torch.ones(64)
    out, h, _ = torch.ops.rowops.fused_add_rms_norm(x, r, w, 1e-6)
    del out, h
    assert torch.ops.rowops._cpu_cache_held() == 0


def test_decode_sized_outputs_are_reused():
    """From 4 KiB up: a decode call's outputs (one row of 4096) too."""
    rowops.empty_cache()
    x, r, w = torch.randn(1, 4096), torch.randn(1, 4096), torch.ones(4096)
    out, h, _ = torch.ops.rowops.fused_add_rms_norm(x, r, w, 1e-6)
    ptrs = {out.data_ptr(), h.data_ptr()}
    del out, h
    assert torch.ops.rowops._cpu_cache_held() == 2 * 4096 * 4
    out, h, _ = torch.ops.rowops.fused_add_rms_norm(x, r, w, 1e-6)
    assert {out.data_ptr(), h.data_ptr()} == ptrs


def test_empty_cache_releases_everything():
    x, r, w = _inputs()
    out, h, _ = torch.ops.rowops.fused_add_rms_norm(x, r, w, 1e-6)
    del out, h
    held = torch.ops.rowops._cpu_cache_held()
    assert held > 0
    assert rowops.empty_cache() == held
    assert torch.ops.rowops._cpu_cache_held() == 0


def test_reused_blocks_are_poisoned_under_deterministic_fill():
    """A block from the cache holds the previous call's values; with
    deterministic fill on it must start as NaN like at::empty, so a kernel
    that forgot elements is still caught (tests/python/conftest.py)."""
    rowops.empty_cache()
    x = torch.randn(B, N)
    y, _ = torch.ops.rowops.rms_norm_rows(x, 1e-6)
    ptr = y.data_ptr()
    del y
    old = torch.are_deterministic_algorithms_enabled()
    old_fill = torch.utils.deterministic.fill_uninitialized_memory
    torch.use_deterministic_algorithms(True)
    torch.utils.deterministic.fill_uninitialized_memory = True
    try:
        fresh = torch.ops.rowops._kernel_output(x)
    finally:
        torch.use_deterministic_algorithms(old)
        torch.utils.deterministic.fill_uninitialized_memory = old_fill
    assert fresh.data_ptr() == ptr  # the freed block, reused
    assert fresh.isnan().all()


def test_cap_zero_turns_the_cache_off():
    code = (
        "import sys, torch; sys.path.insert(0, %r); import rowops\n"
        "x = torch.randn(%d, %d)\n"
        "y, _ = torch.ops.rowops.rms_norm_rows(x, 1e-6); del y\n"
        "print(torch.ops.rowops._cpu_cache_held())\n"
        % (str(Path(rowops.__file__).parents[1]), B, N))
    env = dict(os.environ, ROWOPS_CPU_BLOCK_CACHE_MB="0")
    out = subprocess.run([sys.executable, "-c", code], env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "0"


BAD_CAPS = ["garbage", "", "-5", "12abc", " 12", "1e3", str(2**44)]


@pytest.mark.parametrize("value", BAD_CAPS)
def test_bad_cap_values_are_refused(value):
    """Each was taken silently: garbage, '' and -5 as 0 (cache off), 12abc
    as 12, and 2^44 MiB wrapped to 0 bytes."""
    with pytest.raises(RuntimeError,
                       match=r"ROWOPS_CPU_BLOCK_CACHE_MB must be a whole "
                             r"number of MiB from 0 \(cache off\) to "
                             r"17592186044415 \(got '%s'\)" % re.escape(value)):
        torch.ops.rowops._parse_cpu_cache_mb(value)


@pytest.mark.parametrize("value,mb", [("0", 0), ("12", 12), ("0012", 12),
                                      (str(2**44 - 1), 2**44 - 1)])
def test_good_cap_values(value, mb):
    assert torch.ops.rowops._parse_cpu_cache_mb(value) == mb


def test_bad_cap_in_the_environment_fails_the_op_call():
    """Set in the environment, a bad value makes the op raise (naming the
    variable) instead of running with a cap nobody asked for; import and
    the cache's other entry points still work."""
    code = (
        "import sys, torch; sys.path.insert(0, %r); import rowops\n"
        "print(rowops.empty_cache())\n"
        "try:\n"
        "    torch.ops.rowops.rms_norm_rows(torch.randn(%d, %d), 1e-6)\n"
        "except RuntimeError as e:\n"
        "    print(str(e).splitlines()[0])\n"
        % (str(Path(rowops.__file__).parents[1]), B, N))
    env = dict(os.environ, ROWOPS_CPU_BLOCK_CACHE_MB="12abc")
    out = subprocess.run([sys.executable, "-c", code], env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "0", "ROWOPS_CPU_BLOCK_CACHE_MB must be a whole number of MiB from 0 "
        "(cache off) to 17592186044415 (got '12abc')"]
