/* What debuggers, profilers, coverage tools and tracebacks see of traced
 * functions (see tools.h).
 *
 * Traceback entries for compiled code are made as Cython makes them: an
 * empty code object named after the user's function and file, a frame of
 * it, PyTraceBack_Here, and the entry's line set to the user's line.
 */
#include "tools.h"

#include <frameobject.h>

/* The frame struct (f_lineno) is internal. */
#define Py_BUILD_CORE
#if PY_VERSION_HEX >= 0x030C0000 && PY_VERSION_HEX < 0x030D0000
#  undef _PyGC_FINALIZED
#endif
#include <internal/pycore_frame.h>
#undef Py_BUILD_CORE

#define PY_3_12 (PY_VERSION_HEX >= 0x030C0000)

int tools_disabled = 0;

/* Tuple of str: the directories of the tracer's own Python code. */
static PyObject *hidden_prefixes = NULL;

/* The globals of the frames made for tracebacks (an empty dict). */
static PyObject *site_globals = NULL;

/* ------------------------------------------------------------------------ */
/* The current exception, version by version                                */
/* ------------------------------------------------------------------------ */

typedef struct {
#if PY_3_12
    PyObject *exc;
#else
    PyObject *type, *value, *tb;
#endif
} SavedError;

static inline void
error_save(SavedError *saved)
{
#if PY_3_12
    saved->exc = PyErr_GetRaisedException();
#else
    PyErr_Fetch(&saved->type, &saved->value, &saved->tb);
#endif
}

static inline void
error_restore(SavedError *saved)
{
#if PY_3_12
    PyErr_SetRaisedException(saved->exc);
#else
    PyErr_Restore(saved->type, saved->value, saved->tb);
#endif
}

/* Borrowed: the saved exception's traceback, or NULL. */
static inline PyObject *
error_traceback(SavedError *saved)
{
#if PY_3_12
    PyObject *tb = PyException_GetTraceback(saved->exc);
    Py_XDECREF(tb);   /* the exception keeps it */
    return tb;
#else
    return saved->tb;
#endif
}

/* Replaces the saved exception's traceback with `tb` (borrowed). */
static inline void
error_set_traceback(SavedError *saved, PyObject *tb)
{
#if PY_3_12
    PyException_SetTraceback(saved->exc, tb);
#else
    Py_XSETREF(saved->tb, Py_XNewRef(tb));
#endif
}

/* ------------------------------------------------------------------------ */
/* Traceback entries for compiled code                                      */
/* ------------------------------------------------------------------------ */

/* A new frame that reads as `site`'s line of its function, or NULL (with
 * the error of making it set). */
static PyFrameObject *
site_frame(const TracebackSite *site)
{
    int lineno = (int)site->lineno;
    PyCodeObject *code = PyCode_NewEmpty(site->filename, site->name, lineno);
    if (code == NULL) {
        return NULL;
    }
    PyFrameObject *frame = PyFrame_New(PyThreadState_Get(), code, site_globals, NULL);
    Py_DECREF(code);
    if (frame != NULL) {
        frame->f_lineno = lineno;
    }
    return frame;
}

/* The frames of the sites met so far, made once each and reused by every
 * traceback entry of their site (such a frame never runs: nothing in it
 * changes).  A slot is taken again by another site, and a site's address
 * can be a freed module's: its file, name and line are compared too. */
#define SITE_FRAMES 256

typedef struct {
    const TracebackSite *site;
    char *filename, *name;
    int64_t lineno;
    PyFrameObject *frame;
} SiteFrame;

static SiteFrame site_frames[SITE_FRAMES];

/* A new reference to a frame for `site`, or NULL (with the error set). */
static PyFrameObject *
reused_site_frame(const TracebackSite *site)
{
    SiteFrame *slot = &site_frames[((uintptr_t)site >> 4) % SITE_FRAMES];
    if (slot->frame != NULL && slot->site == site && slot->lineno == site->lineno
            && strcmp(slot->filename, site->filename) == 0 && strcmp(slot->name, site->name) == 0) {
        Py_INCREF(slot->frame);
        return slot->frame;
    }
    PyFrameObject *frame = site_frame(site);
    if (frame == NULL) {
        return NULL;
    }
    char *filename = strdup(site->filename), *name = strdup(site->name);
    if (filename == NULL || name == NULL) {     /* (not kept: made again next time) */
        free(filename);
        free(name);
        return frame;
    }
    PyFrameObject *old = slot->frame;
    free(slot->filename);
    free(slot->name);
    slot->site = site;
    slot->filename = filename;
    slot->name = name;
    slot->lineno = site->lineno;
    Py_INCREF(frame);
    slot->frame = frame;
    Py_XDECREF(old);
    return frame;
}

