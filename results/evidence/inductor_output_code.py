# AOT ID: ['1_forward']
from ctypes import c_void_p, c_long, c_int
import torch
import math
import random
import os
import tempfile
from math import inf, nan
from cmath import nanj
from torch._inductor.hooks import run_intermediate_hooks
from torch._inductor.utils import maybe_profile
from torch._inductor.codegen.memory_planning import _align as align
from torch import device, empty_strided
from torch._inductor.async_compile import AsyncCompile
from torch._inductor.select_algorithm import extern_kernels
from torch._inductor.runtime.runtime_utils import assert_tensor_metadata

aten = torch.ops.aten
inductor_ops = torch.ops.inductor
_quantized = torch.ops._quantized
assert_size_stride = torch._C._dynamo.guards.assert_size_stride
assert_size_stride_grouped = torch._C._dynamo.guards.assert_size_stride_grouped
assert_alignment = torch._C._dynamo.guards.assert_alignment
empty_strided_cpu = torch._C._dynamo.guards._empty_strided_cpu
empty_strided_cpu_pinned = torch._C._dynamo.guards._empty_strided_cpu_pinned
empty_strided_cuda = torch._C._dynamo.guards._empty_strided_cuda
empty_strided_xpu = torch._C._dynamo.guards._empty_strided_xpu
empty_strided_mtia = torch._C._dynamo.guards._empty_strided_mtia
reinterpret_tensor = torch._C._dynamo.guards._reinterpret_tensor
alloc_from_pool = torch.ops.inductor._alloc_from_pool
async_compile = AsyncCompile()
empty_strided_p2p = torch._C._distributed_c10d._SymmetricMemory.empty_strided_p2p


async_compile.wait(globals())
del async_compile

class Runner:
    def __init__(self, partitions):
        self.partitions = partitions

    def recursively_apply_fns(self, fns):
        new_callables = []
        for fn, c in zip(fns, self.partitions):
            new_callables.append(fn(c))
        self.partitions = new_callables

    def call(self, args):
        primals_1, primals_2, primals_3, primals_4, primals_5 = args
        args.clear()
        assert_size_stride_grouped((primals_2, primals_1), ((8, 256), (4096, 256)), ((256, 1), (256, 1)), 'input')
        buf0 = empty_strided_cpu((8, 4096), (4096, 1), torch.bfloat16)
        # Topologically Sorted Source Nodes: [x], Original ATen: [aten.t, aten.mm]
        extern_kernels.mm(primals_2, reinterpret_tensor(primals_1, (256, 4096), (1, 256), 0), out=buf0)
        assert_size_stride_grouped((primals_4, primals_3), ((8, 4096), (4096, )), ((4096, 1), (1, )), 'input')
        # Topologically Sorted Source Nodes: [fused_add_rms_norm], Original ATen: [rowops.fused_add_rms_norm]
        buf1 = torch.ops.rowops.fused_add_rms_norm.default(buf0, primals_4, primals_3, eps=1e-06)
        del buf0
        del primals_4
        buf2 = buf1[0]
        assert_tensor_metadata(buf2, (8, 4096), (4096, 1), torch.bfloat16, 'torch.ops.rowops.fused_add_rms_norm.default')
        # buffer buf2 (op: torch.ops.rowops.fused_add_rms_norm.default) is assumed to be not aligned
        buf3 = buf1[1]
        assert_tensor_metadata(buf3, (8, 4096), (4096, 1), torch.bfloat16, 'torch.ops.rowops.fused_add_rms_norm.default')
        # buffer buf3 (op: torch.ops.rowops.fused_add_rms_norm.default) is assumed to be not aligned
        buf4 = buf1[2]
        assert_tensor_metadata(buf4, (8, ), (1, ), torch.float32, 'torch.ops.rowops.fused_add_rms_norm.default')
        # buffer buf4 (op: torch.ops.rowops.fused_add_rms_norm.default) is assumed to be not aligned
        del buf1
        assert_size_stride(primals_5, (256, 4096), (4096, 1), 'input')
        buf5 = empty_strided_cpu((8, 256), (256, 1), torch.bfloat16)
        # Topologically Sorted Source Nodes: [linear_1], Original ATen: [aten.t, aten.mm]
        extern_kernels.mm(buf2, reinterpret_tensor(primals_5, (4096, 256), (1, 4096), 0), out=buf5)
        return (buf5, buf3, primals_1, primals_2, primals_3, primals_5, buf2, buf3, buf4, )

