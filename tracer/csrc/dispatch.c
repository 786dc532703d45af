/* Dispatcher: the steady-state fast path of a traced function.
 *
 * A Dispatcher holds an ordered list of native entries (compiled
 * specializations).  A call tries them in order: each entry's guards are
 * checked here, by identity, then the entry itself checks its arguments
 * (exact types) and either computes the result or says "not mine".  When
 * every entry declines, the call goes to `miss`, a Python callable that
 * traces, compiles and adds an entry, or falls back.
 *
 * While a debugger, profiler or coverage tool watches the thread (or with
 * TRACER_DISABLE), a Dispatcher with a plain Python function calls that
 * instead, so that the tool sees the function run (tools.h).
 *
 * Cost matters: a hit must be cheaper than calling the plain Python
 * function, so the hot path is vectorcall -> loop -> native code, with no
 * tuple, no dict and no Python frame.
 */
#include "dispatch.h"
#include "native_entry.h"
#include "tools.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Sentinels                                                                */
/* ------------------------------------------------------------------------ */

typedef struct {
    PyObject_HEAD
    const char *name;
} Sentinel;

static PyObject *
sentinel_repr(PyObject *op)
{
    return PyUnicode_FromFormat("tracer.native.%s", ((Sentinel *)op)->name);
}

static PyTypeObject Sentinel_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tracer.native.Sentinel",
    .tp_basicsize = sizeof(Sentinel),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_repr = sentinel_repr,
    .tp_doc = "A unique marker object (MISS, ABSENT, SKIP).",
};

PyObject *dispatch_MISS = NULL;
PyObject *dispatch_ABSENT = NULL;
PyObject *dispatch_SKIP = NULL;

static PyObject *
sentinel_new(const char *name)
{
    Sentinel *s = PyObject_New(Sentinel, &Sentinel_Type);
    if (s != NULL) {
        s->name = name;
    }
    return (PyObject *)s;
}

/* ------------------------------------------------------------------------ */
/* Dispatcher                                                               */
/* ------------------------------------------------------------------------ */

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *miss;         /* callable for calls no entry takes */
    PyObject *plain;        /* the plain Python function, or NULL (see tools.h) */
    PyInterpreterState *interp;   /* where it was made, and is called */
    PyObject *name;         /* str */
    PyObject *qualname;     /* str */
    /* Tuple of NativeEntry.  Replaced, never mutated, so a call in progress
     * (which holds a reference to the tuple) is unaffected by add_native()
     * or clear() run from code the call triggers. */
    PyObject *entries;
    PyObject *dict;         /* __dict__: py_func, __doc__, __wrapped__, ... */
    PyObject *weakreflist;
} Dispatcher;

/* Inlined into the vectorcall below: this is the whole hot path. */
static inline PyObject *
try_entries(PyObject *op, PyObject *const *args, Py_ssize_t nargs, int *missed)
{
    PyObject *table = ((Dispatcher *)op)->entries;
    Py_ssize_t n = PyTuple_GET_SIZE(table);
    PyObject *result = NULL;

    *missed = 0;
    Py_INCREF(table);
    for (Py_ssize_t i = 0; i < n; i++) {
        NativeEntry *e = (NativeEntry *)PyTuple_GET_ITEM(table, i);
        int ok = entry_guards_hold(e);
        if (ok == 0) {
            continue;
        }
        if (ok < 0) {
            goto done;
        }
        result = e->fn(e->self_obj, args, nargs);
        /* NULL without an exception is the entry's "not mine". */
        if (result != NULL || PyErr_Occurred()) {
            goto done;
        }
    }
    *missed = 1;
done:
    Py_DECREF(table);
    return result;
}

PyObject *
dispatcher_try_entries(PyObject *op, PyObject *const *args, Py_ssize_t nargs,
                       int *missed)
{
    return try_entries(op, args, nargs, missed);
}

/* Every call no entry takes: to `miss` (which compiles, or runs Python). */
static PyObject *
dispatcher_miss(Dispatcher *d, PyObject *const *args, size_t nargsf,
                PyObject *kwnames)
{
    if (d->miss == NULL) {  /* only after tp_clear, from a finalizer */
        PyErr_SetString(PyExc_RuntimeError, "Dispatcher has been cleared");
        return NULL;
    }
    PyObject *result = PyObject_Vectorcall(d->miss, args, nargsf, kwnames);
    if (result == NULL) {
        tools_hide_tracer_frames();   /* those of compiling, or of a fallback */
    }
    return result;
}

