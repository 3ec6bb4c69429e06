#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "python_embed.h"
#include "shape_file.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef OPCOST_PYTHON_EXECUTABLE
#define OPCOST_PYTHON_EXECUTABLE "python3"
#endif
#ifndef OPCOST_SOURCE_DIR
#define OPCOST_SOURCE_DIR "."
#endif

static PyObject *bench_module;
static char start_error[512];

/* "type: message" into err; a message too long for it keeps its start and
 * its end, where a compiler's error sits (Inductor's CppCompileError is the
 * command line, then the compiler's output: cut at the end, an H200's
 * AOTInductor failure read as a command line with no error in it). */
static void put_error(char *err, size_t errlen, const char *tname,
                      const char *msg)
{
    const int n = snprintf(err, errlen, "%s: %s", tname, msg);
    if (n < 0 || (size_t)n < errlen || strlen(tname) + 48 + 32 > errlen)
        return;
    const size_t len = strlen(msg);
    const size_t room = errlen - strlen(tname) - 48; /* ": ", the gap, NUL */
    size_t tail = room * 2 / 3, head = room - tail;
    /* whole UTF-8 characters: neither cut starts on a continuation byte */
    while (head > 0 && ((unsigned char)msg[head] & 0xC0) == 0x80)
        --head;
    size_t from = len - tail;
    while (from < len && ((unsigned char)msg[from] & 0xC0) == 0x80)
        ++from;
    snprintf(err, errlen, "%s: %.*s [... %zu characters ...] %s", tname,
             (int)head, msg, from - head, msg + from);
}

int opcost_python_error(char *err, size_t errlen)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    const char *tname = type ? ((PyTypeObject *)type)->tp_name : "Error";
    PyObject *text = value ? PyObject_Str(value) : NULL;
    const char *msg = text ? PyUnicode_AsUTF8(text) : NULL;
    put_error(err, errlen, tname, msg ? msg : "(no message)");
    Py_XDECREF(text);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    PyErr_Clear();
    return -1;
}

int opcost_python_start(char *err, size_t errlen)
{
    if (bench_module)
        return 0;
    if (start_error[0]) { /* failed before: do not retry every point */
        snprintf(err, errlen, "%s", start_error);
        return -1;
    }
    const char *exe = getenv("OPCOST_PYTHON");
    if (!exe || !*exe)
        exe = OPCOST_PYTHON_EXECUTABLE;
#ifdef OPCOST_ROWOPS_LIBRARY
    /* before the interpreter starts: os.environ is copied at start-up, and
     * `import rowops` must load the library this driver is linked with */
    setenv("ROWOPS_LIBRARY", OPCOST_ROWOPS_LIBRARY, 0);
#endif
    /* Inductor compiles in this process, not in a pool of compile workers
     * that go on warming up beside the timed calls: the compiled paths'
     * first point of a dtype and layout read steady 3-30 % apart between
     * two processes of one build (opcost ab, Zen 5 host) with the pool */
    setenv("TORCHINDUCTOR_COMPILE_THREADS", "1", 0);
    PyConfig config;
    PyConfig_InitPythonConfig(&config);
    config.install_signal_handlers = 0; /* SIGINT stays the driver's */
    PyStatus st = PyConfig_SetBytesString(&config, &config.executable, exe);
    if (!PyStatus_Exception(st))
        st = PyConfig_SetBytesString(&config, &config.program_name, exe);
    if (!PyStatus_Exception(st))
        st = Py_InitializeFromConfig(&config);
    PyConfig_Clear(&config);
    if (PyStatus_Exception(st)) {
        snprintf(start_error, sizeof start_error,
                 "cannot start Python from %s: %s", exe,
                 st.err_msg ? st.err_msg : "unknown error");
        snprintf(err, errlen, "%s", start_error);
        return -1;
    }
    /* the rowops package of this clone, and the bench's own module */
    const char *const dirs[] = {OPCOST_SOURCE_DIR "/python",
                                OPCOST_BENCH_PYTHON_DIR};
    PyObject *sys_path = PySys_GetObject("path"); /* borrowed */
    for (int i = 0; i < 2; ++i) {
        PyObject *dir = PyUnicode_FromString(dirs[i]);
        if (sys_path && dir)
            PyList_Insert(sys_path, 0, dir);
        Py_XDECREF(dir);
    }
    bench_module = PyImport_ImportModule("opcost_bench");
    if (!bench_module) {
        char why[400];
        opcost_python_error(why, sizeof why);
        snprintf(start_error, sizeof start_error,
                 "Python %s cannot import opcost_bench: %s", exe, why);
        snprintf(err, errlen, "%s", start_error);
        return -1;
    }
    return 0;
}

opcost_pyobj *opcost_python_bench_module(void)
{
    return bench_module;
}

int opcost_python_exec(const char *code, char *err, size_t errlen)
{
    if (!bench_module)
        return -1;
    PyObject *globals = PyModule_GetDict(bench_module); /* borrowed */
    PyObject *r = PyRun_String(code, Py_file_input, globals, globals);
    if (!r)
        return opcost_python_error(err, errlen);
    Py_DECREF(r);
    return 0;
}

/* (address, dtype, sizes, strides) of a descriptor, for opcost_bench. */
opcost_pyobj *opcost_python_tensor_spec(const rowops_tensor *t)
{
    PyObject *sizes = PyTuple_New(t->rank), *strides = PyTuple_New(t->rank);
    if (!sizes || !strides) {
        Py_XDECREF(sizes);
        Py_XDECREF(strides);
        return NULL;
    }
    for (int d = 0; d < t->rank; ++d) {
        PyTuple_SET_ITEM(sizes, d, PyLong_FromLongLong(t->sizes[d]));
        PyTuple_SET_ITEM(strides, d, PyLong_FromLongLong(t->strides[d]));
    }
    return Py_BuildValue("(KsNNs)", (unsigned long long)(uintptr_t)t->data,
                         rowops_dtype_name(t->dtype), sizes, strides,
                         t->device == ROWOPS_DEVICE_CUDA ? "cuda" : "cpu");
}

int opcost_python_tensor_from_spec(opcost_pyobj *spec, rowops_tensor *t)
{
    unsigned long long addr;
    const char *dtype, *device = "cpu";
    PyObject *sizes, *strides;
    if (!PyArg_ParseTuple(spec, "KsOO|s", &addr, &dtype, &sizes, &strides,
                          &device))
        return -1;
    memset(t, 0, sizeof *t);
    t->data = (void *)(uintptr_t)addr;
    t->device = strcmp(device, "cuda") ? ROWOPS_DEVICE_CPU : ROWOPS_DEVICE_CUDA;
    if (opcost_dtype_from_name(dtype, &t->dtype))
        return -1;
    t->rank = (int)PyTuple_Size(sizes);
    if (t->rank > ROWOPS_MAX_RANK)
        return -1;
    for (int d = 0; d < t->rank; ++d) {
        t->sizes[d] = PyLong_AsLongLong(PyTuple_GET_ITEM(sizes, d));
        t->strides[d] = PyLong_AsLongLong(PyTuple_GET_ITEM(strides, d));
    }
    return 0;
}
