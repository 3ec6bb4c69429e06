// rowops._fast: the forward ops as plain CPython functions (vectorcall),
// one call into the dispatcher as torch.add's own binding makes, for the
// eager Python API (python/rowops/_ops.py). torch.ops.rowops.* costs about
// 2 us more per call from Python (OpOverloadPacket, schema-driven argument
// parsing) - most of a decode-sized call.
//
// Only plain calls take this route: torch.Tensor or nn.Parameter (no
// __torch_function__) and no torch-function mode. Anything else
// returns NotImplemented and the caller uses torch.ops, which handles
// subclasses and modes; dispatch modes and autograd are the dispatcher's,
// the same on both routes.
#include "op_handle.h"
#include <ATen/PythonTorchFunctionTLS.h>

#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/Exceptions.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/csrc/utils/pybind.h>

#include <Python.h>

namespace
{

using at::Tensor;
using Rows = std::tuple<Tensor, Tensor>(const Tensor &, double);
using Fused = std::tuple<Tensor, Tensor, Tensor>(const Tensor &, const Tensor &,
                                                 const Tensor &, double);

// torch.nn.Parameter, looked up at import (its __torch_function__ is
// disabled: it dispatches as a plain tensor).
PyTypeObject *parameter_type = nullptr;

// Plain tensors only: exactly torch.Tensor or nn.Parameter (no subclass
// that could carry __torch_function__), and no torch-function mode.
bool plain(PyObject *const *args, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i < n; ++i)
        if (!THPVariable_CheckExact(args[i]) &&
            Py_TYPE(args[i]) != parameter_type)
            return false;
    return !at::impl::torch_function_mode_enabled();
}

// A tuple that takes over the new references in items (none is leaked,
// whatever fails): NULL with the Python error if any item or the tuple
// could not be made.
PyObject *tuple_of(std::initializer_list<PyObject *> items)
{
    PyObject *t = PyTuple_New(static_cast<Py_ssize_t>(items.size()));
    Py_ssize_t i = 0;
    bool ok = t != nullptr;
    for (PyObject *item : items) {
        ok = ok && item != nullptr;
        if (t && item)
            PyTuple_SET_ITEM(t, i, item); // steals
        else
            Py_XDECREF(item);
        ++i;
    }
    if (!ok) {
        Py_XDECREF(t);
        return nullptr;
    }
    return t;
}

PyObject *rms_norm_rows(PyObject *, PyObject *const *args, Py_ssize_t nargs)
{
    HANDLE_TH_ERRORS
    if (nargs != 2 || !plain(args, 1))
        Py_RETURN_NOTIMPLEMENTED;
    const double eps = PyFloat_AsDouble(args[1]);
    if (eps == -1.0 && PyErr_Occurred())
        return nullptr;
    static const auto call = rowops::op_handle<Rows>("rowops::rms_norm_rows");
    std::tuple<Tensor, Tensor> r;
    {
        pybind11::gil_scoped_release no_gil;
        r = call.call(THPVariable_Unpack(args[0]), eps);
    }
    return tuple_of({THPVariable_Wrap(std::move(std::get<0>(r))),
                     THPVariable_Wrap(std::move(std::get<1>(r)))});
    END_HANDLE_TH_ERRORS
}

// The fused ops' arguments (x, residual, weight, eps): 1 when they are
// plain tensors and eps a float (*eps set), 0 for NotImplemented, -1 with
// the Python error set.
int fused_args(PyObject *const *args, Py_ssize_t nargs, double *eps)
{
    if (nargs != 4 || !plain(args, 3))
        return 0;
    *eps = PyFloat_AsDouble(args[3]);
    return *eps == -1.0 && PyErr_Occurred() ? -1 : 1;
}

PyObject *fused_add_rms_norm(PyObject *, PyObject *const *args,
                             Py_ssize_t nargs)
{
    HANDLE_TH_ERRORS
    double eps;
    const int took = fused_args(args, nargs, &eps);
    if (took <= 0)
        return took ? nullptr : Py_NewRef(Py_NotImplemented);
    static const auto call =
        rowops::op_handle<Fused>("rowops::fused_add_rms_norm");
    std::tuple<Tensor, Tensor, Tensor> r;
    {
        pybind11::gil_scoped_release no_gil;
        r = call.call(THPVariable_Unpack(args[0]), THPVariable_Unpack(args[1]),
                      THPVariable_Unpack(args[2]), eps);
    }
    return tuple_of({THPVariable_Wrap(std::move(std::get<0>(r))),
                     THPVariable_Wrap(std::move(std::get<1>(r))),
                     THPVariable_Wrap(std::move(std::get<2>(r)))});
    END_HANDLE_TH_ERRORS
}

using FusedInPlace = void(const Tensor &, const Tensor &, const Tensor &,
                          double);

// The in-place form: the model's call (vLLM's layers, a decode loop), where
// the 2 us of torch.ops were a fifth of a small call.
PyObject *fused_add_rms_norm_(PyObject *, PyObject *const *args,
                              Py_ssize_t nargs)
{
    HANDLE_TH_ERRORS
    double eps;
    const int took = fused_args(args, nargs, &eps);
    if (took <= 0)
        return took ? nullptr : Py_NewRef(Py_NotImplemented);
    static const auto call =
        rowops::op_handle<FusedInPlace>("rowops::fused_add_rms_norm_");
    {
        pybind11::gil_scoped_release no_gil;
        call.call(THPVariable_Unpack(args[0]), THPVariable_Unpack(args[1]),
                  THPVariable_Unpack(args[2]), eps);
    }
    Py_RETURN_NONE;
    END_HANDLE_TH_ERRORS
}

// METH_FASTCALL functions travel as PyCFunction (CPython's convention);
// the cast goes through void (*)() to say so.
template <typename F> PyCFunction as_cfunction(F *f)
{
    return reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(f));
}

PyMethodDef methods[] = {
    {"rms_norm_rows", as_cfunction(rms_norm_rows), METH_FASTCALL,
     "rms_norm_rows(x, eps) -> (y, rstd), or NotImplemented"},
    {"fused_add_rms_norm", as_cfunction(fused_add_rms_norm), METH_FASTCALL,
     "fused_add_rms_norm(x, residual, weight, eps) -> (out, residual_out, "
     "rstd), or NotImplemented"},
    {"fused_add_rms_norm_", as_cfunction(fused_add_rms_norm_), METH_FASTCALL,
     "fused_add_rms_norm_(x, residual, weight, eps) -> None (in place), or "
     "NotImplemented"},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef module = {PyModuleDef_HEAD_INIT,
                      "_fast",
                      nullptr,
                      -1,
                      methods,
                      nullptr,
                      nullptr,
                      nullptr,
                      nullptr};

} // namespace

PyMODINIT_FUNC PyInit__fast()
{
    PyObject *nn = PyImport_ImportModule("torch.nn");
    if (!nn)
        return nullptr;
    PyObject *param = PyObject_GetAttrString(nn, "Parameter");
    Py_DECREF(nn);
    if (!param)
        return nullptr;
    if (!PyType_Check(param)) {
        Py_DECREF(param);
        PyErr_SetString(PyExc_ImportError,
                        "rowops._fast: torch.nn.Parameter is not a type");
        return nullptr;
    }
    parameter_type = reinterpret_cast<PyTypeObject *>(param); // kept
    return PyModule_Create(&module);
}
