/* Test entries: stand-ins for LLVM-generated native entries (METH_FASTCALL
 * functions, as tracer/csrc/dispatch.h's dispatch_entry_fn), so the tests of the
 * Dispatcher and the frame hook can run without the compiler.  Not part of the
 * shipped extension: tests/native_entries.py builds this file into a shared
 * library and reads the functions' addresses with ctypes. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* Sum of two exact floats; "not mine" for anything else. */
PyObject *
test_entry_add_floats(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyFloat_CheckExact(args[0])
            || !PyFloat_CheckExact(args[1])) {
        return NULL;
    }
    return PyFloat_FromDouble(PyFloat_AS_DOUBLE(args[0])
                              + PyFloat_AS_DOUBLE(args[1]));
}

/* (self, args): shows exactly what an entry receives.  Always a hit. */
PyObject *
test_entry_echo(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *tuple = PyTuple_New(nargs);
    if (tuple == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < nargs; i++) {
        PyTuple_SET_ITEM(tuple, i, Py_NewRef(args[i]));
    }
    PyObject *result = PyTuple_Pack(2, self, tuple);
    Py_DECREF(tuple);
    return result;
}

PyObject *
test_entry_raise(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    PyErr_SetString(PyExc_ValueError, "raised by the test entry");
    return NULL;
}

PyObject *
test_entry_miss(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    return NULL;
}
