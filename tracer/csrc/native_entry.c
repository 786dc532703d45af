/* NativeEntry: one compiled specialization of a Dispatcher and its guards
 * (see native_entry.h).  Guards are validated here, once, so that the call
 * path never has to.
 */
#include "native_entry.h"

#include <stddef.h>

/* A function guard names one of these attributes, read straight off the
 * function object (an inlined function's code and defaults are constants). */
static int
function_guard_kind(PyObject *key)
{
    if (!PyUnicode_Check(key)) {
        return -1;
    }
    if (PyUnicode_CompareWithASCIIString(key, "__code__") == 0) {
        return GUARD_CODE;
    }
    if (PyUnicode_CompareWithASCIIString(key, "__defaults__") == 0) {
        return GUARD_DEFAULTS;
    }
    if (PyUnicode_CompareWithASCIIString(key, "__kwdefaults__") == 0) {
        return GUARD_KWDEFAULTS;
    }
    return -1;
}

static int
entry_traverse(PyObject *op, visitproc visit, void *arg)
{
    NativeEntry *e = (NativeEntry *)op;
    Py_VISIT(e->self_obj);
    Py_VISIT(e->guards);
    return 0;
}

static int
entry_clear(PyObject *op)
{
    NativeEntry *e = (NativeEntry *)op;
    /* Guards point into e->guards: forget them before dropping it. */
    Py_SET_SIZE(e, 0);
    Py_CLEAR(e->self_obj);
    Py_CLEAR(e->guards);
    return 0;
}

static void
entry_dealloc(PyObject *op)
{
    PyObject_GC_UnTrack(op);
    entry_clear(op);
    PyObject_GC_Del(op);
}

PyTypeObject NativeEntry_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tracer.native.NativeEntry",
    .tp_basicsize = offsetof(NativeEntry, checks),
    .tp_itemsize = sizeof(Guard),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_dealloc = entry_dealloc,
    .tp_traverse = entry_traverse,
    .tp_clear = entry_clear,
    .tp_doc = "A native entry of a Dispatcher (internal).",
};

/* Validates `guards` (a tuple of (dict, key, expected) / (cell, None,
 * expected) / (function, "__code__" | "__defaults__" | "__kwdefaults__",
 * expected)) and builds an entry.  Errors are raised here, once, so that
 * the call path never has to validate. */
NativeEntry *
entry_new(dispatch_entry_fn fn, PyObject *self_obj, PyObject *guards)
{
    if (!PyTuple_Check(guards)) {
        PyErr_Format(PyExc_TypeError, "guards must be a tuple, not %.100s",
                     Py_TYPE(guards)->tp_name);
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(guards);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *g = PyTuple_GET_ITEM(guards, i);
        if (!PyTuple_Check(g) || PyTuple_GET_SIZE(g) != 3) {
            PyErr_Format(PyExc_TypeError,
                         "guard %zd must be a 3-tuple (target, key, expected)", i);
            return NULL;
        }
        PyObject *target = PyTuple_GET_ITEM(g, 0);
        PyObject *key = PyTuple_GET_ITEM(g, 1);
        if (PyCell_Check(target)) {
            if (key != Py_None) {
                PyErr_Format(PyExc_ValueError,
                             "guard %zd: a cell guard takes None as its key", i);
                return NULL;
            }
        }
        else if (PyDict_Check(target)) {
            /* An unhashable key would fail on every call: fail now. */
            if (PyObject_Hash(key) == -1) {
                return NULL;
            }
        }
        else if (PyFunction_Check(target)) {
            if (function_guard_kind(key) < 0) {
                PyErr_Format(PyExc_ValueError, "guard %zd: a function guard's key must be "
                             "'__code__', '__defaults__' or '__kwdefaults__'", i);
                return NULL;
            }
        }
        else {
            PyErr_Format(PyExc_TypeError,
                         "guard %zd: target must be a dict, a cell or a function, not %.100s",
                         i, Py_TYPE(target)->tp_name);
            return NULL;
        }
    }

    NativeEntry *e = PyObject_GC_NewVar(NativeEntry, &NativeEntry_Type, n);
    if (e == NULL) {
        return NULL;
    }
    e->fn = fn;
    e->self_obj = Py_NewRef(self_obj);
    e->guards = Py_NewRef(guards);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *g = PyTuple_GET_ITEM(guards, i);
        PyObject *target = PyTuple_GET_ITEM(g, 0);
        PyObject *key = PyTuple_GET_ITEM(g, 1);
        e->checks[i].kind = PyCell_Check(target) ? GUARD_CELL
                          : PyDict_Check(target) ? GUARD_DICT
                          : function_guard_kind(key);
        e->checks[i].target = target;
        e->checks[i].key = e->checks[i].kind == GUARD_DICT ? key : NULL;
        e->checks[i].expected = PyTuple_GET_ITEM(g, 2);
    }
    PyObject_GC_Track((PyObject *)e);
    return e;
}
