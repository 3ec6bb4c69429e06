import os, shutil, sys, time, torch
print(torch.__version__, "g++ on PATH:", shutil.which("g++"), "/usr/bin/g++:", os.path.exists("/usr/bin/g++"), "CXX:", os.environ.get("CXX"), flush=True)
class M(torch.nn.Module):
    def __init__(s):
        super().__init__(); s.l = torch.nn.Linear(64, 64)
    def forward(s, x):
        return torch.nn.functional.rms_norm(s.l(x) + x, (64,))
m = M().cuda(); x = torch.randn(8, 64, device="cuda")
ep = torch.export.export(m, (x,))
t = time.time()
try:
    p = torch._inductor.aoti_compile_and_package(ep, package_path=f"/tmp/m{os.getpid()}.pt2")
    print("ok", p, round(time.time() - t, 1), "s", flush=True)
    f = torch._inductor.aoti_load_package(p); print("max err", (f(x) - m(x)).abs().max().item())
except Exception as e:
    s = str(e); i = s.find("Output:")
    print("FAIL", round(time.time() - t, 1), "s"); print(s[i:i + 2500] if i >= 0 else s[-2500:])
