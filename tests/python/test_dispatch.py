"""The eligibility function at every boundary: for each fast-path condition,
inputs just inside and just outside it, asserting which implementation ran
(not only which explain_dispatch predicts) and that the result matches the
float64 formula. Then the fast kernels against the strided kernel and the
reference over the shared samples, and with CPU features forced off."""

import pytest
import torch

import rowops
from samples import (TOL, Sample, assert_matches_formula, formula, samples)

ops = torch.ops.rowops
AVX2, FMA, F16C, AVX512F, AVX512BW = 1, 2, 4, 8, 16
HALF_RATE = 32  # kernels/cpu_features.h: 512-bit operations in two halves
FEATURES = ops._cpu_features()
HAS_FAST_CPU = FEATURES & (AVX2 | FMA | F16C) == AVX2 | FMA | F16C
HAS_512 = HAS_FAST_CPU and FEATURES & (AVX512F | AVX512BW) == (AVX512F
                                                               | AVX512BW)


def fast_of(dtype, features=FEATURES):
    """The fast kernel a small call gets (never the streaming form):
    AVX-512 where the CPU has it, but the AVX2 kernel on a core that runs
    512-bit operations in two halves except for bfloat16 with outputs up
    to 1 MiB (kernels/rowops.h); AVX2; or portable."""
    if features & (AVX2 | FMA | F16C) != AVX2 | FMA | F16C:
        return "cpu_fast_portable"
    wide = features & (AVX512F | AVX512BW) == AVX512F | AVX512BW
    if wide and not (features & HALF_RATE and dtype != torch.bfloat16):
        return "cpu_fast_avx512"
    return "cpu_fast_avx2"


# The float32 one, which most cases below use.
FAST = fast_of(torch.float32)
COLMAJOR_WHY = "column-major" if HAS_FAST_CPU else "last-dimension stride"
# kernels/rowops.h: ROWOPS_COLMAJOR_NARROW_PICK_F32, _NARROW_MAX (16 bits on
# a half-rate core), _NARROW_PICK_16_FULL_RATE, _FULL_RATE_ROWS
NARROW_PICK = {torch.float32: 12, torch.float16: 16, torch.bfloat16: 16}
NARROW_PICK_16_FULL_RATE = {"fused_add_rms_norm": 5, "rms_norm_rows": 4}
# kernels/rowops.h: ROWOPS_COLMAJOR_AVX512_MAX_F32, _FROM_F32, _MAX_16,
# _FROM_16: the strides that go to the AVX2 tiles on a half-rate core (16
# bits: the fused op)
AVX2_MID = {torch.float32: (33, 383), torch.float16: (128, 767),
            torch.bfloat16: (128, 767)}
# kernels/rowops.h: ROWOPS_COLMAJOR_COPY_PICK_16, _ROWS (no AVX-512, 16
# bits, outputs and weight as the AVX2 row kernel wants them)
COPY_PICK_16 = {"fused_add_rms_norm": 5, "rms_norm_rows": 10}


def colmajor(dtype, column_stride, op="fused_add_rms_norm",
             features=FEATURES, copy_ok=True):
    """The kernel of transposed (column-major) rows: the short-column one
    (AVX-512) for columns up to 12 float32 elements apart, or in 16 bits
    up to 16 on a core that runs 512-bit operations in two halves and 5
    (fused) or 4 (rms_norm_rows) on one with full-width units; else the
    AVX-512 wide tiles, but on a half-rate core the AVX2 wide-tile one at
    mid strides (float32 33-383; the fused op in 16 bits 128-767);
    without AVX-512, in 16 bits, rows gathered for the AVX2 row kernel up
    to 5 (fused) or 10 (rms_norm_rows) apart where copy_ok (aligned
    outputs and weight, a row within 32 KiB), else the AVX2 tiles;
    strided without AVX2+FMA+F16C."""
    if features & (AVX2 | FMA | F16C) != AVX2 | FMA | F16C:
        return "cpu_strided"
    wide = features & (AVX512F | AVX512BW) == AVX512F | AVX512BW
    if (not wide and dtype != torch.float32 and copy_ok
            and column_stride <= COPY_PICK_16[op]):
        return "cpu_colmajor_copy"
    half = bool(features & HALF_RATE)
    pick = (NARROW_PICK[dtype] if dtype == torch.float32 or half
            else NARROW_PICK_16_FULL_RATE[op])
    if wide and column_stride <= pick:
        return "cpu_colmajor_narrow"
    lo, hi = AVX2_MID[dtype]
    mid = half and lo <= column_stride <= hi and (dtype == torch.float32
                                                  or op == "fused_add_rms_norm")
    if wide and not mid:
        return "cpu_colmajor_avx512"
    return "cpu_colmajor_avx2"