static PyObject *
dispatcher_vectorcall(PyObject *op, PyObject *const *args, size_t nargsf,
                      PyObject *kwnames)
{
    Dispatcher *d = (Dispatcher *)op;
    if (d->plain != NULL && tools_call_runs_as_python(d->interp)) {
        return PyObject_Vectorcall(d->plain, args, nargsf, kwnames);
    }
    if (kwnames != NULL && PyTuple_GET_SIZE(kwnames) != 0) {
        /* Entries take positional arguments only. */
        return dispatcher_miss(d, args, nargsf, kwnames);
    }
    PyObject *table = d->entries;
    if (PyTuple_GET_SIZE(table) == 1) {
        /* The common case, one entry, without the loop.  The table is held
         * all the same (what the call runs may replace it). */
        NativeEntry *e = (NativeEntry *)PyTuple_GET_ITEM(table, 0);
        Py_INCREF(table);
        int ok = entry_guards_hold(e);
        if (ok > 0) {
            PyObject *result = e->fn(e->self_obj, args, PyVectorcall_NARGS(nargsf));
            Py_DECREF(table);
            if (result != NULL || PyErr_Occurred()) {
                return result;
            }
        }
        else {
            Py_DECREF(table);
            if (ok < 0) {
                return NULL;
            }
        }
        return dispatcher_miss(d, args, nargsf, kwnames);
    }
    int missed;
    PyObject *result = try_entries(op, args, PyVectorcall_NARGS(nargsf), &missed);
    return missed ? dispatcher_miss(d, args, nargsf, kwnames) : result;
}

static PyObject *
dispatcher_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"miss", "name", "qualname", "plain", NULL};
    PyObject *miss, *name, *qualname = NULL, *plain = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OU|UO:Dispatcher", kwlist,
                                     &miss, &name, &qualname, &plain)) {
        return NULL;
    }
    if (!PyCallable_Check(miss)) {
        PyErr_Format(PyExc_TypeError, "miss must be callable, not %.100s",
                     Py_TYPE(miss)->tp_name);
        return NULL;
    }
    if (plain != Py_None && !PyCallable_Check(plain)) {
        PyErr_Format(PyExc_TypeError, "plain must be callable or None, not %.100s",
                     Py_TYPE(plain)->tp_name);
        return NULL;
    }
    Dispatcher *d = (Dispatcher *)type->tp_alloc(type, 0);
    if (d == NULL) {
        return NULL;
    }
    d->entries = PyTuple_New(0);
    if (d->entries == NULL) {
        Py_DECREF(d);
        return NULL;
    }
    d->vectorcall = dispatcher_vectorcall;
    d->miss = Py_NewRef(miss);
    d->name = Py_NewRef(name);
    d->qualname = Py_NewRef(qualname != NULL ? qualname : name);
    d->plain = plain != Py_None ? Py_NewRef(plain) : NULL;
    d->interp = PyInterpreterState_Get();
    return (PyObject *)d;
}

static int
dispatcher_traverse(PyObject *op, visitproc visit, void *arg)
{
    Dispatcher *d = (Dispatcher *)op;
    Py_VISIT(d->miss);
    Py_VISIT(d->name);
    Py_VISIT(d->qualname);
    Py_VISIT(d->plain);
    Py_VISIT(d->entries);
    Py_VISIT(d->dict);
    return 0;
}

static int
dispatcher_clear_refs(PyObject *op)
{
    Dispatcher *d = (Dispatcher *)op;
    Py_CLEAR(d->miss);
    Py_CLEAR(d->name);
    Py_CLEAR(d->qualname);
    Py_CLEAR(d->plain);
    Py_CLEAR(d->dict);
    /* Calls check only `entries`, so keep it a valid (empty) tuple. */
    PyObject *empty = PyTuple_New(0);
    if (empty != NULL) {
        Py_SETREF(d->entries, empty);
    }
    else {
        PyErr_Clear();  /* the empty tuple is a singleton: cannot fail */
    }
    return 0;
}

static void
dispatcher_dealloc(PyObject *op)
{
    Dispatcher *d = (Dispatcher *)op;
    PyObject_GC_UnTrack(op);
    if (d->weakreflist != NULL) {
        PyObject_ClearWeakRefs(op);
    }
    dispatcher_clear_refs(op);
    Py_CLEAR(d->entries);
    Py_TYPE(op)->tp_free(op);
}

static PyObject *
dispatcher_repr(PyObject *op)
{
    Dispatcher *d = (Dispatcher *)op;
    Py_ssize_t n = d->entries != NULL ? PyTuple_GET_SIZE(d->entries) : 0;
    if (d->qualname == NULL) {
        return PyUnicode_FromFormat("<Dispatcher (cleared) at %p>", op);
    }
    return PyUnicode_FromFormat("<Dispatcher %U: %zd native entr%s>",
                                d->qualname, n, n == 1 ? "y" : "ies");
}

/* Binds like a function: d.__get__(obj) is a bound method, and with
 * Py_TPFLAGS_METHOD_DESCRIPTOR, obj.d(x) calls d(obj, x) without creating
 * the bound method at all. */