runner = Runner(partitions=[])
call = runner.call
recursively_apply_fns = runner.recursively_apply_fns


def get_args():
    from torch._dynamo.testing import rand_strided
    primals_1 = rand_strided((4096, 256), (256, 1), device='cpu', dtype=torch.bfloat16)
    primals_2 = rand_strided((8, 256), (256, 1), device='cpu', dtype=torch.bfloat16)
    primals_3 = rand_strided((4096, ), (1, ), device='cpu', dtype=torch.bfloat16)
    primals_4 = rand_strided((8, 4096), (4096, 1), device='cpu', dtype=torch.bfloat16)
    primals_5 = rand_strided((256, 4096), (4096, 1), device='cpu', dtype=torch.bfloat16)
    return [primals_1, primals_2, primals_3, primals_4, primals_5]


def benchmark_compiled_module(args, times=10, repeat=10):
    from torch._inductor.utils import print_performance
    fn = lambda: call(list(args))
    return print_performance(fn, times=times, repeat=repeat, device='cpu')


if __name__ == "__main__":
    from torch._inductor.wrapper_benchmark import compiled_module_main
    args = get_args()
    compiled_module_main('None', lambda times, repeat: benchmark_compiled_module(args, times=times, repeat=repeat))


# ==== next module ====

# AOT ID: ['1_backward']
from ctypes import c_void_p, c_long, c_int
import torch
import math
import random
import os
import tempfile
from math import inf, nan
from cmath import nanj
from torch._inductor.hooks import run_intermediate_hooks
from torch._inductor.utils import maybe_profile
from torch._inductor.codegen.memory_planning import _align as align
from torch import device, empty_strided
from torch._inductor.async_compile import AsyncCompile
from torch._inductor.select_algorithm import extern_kernels
from torch._inductor.runtime.runtime_utils import assert_tensor_metadata

aten = torch.ops.aten
inductor_ops = torch.ops.inductor
_quantized = torch.ops._quantized
assert_size_stride = torch._C._dynamo.guards.assert_size_stride
assert_size_stride_grouped = torch._C._dynamo.guards.assert_size_stride_grouped
assert_alignment = torch._C._dynamo.guards.assert_alignment
empty_strided_cpu = torch._C._dynamo.guards._empty_strided_cpu
empty_strided_cpu_pinned = torch._C._dynamo.guards._empty_strided_cpu_pinned
empty_strided_cuda = torch._C._dynamo.guards._empty_strided_cuda
empty_strided_xpu = torch._C._dynamo.guards._empty_strided_xpu
empty_strided_mtia = torch._C._dynamo.guards._empty_strided_mtia
reinterpret_tensor = torch._C._dynamo.guards._reinterpret_tensor
alloc_from_pool = torch.ops.inductor._alloc_from_pool
async_compile = AsyncCompile()
empty_strided_p2p = torch._C._distributed_c10d._SymmetricMemory.empty_strided_p2p


async_compile.wait(globals())
del async_compile

