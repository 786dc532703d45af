/* Test entries: stand-ins for LLVM-generated native entries, so the tests of
 * the Dispatcher and the frame hook can run without the compiler.  Exposed as
 * tracer._frame._test_entry_address(kind). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "_dispatch.h"

/* Sum of two exact floats; "not mine" for anything else. */
static PyObject *
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
static PyObject *
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

static PyObject *
test_entry_raise(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    PyErr_SetString(PyExc_ValueError, "raised by the test entry");
    return NULL;
}

static PyObject *
test_entry_miss(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    return NULL;
}

static PyObject *
test_entry_address(PyObject *module, PyObject *args)
{
    const char *kind = "add_floats";
    if (!PyArg_ParseTuple(args, "|s:_test_entry_address", &kind)) {
        return NULL;
    }
    dispatch_entry_fn fn;
    if (strcmp(kind, "add_floats") == 0) {
        fn = test_entry_add_floats;
    }
    else if (strcmp(kind, "echo") == 0) {
        fn = test_entry_echo;
    }
    else if (strcmp(kind, "raise") == 0) {
        fn = test_entry_raise;
    }
    else if (strcmp(kind, "miss") == 0) {
        fn = test_entry_miss;
    }
    else {
        PyErr_Format(PyExc_ValueError, "unknown test entry %s", kind);
        return NULL;
    }
    return PyLong_FromVoidPtr((void *)(uintptr_t)fn);
}

static PyMethodDef test_entry_def = {
    "_test_entry_address", test_entry_address, METH_VARARGS,
    "_test_entry_address(kind='add_floats')\n--\n\n"
    "Address of a C entry for tests: 'add_floats' (two exact floats, else\n"
    "miss), 'echo' (returns (self, args)), 'raise' (ValueError), 'miss'.",
};


int
test_entries_module_init(PyObject *module)
{
    PyObject *fn = PyCFunction_NewEx(&test_entry_def, NULL, NULL);
    if (fn == NULL) {
        return -1;
    }
    int rc = PyModule_AddObjectRef(module, "_test_entry_address", fn);
    Py_DECREF(fn);
    return rc;
}