static PyObject *
dispatcher_descr_get(PyObject *self, PyObject *obj, PyObject *type)
{
    if (obj == NULL || obj == Py_None) {
        return Py_NewRef(self);
    }
    return PyMethod_New(self, obj);
}

static PyObject *
dispatcher_add_native(PyObject *op, PyObject *const *args, Py_ssize_t nargs)
{
    Dispatcher *d = (Dispatcher *)op;
    if (nargs != 3) {
        PyErr_Format(PyExc_TypeError,
                     "add_native() takes 3 arguments (%zd given)", nargs);
        return NULL;
    }
    if (!PyLong_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "entry_address must be an int");
        return NULL;
    }
    void *address = PyLong_AsVoidPtr(args[0]);
    if (address == NULL) {
        if (!PyErr_Occurred()) {
            PyErr_SetString(PyExc_ValueError, "entry_address must not be 0");
        }
        return NULL;
    }
    dispatch_entry_fn fn = (dispatch_entry_fn)(uintptr_t)address;
    NativeEntry *e = entry_new(fn, args[1], args[2]);
    if (e == NULL) {
        return NULL;
    }
    /* Copy-on-write: a new tuple with the entry appended. */
    PyObject *old = d->entries;
    Py_ssize_t n = PyTuple_GET_SIZE(old);
    PyObject *table = PyTuple_New(n + 1);
    if (table == NULL) {
        Py_DECREF(e);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyTuple_SET_ITEM(table, i, Py_NewRef(PyTuple_GET_ITEM(old, i)));
    }
    PyTuple_SET_ITEM(table, n, (PyObject *)e);
    Py_SETREF(d->entries, table);
    Py_RETURN_NONE;
}

static PyObject *
dispatcher_clear_entries(PyObject *op, PyObject *unused)
{
    PyObject *empty = PyTuple_New(0);
    if (empty == NULL) {
        return NULL;
    }
    Py_SETREF(((Dispatcher *)op)->entries, empty);
    Py_RETURN_NONE;
}

static PyObject *
dispatcher_try_entries_py(PyObject *op, PyObject *args)
{
    if (!PyTuple_Check(args)) {
        PyErr_Format(PyExc_TypeError, "try_entries() takes a tuple, not %.100s",
                     Py_TYPE(args)->tp_name);
        return NULL;
    }
    int missed;
    PyObject *result = try_entries(op, &PyTuple_GET_ITEM(args, 0),
                                   PyTuple_GET_SIZE(args), &missed);
    if (missed) {
        return Py_NewRef(dispatch_MISS);
    }
    return result;
}

/* An entry that is Python code: self_obj(args as a tuple), where MISS is the entry's "not mine"
 * (a specialization's loaded path, tracer.specialize: its generated loader checks the arguments).
 * Its address is `python_entry_address`, for add_native. */
static PyObject *
python_entry(PyObject *self_obj, PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *tuple = PyTuple_New(nargs);
    if (tuple == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < nargs; i++) {
        PyTuple_SET_ITEM(tuple, i, Py_NewRef(args[i]));
    }
    PyObject *result = PyObject_CallOneArg(self_obj, tuple);
    Py_DECREF(tuple);
    if (result == dispatch_MISS) {
        Py_DECREF(result);
        return NULL;                  /* no exception: the next entry, or the miss path */
    }
    if (result == NULL) {
        tools_hide_tracer_frames();   /* those of the loaded path, or of a fallback */
    }
    return result;
}

static PyObject *
dispatcher_get_entry_count(PyObject *op, void *closure)
{
    return PyLong_FromSsize_t(PyTuple_GET_SIZE(((Dispatcher *)op)->entries));
}

