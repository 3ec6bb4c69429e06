"""Run by test_triton.py under TRITON_INTERPRET=1 (Triton's CPU
interpreter): the Triton kernel itself, launched as the op launches it, on
CPU tensors of every layout, one pass and two, against the float64
formula. float32 and float16 only: the interpreter rounds float32 ->
bfloat16 toward zero (a GPU rounds to nearest), so bfloat16 is left to the
GPU run."""

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))

import rowops  # noqa: E402,F401
import rowops.triton as rt  # noqa: E402
from samples import LAYOUTS, assert_matches_formula, make_sample  # noqa: E402

checked = 0
for dtype, wdtype in ((torch.float32, None), (torch.float16, None),
                      (torch.float16, torch.float32)):
    for layout in LAYOUTS:
        for B, N in ((5, 64), (3, 33), (2, 20000)):
            if N == 20000 and layout not in ("contiguous", "transposed"):
                continue
            s = make_sample("fused_add_rms_norm", layout, B, N, dtype,
                            weight_dtype=wdtype)
            out = torch.empty(s.x.shape, dtype=dtype)
            h = torch.empty_like(out)
            rstd = torch.empty(s.x.shape[:-1])
            x2, r2 = s.x.reshape(-1, N), s.residual.reshape(-1, N)
            cfg = rt.config(N)
            rt._fused_add_rms_norm_kernel[(x2.shape[0],)](
                x2, r2, s.weight, out, h, rstd, N, x2.stride(0),
                x2.stride(1), r2.stride(0), r2.stride(1), s.weight.stride(0),
                s.eps, BLOCK=cfg.block, ONE_PASS=cfg.one_pass,
                num_warps=cfg.num_warps)
            assert_matches_formula(s, (out, h, rstd))
            checked += 1
print(f"triton interpreter: {checked} samples match the formula")
