/* NativeEntry: one compiled specialization of a Dispatcher and its guards.
 *
 * Shared between native_entry.c (which builds entries) and dispatch.c,
 * whose hot path checks the guards inline (entry_guards_hold).
 */
#ifndef TRACER_NATIVE_ENTRY_H
#define TRACER_NATIVE_ENTRY_H

#include "dispatch.h"

/* One identity guard.  Pointers are borrowed from the guards tuple that the
 * entry keeps alive (tuples are immutable, so they stay valid). */
enum guard_kind { GUARD_DICT, GUARD_CELL, GUARD_CODE, GUARD_DEFAULTS, GUARD_KWDEFAULTS };

typedef struct {
    int kind;            /* enum guard_kind */
    PyObject *target;    /* a dict, a cell, or a function */
    PyObject *key;       /* the dict key (dict guards only) */
    PyObject *expected;  /* compared by identity; ABSENT = key missing */
} Guard;

typedef struct {
    PyObject_VAR_HEAD          /* ob_size = number of guards */
    dispatch_entry_fn fn;
    PyObject *self_obj;        /* passed to fn as `self` */
    PyObject *guards;          /* the tuple as given: owns what Guard points to */
    Guard checks[1];           /* flattened guards, ob_size of them */
} NativeEntry;

extern PyTypeObject NativeEntry_Type;

/* Validates `guards` (a tuple of (dict, key, expected) / (cell, None,
 * expected) / (function, "__code__" | "__defaults__" | "__kwdefaults__",
 * expected)) and builds an entry, or NULL with an exception. */
NativeEntry *entry_new(dispatch_entry_fn fn, PyObject *self_obj, PyObject *guards);

/* 1 if every guard holds, 0 if one fails, -1 on error (a key's __eq__
 * raised during the dict lookup). */
static inline int
entry_guards_hold(NativeEntry *e)
{
    Py_ssize_t n = Py_SIZE(e);
    for (Py_ssize_t i = 0; i < n; i++) {
        const Guard *g = &e->checks[i];
        PyObject *value;
        switch (g->kind) {
        case GUARD_CELL:
            if (PyCell_GET(g->target) != g->expected) {
                return 0;
            }
            break;
        case GUARD_CODE:
        case GUARD_DEFAULTS:
        case GUARD_KWDEFAULTS:
            value = g->kind == GUARD_CODE ? PyFunction_GET_CODE(g->target)
                  : g->kind == GUARD_DEFAULTS ? PyFunction_GET_DEFAULTS(g->target)
                  : PyFunction_GET_KW_DEFAULTS(g->target);
            if ((value != NULL ? value : Py_None) != g->expected) {   /* NULL reads as None */
                return 0;
            }
            break;
        default:
            if (g->expected == dispatch_ABSENT) {
                /* PyDict_Contains reports errors in its result, sparing the
                 * PyErr_Occurred() (a thread-local read) a missing key needs. */
                int found = PyDict_Contains(g->target, g->key);
                if (found != 0) {
                    return found > 0 ? 0 : -1;
                }
            }
            else {
                value = PyDict_GetItemWithError(g->target, g->key);
                if (value != g->expected) {
                    return (value == NULL && PyErr_Occurred()) ? -1 : 0;
                }
            }
        }
    }
    return 1;
}

#endif /* TRACER_NATIVE_ENTRY_H */