static int
add_traceback_entry(const TracebackSite *site)
{
    SavedError saved;
    error_save(&saved);         /* making the frame must not see the exception */
    PyFrameObject *frame = reused_site_frame(site);
    if (frame == NULL) {
        PyErr_Clear();
        error_restore(&saved);
        return -1;
    }
    error_restore(&saved);
    if (PyTraceBack_Here(frame) < 0) {
        Py_DECREF(frame);
        return -1;
    }
    Py_DECREF(frame);
    /* The new entry is at the empty code's first instruction, which is at
     * its first line (the user's) with no columns: no column markers. */
    error_save(&saved);
    PyTracebackObject *tb = (PyTracebackObject *)error_traceback(&saved);
    if (tb != NULL && PyTraceBack_Check(tb)) {
        tb->tb_lineno = (int)site->lineno;
        tb->tb_lasti = 0;
    }
    error_restore(&saved);
    return 0;
}

void
tools_add_traceback(const TracebackSite *site)
{
    if (!PyErr_Occurred()) {
        return;
    }
    /* Innermost first: PyTraceBack_Here puts each entry above the last. */
    for (; site != NULL; site = site->caller) {
        if (add_traceback_entry(site) < 0) {
            return;
        }
    }
}

/* ------------------------------------------------------------------------ */
/* Leaving the tracer's own frames out                                      */
/* ------------------------------------------------------------------------ */

static int
is_tracer_frame(PyTracebackObject *tb)
{
    PyCodeObject *code = PyFrame_GetCode(tb->tb_frame);
    Py_ssize_t n = PyTuple_GET_SIZE(hidden_prefixes);
    int hidden = 0;
    for (Py_ssize_t i = 0; i < n && !hidden; i++) {
        PyObject *prefix = PyTuple_GET_ITEM(hidden_prefixes, i);
        hidden = PyUnicode_Tailmatch(code->co_filename, prefix, 0, PY_SSIZE_T_MAX, -1) == 1;
    }
    Py_DECREF(code);
    return hidden;
}

void
tools_hide_tracer_frames(void)
{
    if (hidden_prefixes == NULL || !PyErr_Occurred()) {
        return;
    }
    SavedError saved;
    error_save(&saved);
    PyObject *first = error_traceback(&saved);
    PyObject *tb = first;
    while (tb != NULL && PyTraceBack_Check(tb) && is_tracer_frame((PyTracebackObject *)tb)) {
        tb = (PyObject *)((PyTracebackObject *)tb)->tb_next;
    }
    /* Only the tracer's frames: the tracer's own error, keep them all. */
    if (tb != NULL && tb != first && PyTraceBack_Check(tb)) {
        error_set_traceback(&saved, tb);
    }
    error_restore(&saved);
}

/* An exception raised by a call compiled code made into CPython (a print, a
 * raise with traced values; codegen/callouts.py): the tracer's own frames
 * (the CallOut that made the call) leave its traceback, wherever they are in
 * it, and the user's line of the call goes above what is left. */