LIMIT = {torch.float32: 32768, torch.float16: 65536, torch.bfloat16: 65536}


def run(sample):
    """Runs the sample's op; returns (result, implementation that ran)."""
    result = getattr(ops, sample.op)(*sample.args)
    return result, ops._last_dispatch()


def fused(x, residual=None, weight=None, name="case"):
    gen = torch.Generator().manual_seed(x.numel())
    if residual is None:
        residual = torch.empty_like(x).uniform_(-2, 2, generator=gen)
    if weight is None:
        weight = torch.empty(x.shape[-1], dtype=x.dtype).uniform_(
            0.5, 1.5, generator=gen)
    return Sample(name, "fused_add_rms_norm", x, residual, weight)


def values(*shape, dtype=torch.float32):
    gen = torch.Generator().manual_seed(sum(shape))
    return torch.empty(shape, dtype=torch.float64).uniform_(
        0.1, 2, generator=gen).to(dtype)


def aligned(buf):
    assert buf.data_ptr() % 32 == 0, "PyTorch's CPU allocator aligns to 64"
    return buf


def _boundary_cases():
    """(condition, sample, expected implementation, text in the reason)."""
    cases = []
    for dt in (torch.float32, torch.float16, torch.bfloat16):
        name = str(dt)[6:]
        cases.append((f"dtype {name}", fused(values(4, 64, dtype=dt)),
                      fast_of(dt), name))
        n = LIMIT[dt]
        cases.append((f"N = {name} limit {n}",
                      fused(values(2, n, dtype=dt)), fast_of(dt),
                      f"N = {n}"))
        cases.append((f"N = {name} limit + 1",
                      fused(values(2, n + 1, dtype=dt)), "cpu_strided",
                      f"N = {n + 1} outside"))
        es = torch.empty(0, dtype=dt).element_size()
        buf = aligned(values(4 * 64 + 32, dtype=dt))
        cases.append((f"{name} pointer at 32 bytes",
                      fused(buf[32 // es:32 // es + 256].view(4, 64)),
                      fast_of(dt), "aligned"))
        cases.append((f"{name} pointer one element off",
                      fused(buf[1:257].view(4, 64)), "cpu_strided",
                      f"x data pointer is {es} bytes past"))
        for extra, want, why in ((0, fast_of(dt), "aligned"),
                                 (1, "cpu_strided", "is not a multiple of 32"),
                                 (32 // es, fast_of(dt), "aligned")):
            rows = aligned(values(4, 64 + extra, dtype=dt))[:, :64]
            cases.append((f"{name} row stride N + {extra}", fused(rows), want,
                          why))
    cases.append(("dtype float64", fused(values(4, 64, dtype=torch.float64)),
                  "cpu_strided", "float64 has no fast kernel"))
    cases.append(("N = 1, one row", fused(values(1, 1)), FAST, "N = 1"))
    cases.append(("N = 1, three rows (4-byte row stride)",
                  fused(values(3, 1)), "cpu_strided", "(4 bytes) is not"))
    cases.append(("N = 0", fused(values(3, 0)), "cpu_strided", "N = 0"))
    x = values(4, 64)
    cases.append(("x last stride 2", fused(values(4, 128)[:, ::2]),
                  "cpu_strided", "x has last-dimension stride 2"))
    cases.append(("x transposed, residual row-major",
                  fused(values(64, 4).t(), residual=values(4, 64)),
                  "cpu_strided", "x has last-dimension stride 4"))
    for dt in (torch.float32, torch.float16, torch.bfloat16):
        name = str(dt)[6:]
        cases.append((f"x and residual transposed {name}",
                      fused(values(64, 4, dtype=dt).t(),
                            residual=values(64, 4, dtype=dt).t() * 0.5),
                      colmajor(dt, 4), COLMAJOR_WHY))
        cases.append((f"x and residual transposed, columns B + 3 apart {name}",
                      fused(values(64, 7, dtype=dt)[:, :4].t(),
                            residual=values(64, 7, dtype=dt)[:, 1:5].t()),
                      colmajor(dt, 7), COLMAJOR_WHY))
        for cols in (5, 6, 12, 13, 16, 17, 32, 33, 127, 128, 383, 384, 767,
                     768):
            cases.append((f"x and residual transposed, {cols} columns {name}",
                          fused(values(64, cols, dtype=dt).t(),
                                residual=values(64, cols, dtype=dt).t()),
                          colmajor(dt, cols), COLMAJOR_WHY))
    cases.append(("x and residual transposed, different column strides",
                  fused(values(64, 7)[:, :4].t(),
                        residual=values(64, 4).t()),
                  "cpu_strided", "x has last-dimension stride 7"))
    cases.append(("x and residual transposed, 3-D",
                  fused(values(64, 2, 3).permute(1, 2, 0),
                        residual=values(64, 2, 3).permute(1, 2, 0)),
                  "cpu_strided", "x has last-dimension stride 6"))
    cases.append(("x and residual transposed, float64",
                  fused(values(64, 4, dtype=torch.float64).t()),
                  "cpu_strided", "float64 has no fast kernel"))
    s = Sample("rms_norm_rows transposed", "rms_norm_rows",
               values(64, 4).t())
    cases.append(("rms_norm_rows transposed", s, colmajor(torch.float32, 4),
                  COLMAJOR_WHY))
    s = Sample("rms_norm_rows transposed, 17 columns bfloat16",
               "rms_norm_rows", values(64, 17, dtype=torch.bfloat16).t())
    cases.append(("rms_norm_rows transposed, 17 columns bfloat16", s,
                  colmajor(torch.bfloat16, 17, "rms_norm_rows"),
                  COLMAJOR_WHY))
    for dt, cols in ((torch.bfloat16, 4), (torch.bfloat16, 5),
                     (torch.bfloat16, 200), (torch.float32, 32),
                     (torch.float32, 64), (torch.float32, 384)):
        name = f"rms_norm_rows transposed, {cols} columns {str(dt)[6:]}"
        s = Sample(name, "rms_norm_rows", values(64, cols, dtype=dt).t())
        cases.append((name, s, colmajor(dt, cols, "rms_norm_rows"),
                      COLMAJOR_WHY))
    cases.append(("residual transposed",
                  fused(x, residual=values(64, 4).t()), "cpu_strided",
                  "residual has last-dimension stride 4"))
    cases.append(("weight stride 2", fused(x, weight=values(128)[::2]),
                  "cpu_strided", "weight has last-dimension stride 2"))
    cases.append(("weight pointer one element off",
                  fused(x, weight=values(65)[1:]), "cpu_strided",
                  "weight data pointer is 4 bytes past"))
    cases.append(("weight float32 with bfloat16 x",
                  fused(values(4, 64, dtype=torch.bfloat16),
                        weight=values(64)), fast_of(torch.bfloat16),
                  "bfloat16"))
    cases.append(("x expanded (row stride 0)",
                  fused(values(1, 64).expand(4, 64)), "cpu_strided",
                  "x row stride 0 < N = 64"))
    cases.append(("3-D, leading dims swapped",
                  fused(values(2, 3, 64).transpose(0, 1)), FAST, "aligned"))
    s = Sample("rms_norm_rows contiguous", "rms_norm_rows", values(4, 64))
    cases.append(("rms_norm_rows contiguous", s, FAST, "aligned"))
    s = Sample("rms_norm_rows misaligned", "rms_norm_rows",
               values(257)[1:].view(4, 64))
    cases.append(("rms_norm_rows misaligned", s, "cpu_strided",
                  "x data pointer is 4 bytes past"))
    return cases


CASES = _boundary_cases()


@pytest.mark.parametrize("condition,sample,want,why", CASES,
                         ids=[c[0] for c in CASES])
def test_boundary(condition, sample, want, why, poisoned_outputs):
    explained = rowops.explain_dispatch(sample.op, *sample.args)
    assert explained.impl == want and why in explained.reason, explained
    result, ran = run(sample)
    assert ran == want
    assert_matches_formula(sample, result)


@pytest.mark.parametrize("mask,name", [(0, "none"), (AVX2 | FMA, "AVX2+FMA"),
                                       (AVX2 | F16C, "AVX2+F16C")])
def test_missing_cpu_feature_uses_portable_kernel(mask, name, poisoned_outputs):
    previous = ops._force_cpu_features(mask)
    try:
        for dt, shape in ((torch.float32, (1, 100)), (torch.float16, (4, 112)),
                          (torch.bfloat16, (3, 48))):
            sample = fused(values(*shape, dtype=dt))
            d = rowops.explain_dispatch(sample.op, *sample.args)
            assert d.impl == "cpu_fast_portable"
            assert f"(has {name})" in d.reason, d.reason
            result, ran = run(sample)
            assert ran == "cpu_fast_portable"
            assert_matches_formula(sample, result)
    finally:
        ops._force_cpu_features(previous)
    assert rowops.explain_dispatch("rms_norm_rows",
                                   torch.ones(1, 8)).impl == FAST


@pytest.mark.skipif(not HAS_FAST_CPU, reason="no AVX2+FMA+F16C here")
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("features, want", [
    (AVX2 | FMA, {torch.float32: "cpu_strided",
                  torch.bfloat16: "cpu_strided"}),
    (AVX2 | FMA | F16C, {torch.float32: "cpu_colmajor_avx2",
                         torch.bfloat16: "cpu_colmajor_copy"}),
], ids=["no F16C", "AVX2 only"])
def test_transposed_on_fewer_cpu_features(poisoned_outputs, dtype, features,
                                          want):
    """CPU features masked off: without F16C a short transposed call runs
    strided; an AVX2-only host (AVX-512 masked off) never gets the
    short-column kernel: in 16 bits its rows are gathered for the AVX2 row
    kernel, in float32 the AVX2 wide-tile kernel runs."""
    want = want[dtype]
    assert colmajor(dtype, 4, features=features) == want
    sample = fused(values(64, 4, dtype=dtype).t(),
                   residual=values(64, 4, dtype=dtype).t())
    assert (rowops.explain_dispatch(sample.op, *sample.args).impl
            == colmajor(dtype, 4))
    previous = ops._force_cpu_features(features)
    try:
        result, ran = run(sample)
        assert ran == want
        assert_matches_formula(sample, result)
    finally:
        ops._force_cpu_features(previous)


def ran_at_rate(sample, mask, want, halves):
    """With the CPU features forced to mask (the 512-bit rate, or AVX-512
    masked off): explain_dispatch names want,
    its reason says "two halves" exactly when halves (the half-rate rule
    chose), the op runs want, and its result is the formula's."""
    previous = ops._force_cpu_features(mask)
    try:
        d = rowops.explain_dispatch(sample.op, *sample.args)
        assert d.impl == want, d
        assert ("two halves" in d.reason) == halves, d
        result, ran = run(sample)
        assert ran == want
        assert_matches_formula(sample, result)
    finally:
        ops._force_cpu_features(previous)


@pytest.mark.skipif(not HAS_512, reason="no AVX-512 here: no choice to move")
@pytest.mark.parametrize("half", [False, True], ids=["full rate", "half rate"])
@pytest.mark.parametrize("dtype,B", [
    (torch.float32, 4), (torch.float16, 64), (torch.bfloat16, 64),
    (torch.bfloat16, 65)], ids=["float32", "float16", "bfloat16 1 MiB out",
                                "bfloat16 a row more"])
def test_half_rate_core_takes_avx2_in_the_cache(poisoned_outputs, half, dtype,
                                                B):
    """On a core that runs 512-bit operations in two halves (AMD family 25)
    a call within the cache runs the AVX2 kernel, but bfloat16 with outputs
    up to 1 MiB (64 rows of 4096 x 2 outputs x 2 bytes); elsewhere the
    AVX-512 one. The property forced both ways on any AVX-512 CPU."""
    mask = FEATURES | HALF_RATE if half else FEATURES & ~HALF_RATE
    want = ("cpu_fast_avx2" if half and (dtype != torch.bfloat16 or B > 64)
            else "cpu_fast_avx512")
    sample = fused(values(B, 4096, dtype=dtype))
    ran_at_rate(sample, mask, want, halves=want == "cpu_fast_avx2")


@pytest.mark.skipif(not HAS_512, reason="no AVX-512 here: no choice to move")
@pytest.mark.parametrize("half", [False, True], ids=["full rate", "half rate"])
@pytest.mark.parametrize("op,dtype,cols,full,halved", [
    ("fused_add_rms_norm", torch.bfloat16, 5, "narrow", "narrow"),
    ("fused_add_rms_norm", torch.bfloat16, 6, "avx512", "narrow"),
    ("fused_add_rms_norm", torch.float16, 10, "avx512", "narrow"),
    ("rms_norm_rows", torch.bfloat16, 4, "narrow", "narrow"),
    ("rms_norm_rows", torch.float16, 5, "avx512", "narrow"),
    ("fused_add_rms_norm", torch.float32, 12, "narrow", "narrow"),
    ("fused_add_rms_norm", torch.float32, 64, "avx512", "avx2"),
    ("rms_norm_rows", torch.float32, 101, "avx512", "avx2"),
    ("fused_add_rms_norm", torch.bfloat16, 405, "avx512", "avx2"),
    ("rms_norm_rows", torch.bfloat16, 405, "avx512", "avx512")])
def test_transposed_pick_follows_the_512_bit_rate(poisoned_outputs, half, op,
                                                  dtype, cols, full, halved):
    """Column-major calls: the narrow kernel in 16 bits to S = 16 and the
    AVX2 tiles at mid strides on a core that runs 512-bit operations in
    two halves (Zen 4's measurements); with full-width units (Zen 5) the
    narrow kernel to S = 5 (fused) or 4 (rms_norm_rows) in 16 bits and the
    AVX-512 tiles at every wider stride. The rate forced both ways on any
    AVX-512 CPU; the kernel that ran is the one named, its result the
    formula's."""
    mask = FEATURES | HALF_RATE if half else FEATURES & ~HALF_RATE
    want = "cpu_colmajor_" + (halved if half else full)
    assert colmajor(dtype, cols, op, mask) == want  # the model above agrees
    x = values(64, cols, dtype=dtype)[:, :min(cols, 8)].t()
    if op == "fused_add_rms_norm":
        sample = fused(x, residual=values(64, cols, dtype=dtype)[
            :, :min(cols, 8)].t())
    else:
        sample = Sample(f"rms_norm_rows {cols}", op, x)
    ran_at_rate(sample, mask, want, halves=want == "cpu_colmajor_avx2")


def test_features_and_the_pick_agree():
    """The expectations above come from the CPU's features; the small
    float32 call's kernel follows them."""
    assert rowops.explain_dispatch("rms_norm_rows",
                                   torch.ones(1, 8)).impl == FAST


def test_inplace_goes_through_the_same_decision():
    x, r, w = values(4, 64), values(4, 64) * 0.5, values(64)
    h = x + r
    expected = formula(Sample("s", "fused_add_rms_norm", x, r, w))[0]
    rowops.fused_add_rms_norm_(x, r, w)
    assert ops._last_dispatch() == FAST
    torch.testing.assert_close(r, h, rtol=0, atol=0)
    torch.testing.assert_close(x.double(), expected, rtol=1e-5, atol=1e-6)
    x2 = values(64, 4).t()
    r2 = values(4, 64)
    rowops.fused_add_rms_norm_(x2, r2, w)
    assert ops._last_dispatch() == "cpu_strided"


def _strided_copy(t):
    """The same values with last-dimension stride 2: never fast-eligible."""
    if t is None:
        return None
    wide = torch.empty(*t.shape[:-1], 2 * t.shape[-1], dtype=t.dtype)
    out = wide[..., ::2]
    return out.copy_(t)


SHARED = [s for s in samples("cpu") if s.x.dtype != torch.float64]


@pytest.mark.parametrize("sample", SHARED, ids=lambda s: s.name)
@pytest.mark.parametrize("features", ["detected", "none"])
def test_fast_against_strided_and_reference(sample, features,
                                            poisoned_outputs):
    previous = ops._force_cpu_features(0 if features == "none" else -1)
    try:
        default, ran = run(sample)
    finally:
        ops._force_cpu_features(previous)
    strided_sample = Sample(sample.name, sample.op, _strided_copy(sample.x),
                            _strided_copy(sample.residual),
                            sample.weight, sample.eps)
    strided, ran_strided = run(strided_sample)
    assert ran_strided == "cpu_strided"
    reference = getattr(ops, sample.op + "_reference")(*sample.args)
    for result in (default, strided, reference):
        assert_matches_formula(sample, result)
    rtol, atol = TOL[sample.x.dtype]
    for a, b in zip(default, strided):
        torch.testing.assert_close(a, b, rtol=2 * rtol, atol=2 * atol,
                                   equal_nan=True)
    if features == "none" and ran.startswith("cpu_fast"):
        assert ran == "cpu_fast_portable"


def test_shared_samples_reach_the_fast_path():
    """The comparison above is not vacuous: most contiguous samples run fast."""
    ran = set()
    for s in SHARED:
        run(s)
        ran.add(ops._last_dispatch())
    assert {FAST, "cpu_strided"} <= ran


def _capped(value, code):
    """code run in a fresh interpreter with ROWOPS_CPU_CAPABILITY=value
    (read once per process); its stdout, stripped."""
    import os
    import subprocess
    import sys
    from pathlib import Path
    env = dict(os.environ, ROWOPS_CPU_CAPABILITY=value)
    prelude = ("import sys, torch; sys.path.insert(0, %r); import rowops\n"
               "ops = torch.ops.rowops\n"
               % str(Path(rowops.__file__).parents[1]))
    out = subprocess.run([sys.executable, "-c", prelude + code], env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


@pytest.mark.skipif(not HAS_FAST_CPU, reason="the CPU lacks AVX2+FMA+F16C: "
                    "an avx2 cap leaves it as it is")
def test_avx2_capability_runs_the_avx2_kernels():
    """ROWOPS_CPU_CAPABILITY=avx2: the op sees no AVX-512 and runs what an
    AVX2-only host runs, contiguous and transposed, and says why."""
    got = _capped("avx2", (
        "x = torch.randn(64, 4096, dtype=torch.bfloat16)\n"
        "r = torch.randn_like(x); w = torch.ones(4096, dtype=x.dtype)\n"
        "ops.fused_add_rms_norm(x, r, w, 1e-6)\n"
        "a = ops._last_dispatch()\n"
        "xt = torch.randn(4096, 64, dtype=x.dtype).t()\n"
        "ops.rms_norm_rows(xt, 1e-6)\n"
        "b = ops._last_dispatch()\n"
        "why = rowops.explain_dispatch('fused_add_rms_norm', x, r, w, 1e-6)\n"
        "print(ops._cpu_features(), a, b, '[ROWOPS_CPU_CAPABILITY=avx2]' "
        "in why.reason)\n"))
    features, contiguous, transposed, says = got.split()
    assert int(features) & (AVX512F | AVX512BW | HALF_RATE) == 0
    assert int(features) & (AVX2 | FMA | F16C) == AVX2 | FMA | F16C
    assert contiguous == "cpu_fast_avx2"
    assert transposed == "cpu_colmajor_avx2"
    assert says == "True"


def test_default_capability_runs_the_portable_kernel():
    got = _capped("default", (
        "x = torch.randn(8, 256)\n"
        "ops.rms_norm_rows(x, 1e-6)\n"
        "print(ops._cpu_features(), ops._last_dispatch())\n"))
    features, impl = got.split()
    assert int(features) == 0
    assert impl == "cpu_fast_portable"


def test_unknown_capability_is_refused():
    """A name the kernels do not apply: every CPU call raises, naming the
    variable and the names it takes."""
    got = _capped("avx3", (
        "x = torch.randn(8, 256)\n"
        "try:\n"
        "    ops.rms_norm_rows(x, 1e-6)\n"
        "    print('ran')\n"
        "except RuntimeError as e:\n"
        "    print(str(e).splitlines()[0])\n"))
    assert got == ("ROWOPS_CPU_CAPABILITY must be avx512, avx2 or default, "
                   "or unset (got 'avx3')")


@pytest.mark.skipif(not HAS_FAST_CPU, reason="no AVX2+FMA+F16C here")
@pytest.mark.parametrize("op, stride", [("fused_add_rms_norm", 5),
                                        ("fused_add_rms_norm", 6),
                                        ("rms_norm_rows", 10),
                                        ("rms_norm_rows", 11)])
def test_gathered_rows_at_their_limit(poisoned_outputs, op, stride):
    """Without AVX-512, 16-bit columns up to 5 (fused) or 10 (rms_norm_rows)
    apart are gathered into rows (cpu_colmajor_copy); one further apart,
    the AVX2 tiles. The result is the formula's either way."""
    x = values(64, stride, dtype=torch.bfloat16).t()
    sample = (fused(x, residual=values(64, stride, dtype=torch.bfloat16).t())
              if op == "fused_add_rms_norm"
              else Sample("rows", "rms_norm_rows", x))
    want = ("cpu_colmajor_copy" if stride <= COPY_PICK_16[op]
            else "cpu_colmajor_avx2")
    assert colmajor(torch.bfloat16, stride, op=op,
                    features=AVX2 | FMA | F16C) == want
    ran_at_rate(sample, AVX2 | FMA | F16C, want, halves=False)


@pytest.mark.skipif(not HAS_FAST_CPU, reason="no AVX2+FMA+F16C here")
@pytest.mark.parametrize("case", ["misaligned weight", "row beyond 32 KiB"])
def test_gathered_rows_need_the_row_kernels_layout(poisoned_outputs, case):
    """cpu_colmajor_copy hands its rows to the AVX2 row kernel, which wants
    32-byte aligned rows: a weight two bytes off a boundary, or a row
    longer than its stack batch (20000 bfloat16 elements), takes the AVX2
    tiles instead, with the formula's result."""
    n = 20000 if case == "row beyond 32 KiB" else 64
    x = values(n, 3, dtype=torch.bfloat16).t()
    r = values(n, 3, dtype=torch.bfloat16).t()
    w = values(n + 1, dtype=torch.bfloat16)
    w = w[1:] if case == "misaligned weight" else w[:n]
    assert (w.data_ptr() % 32 != 0) == (case == "misaligned weight")
    sample = fused(x, residual=r, weight=w)
    want = colmajor(torch.bfloat16, 3, features=AVX2 | FMA | F16C,
                    copy_ok=False)
    assert want == "cpu_colmajor_avx2"
    ran_at_rate(sample, AVX2 | FMA | F16C, want, halves=False)