/* (address, self_obj, guards) for each entry, for introspection. */
static PyObject *
dispatcher_get_entries(PyObject *op, void *closure)
{
    PyObject *table = ((Dispatcher *)op)->entries;
    Py_ssize_t n = PyTuple_GET_SIZE(table);
    PyObject *out = PyTuple_New(n);
    if (out == NULL) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        NativeEntry *e = (NativeEntry *)PyTuple_GET_ITEM(table, i);
        PyObject *address = PyLong_FromVoidPtr((void *)(uintptr_t)e->fn);
        if (address == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyObject *item = PyTuple_Pack(3, address, e->self_obj, e->guards);
        Py_DECREF(address);
        if (item == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyTuple_SET_ITEM(out, i, item);
    }
    return out;
}

/* An object slot (miss, plain, __name__, __qualname__); NULL reads as None. */
static PyObject *
dispatcher_get_slot(PyObject *op, void *closure)
{
    PyObject **slot = (PyObject **)((char *)op + (size_t)closure);
    return Py_NewRef(*slot != NULL ? *slot : Py_None);
}

/* __name__ and __qualname__ are data descriptors (settable, str only), as
 * on functions, so functools.wraps and friends work. */

static int
dispatcher_set_str(PyObject *op, PyObject *value, void *closure)
{
    if (value == NULL || !PyUnicode_Check(value)) {
        PyErr_SetString(PyExc_TypeError, "value must be set to a string object");
        return -1;
    }
    PyObject **slot = (PyObject **)((char *)op + (size_t)closure);
    Py_XSETREF(*slot, Py_NewRef(value));
    return 0;
}

static PyMethodDef dispatcher_methods[] = {
    {"add_native", (PyCFunction)(void (*)(void))dispatcher_add_native,
     METH_FASTCALL,
     "add_native(entry_address, self_obj, guards)\n--\n\n"
     "Append a native entry.  entry_address is the address of\n"
     "PyObject *entry(PyObject *self, PyObject *const *args, Py_ssize_t nargs);\n"
     "self_obj is passed as self.  guards is a tuple of (dict, key, expected)\n"
     "or (cell, None, expected), checked by identity before the entry runs."},
    {"clear", dispatcher_clear_entries, METH_NOARGS,
     "clear()\n--\n\nRemove every native entry."},
    {"try_entries", dispatcher_try_entries_py, METH_O,
     "try_entries(args)\n--\n\n"
     "Try the native entries on a tuple of arguments; return the result,\n"
     "or MISS if no entry takes them.  Never calls miss."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef dispatcher_getset[] = {
    {"entry_count", dispatcher_get_entry_count, NULL,
     "Number of native entries.", NULL},
    {"entries", dispatcher_get_entries, NULL,
     "Tuple of (address, self_obj, guards), one per native entry.", NULL},
    {"miss", dispatcher_get_slot, NULL,
     "The callable for calls no entry takes.", (void *)offsetof(Dispatcher, miss)},
    {"plain", dispatcher_get_slot, NULL,
     "The plain Python function called instead of the entries while a\n"
     "debugger, profiler or coverage tool watches (or None).",
     (void *)offsetof(Dispatcher, plain)},
    {"__name__", dispatcher_get_slot, dispatcher_set_str, NULL,
     (void *)offsetof(Dispatcher, name)},
    {"__qualname__", dispatcher_get_slot, dispatcher_set_str, NULL,
     (void *)offsetof(Dispatcher, qualname)},
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject Dispatcher_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tracer.native.Dispatcher",
    .tp_basicsize = sizeof(Dispatcher),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_BASETYPE
                | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_doc = "Dispatcher(miss, name, qualname=None, plain=None)\n--\n\n"
              "Calls the first native entry that takes the arguments; otherwise\n"
              "calls miss with the same arguments.  While a trace or profile\n"
              "function or a sys.monitoring tool is active (or set_disabled(True)),\n"
              "calls plain instead, if given.",
    .tp_new = dispatcher_new,
    .tp_dealloc = dispatcher_dealloc,
    .tp_traverse = dispatcher_traverse,
    .tp_clear = dispatcher_clear_refs,
    .tp_repr = dispatcher_repr,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(Dispatcher, vectorcall),
    .tp_descr_get = dispatcher_descr_get,
    .tp_dictoffset = offsetof(Dispatcher, dict),
    .tp_weaklistoffset = offsetof(Dispatcher, weakreflist),
    .tp_methods = dispatcher_methods,
    .tp_getset = dispatcher_getset,
};

/* ------------------------------------------------------------------------ */

int
dispatch_module_init(PyObject *module)
{
    if (PyType_Ready(&Sentinel_Type) < 0
            || PyType_Ready(&NativeEntry_Type) < 0
            || PyType_Ready(&Dispatcher_Type) < 0) {
        return -1;
    }
    /* Sentinels live as long as the process (references are never dropped). */
    if (dispatch_MISS == NULL) {
        dispatch_MISS = sentinel_new("MISS");
        dispatch_ABSENT = sentinel_new("ABSENT");
        dispatch_SKIP = sentinel_new("SKIP");
        if (dispatch_MISS == NULL || dispatch_ABSENT == NULL
                || dispatch_SKIP == NULL) {
            return -1;
        }
    }
    if (PyModule_AddObjectRef(module, "Dispatcher", (PyObject *)&Dispatcher_Type) < 0
            || PyModule_AddObjectRef(module, "MISS", dispatch_MISS) < 0
            || PyModule_AddObjectRef(module, "ABSENT", dispatch_ABSENT) < 0
            || PyModule_AddObjectRef(module, "SKIP", dispatch_SKIP) < 0
            || tools_add_address(module, "python_entry_address", (void *)(uintptr_t)&python_entry) < 0) {
        return -1;
    }
    return 0;
}