void
tools_call_out_failed(const TracebackSite *site)
{
    if (!PyErr_Occurred()) {
        return;
    }
    if (hidden_prefixes != NULL) {
        SavedError saved;
        error_save(&saved);
        PyObject *first = error_traceback(&saved);
        while (first != NULL && PyTraceBack_Check(first) && is_tracer_frame((PyTracebackObject *)first)) {
            first = (PyObject *)((PyTracebackObject *)first)->tb_next;
        }
        /* the entries after the first kept one: unlink the tracer's */
        PyTracebackObject *kept = (first != NULL && PyTraceBack_Check(first)) ? (PyTracebackObject *)first : NULL;
        while (kept != NULL) {
            PyTracebackObject *next = kept->tb_next;
            while (next != NULL && is_tracer_frame(next)) {
                next = next->tb_next;
            }
            Py_XSETREF(kept->tb_next, (PyTracebackObject *)Py_XNewRef((PyObject *)next));
            kept = next;
        }
        PyObject *rest = (first != NULL && PyTraceBack_Check(first)) ? first : NULL;
#if PY_3_12
        error_set_traceback(&saved, rest != NULL ? rest : Py_None);
#else
        error_set_traceback(&saved, rest);
#endif
        error_restore(&saved);
    }
    tools_add_traceback(site);
}

/* ------------------------------------------------------------------------ */
/* Module functions                                                         */
/* ------------------------------------------------------------------------ */

static PyObject *
tools_run_as_python_py(PyObject *module, PyObject *unused)
{
    return PyBool_FromLong(tools_run_as_python(PyThreadState_Get()));
}

static PyObject *
tools_set_disabled(PyObject *module, PyObject *flag)
{
    int on = PyObject_IsTrue(flag);
    if (on < 0) {
        return NULL;
    }
    int old = tools_disabled;
    tools_disabled = on;
    return PyBool_FromLong(old);
}

static PyObject *
tools_hide_frames(PyObject *module, PyObject *prefixes)
{
    if (!PyTuple_Check(prefixes)) {
        PyErr_Format(PyExc_TypeError, "hide_frames() takes a tuple of str, not %.100s",
                     Py_TYPE(prefixes)->tp_name);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(prefixes); i++) {
        if (!PyUnicode_Check(PyTuple_GET_ITEM(prefixes, i))) {
            PyErr_SetString(PyExc_TypeError, "hide_frames() takes a tuple of str");
            return NULL;
        }
    }
    Py_XSETREF(hidden_prefixes, PyTuple_GET_SIZE(prefixes) ? Py_NewRef(prefixes) : NULL);
    Py_RETURN_NONE;
}

static PyMethodDef tools_methods[] = {
    {"run_as_python", tools_run_as_python_py, METH_NOARGS,
     "run_as_python()\n--\n\n"
     "Whether traced functions run as plain Python on this thread now: a trace\n"
     "or profile function is set, a sys.monitoring tool has events (3.12+), or\n"
     "set_disabled(True) was called (TRACER_DISABLE)."},
    {"set_disabled", tools_set_disabled, METH_O,
     "set_disabled(flag)\n--\n\n"
     "When true, Dispatchers with a plain Python function call it instead of\n"
     "their native entries, and the frame hook intercepts nothing.  Returns\n"
     "the previous flag."},
    {"hide_frames", tools_hide_frames, METH_O,
     "hide_frames(prefixes)\n--\n\n"
     "Leave frames whose file starts with one of these prefixes out of the\n"
     "leading entries of the tracebacks of a Dispatcher's misses (the\n"
     "tracer's own code), when a user frame follows them."},
    {NULL, NULL, 0, NULL},
};

int
tools_add_address(PyObject *module, const char *name, void *address)
{
    PyObject *value = PyLong_FromVoidPtr(address);
    if (value == NULL) {
        return -1;
    }
    int rc = PyModule_AddObjectRef(module, name, value);
    Py_DECREF(value);
    return rc;
}

int
tools_module_init(PyObject *module)
{
    if (site_globals == NULL) {
        site_globals = PyDict_New();
        if (site_globals == NULL) {
            return -1;
        }
    }
    if (PyModule_AddFunctions(module, tools_methods) < 0) {
        return -1;
    }
    PyObject *address = PyLong_FromVoidPtr((void *)(uintptr_t)&tools_add_traceback);
    if (address == NULL) {
        return -1;
    }
    int rc = PyModule_AddObjectRef(module, "add_traceback_address", address);
    Py_DECREF(address);
    if (rc < 0) {
        return rc;
    }
    address = PyLong_FromVoidPtr((void *)(uintptr_t)&tools_call_out_failed);
    if (address == NULL) {
        return -1;
    }
    rc = PyModule_AddObjectRef(module, "call_out_failed_address", address);
    Py_DECREF(address);
    return rc;
}