class Runner:
    def __init__(self, partitions):
        self.partitions = partitions

    def recursively_apply_fns(self, fns):
        new_callables = []
        for fn, c in zip(fns, self.partitions):
            new_callables.append(fn(c))
        self.partitions = new_callables

    def call(self, args):
        primals_1, primals_2, primals_3, primals_5, getitem, getitem_1, getitem_2, tangents_1, tangents_2 = args
        args.clear()
        assert_size_stride_grouped((tangents_1, getitem), ((8, 256), (8, 4096)), ((256, 1), (4096, 1)), 'input')
        buf0 = empty_strided_cpu((256, 4096), (4096, 1), torch.bfloat16)
        # Topologically Sorted Source Nodes: [permute_2, mm_2], Original ATen: [aten.t, aten.mm]
        extern_kernels.mm(reinterpret_tensor(tangents_1, (256, 8), (1, 256), 0), getitem, out=buf0)
        del getitem
        assert_size_stride(primals_5, (256, 4096), (4096, 1), 'input')
        buf1 = empty_strided_cpu((8, 4096), (4096, 1), torch.bfloat16)
        # Topologically Sorted Source Nodes: [linear_1, permute_4, mm_3], Original ATen: [aten.t, aten.mm]
        extern_kernels.mm(tangents_1, primals_5, out=buf1)
        del primals_5
        del tangents_1
        assert_size_stride_grouped((tangents_2, getitem_1, primals_3, getitem_2), ((8, 4096), (8, 4096), (4096, ), (8, )), ((4096, 1), (4096, 1), (1, ), (1, )), 'input')
        # Topologically Sorted Source Nodes: [fused_add_rms_norm_backward], Original ATen: [rowops.fused_add_rms_norm_backward]
        buf2 = torch.ops.rowops.fused_add_rms_norm_backward.default(buf1, tangents_2, None, getitem_1, primals_3, getitem_2)
        del buf1
        del getitem_1
        del getitem_2
        del primals_3
        del tangents_2
        buf3 = buf2[0]
        assert_tensor_metadata(buf3, (8, 4096), (4096, 1), torch.bfloat16, 'torch.ops.rowops.fused_add_rms_norm_backward.default')
        # buffer buf3 (op: torch.ops.rowops.fused_add_rms_norm_backward.default) is assumed to be not aligned
        buf4 = buf2[1]
        assert_tensor_metadata(buf4, (4096, ), (1, ), torch.bfloat16, 'torch.ops.rowops.fused_add_rms_norm_backward.default')
        # buffer buf4 (op: torch.ops.rowops.fused_add_rms_norm_backward.default) is assumed to be not aligned
        del buf2
        assert_size_stride(primals_2, (8, 256), (256, 1), 'input')
        buf5 = empty_strided_cpu((4096, 256), (256, 1), torch.bfloat16)
        # Topologically Sorted Source Nodes: [permute_6, mm_4], Original ATen: [aten.t, aten.mm]
        extern_kernels.mm(reinterpret_tensor(buf3, (4096, 8), (1, 4096), 0), primals_2, out=buf5)
        del primals_2
        assert_size_stride(primals_1, (4096, 256), (256, 1), 'input')
        buf6 = empty_strided_cpu((8, 256), (256, 1), torch.bfloat16)
        # Topologically Sorted Source Nodes: [x, permute_8, mm_5], Original ATen: [aten.t, aten.mm]
        extern_kernels.mm(buf3, primals_1, out=buf6)
        del primals_1
        return (buf5, buf6, buf4, buf3, buf0, )

runner = Runner(partitions=[])
call = runner.call
recursively_apply_fns = runner.recursively_apply_fns


def get_args():
    from torch._dynamo.testing import rand_strided
    primals_1 = rand_strided((4096, 256), (256, 1), device='cpu', dtype=torch.bfloat16)
    primals_2 = rand_strided((8, 256), (256, 1), device='cpu', dtype=torch.bfloat16)
    primals_3 = rand_strided((4096, ), (1, ), device='cpu', dtype=torch.bfloat16)
    primals_5 = rand_strided((256, 4096), (4096, 1), device='cpu', dtype=torch.bfloat16)
    getitem = rand_strided((8, 4096), (4096, 1), device='cpu', dtype=torch.bfloat16)
    getitem_1 = rand_strided((8, 4096), (4096, 1), device='cpu', dtype=torch.bfloat16)
    getitem_2 = rand_strided((8, ), (1, ), device='cpu', dtype=torch.float32)
    tangents_1 = rand_strided((8, 256), (256, 1), device='cpu', dtype=torch.bfloat16)
    tangents_2 = rand_strided((8, 4096), (4096, 1), device='cpu', dtype=torch.bfloat16)
    return [primals_1, primals_2, primals_3, primals_5, getitem, getitem_1, getitem_2, tangents_1, tangents_2]


def benchmark_compiled_module(args, times=10, repeat=10):
    from torch._inductor.utils import print_performance
    fn = lambda: call(list(args))
    return print_performance(fn, times=times, repeat=repeat, device='cpu')


if __name__ == "__main__":
    from torch._inductor.wrapper_benchmark import compiled_module_main
    args = get_args()
    compiled_module_main('None', lambda times, repeat: benchmark_compiled_module(args, times=times, repeat=repeat))
