"""The operator library ships the op and nothing of the benchmark's: the
bench's C bridge (routes, tracer, AOTI loader, CUDA timer) lives in its own
libopcost_bridge.so and its Python runners in bench/python/opcost_bench.py.
The library's one instrument is the kernel's profiler scope
(test_profiler_scope.py), which costs a thread-local check when nothing
listens."""
import ctypes
import importlib.util
import subprocess

import rowops


def _exported_symbols(path):
    out = subprocess.run(["nm", "-D", "--defined-only", str(path)],
                         capture_output=True, text=True, check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


def test_library_exports_no_bench_bridge():
    symbols = _exported_symbols(rowops.LIBRARY_PATH)
    assert any("rms_norm_rows" in s for s in symbols)  # nm read the library
    bridge = sorted(s for s in symbols if s.startswith("rowops_bridge_"))
    assert not bridge, bridge[:10]
    lib = ctypes.CDLL(str(rowops.LIBRARY_PATH))
    assert not hasattr(lib, "rowops_bridge_call")


def test_package_has_no_bench_module():
    assert importlib.util.find_spec("rowops._bench") is None
