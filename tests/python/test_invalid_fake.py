"""The seed's invalid-fake test: a fake implementation that reads tensor data
must fail under FakeTensorMode (PyTorch's data-dependent error) and under
torch.compile(fullgraph=True). The op lives in a scoped library and is gone
afterwards."""

import pytest
import torch
from torch._subclasses.fake_tensor import (DataDependentOutputException,
                                           FakeTensorMode)

NS = "rowops_invalid_fake_test"


def _cpu_impl(x):
    return x.clone()


def _bad_fake(x):
    # Reads data: the number of rows to return depends on a value.
    n = int(x.sum().item())
    return x.new_empty((n,))


def test_fake_impl_reading_data_is_rejected():
    with torch.library._scoped_library(NS, "DEF") as lib:
        lib.define("bad(Tensor x) -> Tensor")
        lib.impl("bad", _cpu_impl, "CPU")
        torch.library.register_fake(f"{NS}::bad", _bad_fake, lib=lib)
        op = getattr(torch.ops, NS).bad.default

        x = torch.ones(4)
        torch.testing.assert_close(op(x), x)  # eager is fine

        with FakeTensorMode() as mode:
            fx = mode.from_tensor(x)
            with pytest.raises(DataDependentOutputException):
                op(fx)

        torch._dynamo.reset()
        compiled = torch.compile(lambda t: op(t) + 1, fullgraph=True)
        with pytest.raises(Exception) as info:
            compiled(x)
        text = f"{type(info.value).__name__}: {info.value}"
        assert "data" in text.lower() or "item" in text.lower(), text
        torch._dynamo.reset()

    # nothing stays registered
    with pytest.raises(RuntimeError, match="does not exist"):
        torch._C._dispatch_has_kernel_for_dispatch_key(f"{NS}::bad", "CPU")
    with pytest.raises((AttributeError, RuntimeError)):
        getattr(torch.ops, NS).bad.default
