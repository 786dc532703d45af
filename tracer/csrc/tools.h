/* What debuggers, profilers, coverage tools and tracebacks see of traced
 * functions.
 *
 * - While a trace or profile function is set on the calling thread
 *   (sys.settrace, sys.setprofile, threading.settrace: pdb, cProfile on
 *   3.11, coverage), or on 3.12+ while a sys.monitoring tool has events
 *   (cProfile on 3.12+, coverage's sysmon core), or when TRACER_DISABLE is
 *   set, traced functions run as plain Python: the tool sees their frames.
 *   `tools_run_as_python` is the check, cheap enough for every call.
 * - An exception raised by compiled code gets traceback entries for the
 *   user's lines (`tools_add_traceback`, called by the generated CPython
 *   entries), and the tracer's own Python frames are left out of the
 *   traceback of a call that compiled (`tools_hide_tracer_frames`).
 */
#ifndef TRACER_TOOLS_H
#define TRACER_TOOLS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <string.h>

/* 3.12+: sys.monitoring's global events live in the interpreter state;
 * 3.11: the current thread state is read inline.  Both are internal. */
#define Py_BUILD_CORE
#if PY_VERSION_HEX < 0x030D0000
#  undef _PyGC_FINALIZED   /* cpython gh-105268 */
#endif
#if PY_VERSION_HEX >= 0x030C0000
#  include <internal/pycore_interp.h>
#else
#  include <internal/pycore_pystate.h>
#endif
#undef Py_BUILD_CORE

/* TRACER_DISABLE: every traced function with a plain Python version runs
 * as plain Python (tracer.native.set_disabled). */
extern int tools_disabled;

static inline int
tools_thread_traced(PyThreadState *tstate)
{
    return tstate->c_tracefunc != NULL || tstate->c_profilefunc != NULL;
}

#if PY_VERSION_HEX >= 0x030C0000
/* sys.settrace and sys.setprofile are sys.monitoring tools 7 and 6 on
 * 3.12+, whose events are set for every thread while any thread has a
 * trace or profile function: c_tracefunc and c_profilefunc tell which. */
#  define TOOLS_ANY 0xffffffffffffffffULL
#  define TOOLS_OTHER_THAN_SYS 0x3f3f3f3f3f3f3f3fULL   /* tools 0-5, per byte */

/* The tools (bits of `mask` per byte) with events set for every code. */
static inline uint64_t
tools_monitoring(PyInterpreterState *interp, uint64_t mask)
{
    /* One byte per event, one bit per tool: read as two overlapping words. */
    const uint8_t *tools = interp->monitors.tools;
    uint64_t head, tail;
    Py_BUILD_ASSERT(_PY_MONITORING_UNGROUPED_EVENTS >= 8
                    && _PY_MONITORING_UNGROUPED_EVENTS <= 16);
    memcpy(&head, tools, 8);
    memcpy(&tail, tools + _PY_MONITORING_UNGROUPED_EVENTS - 8, 8);
    return (head | tail) & mask;
}
#endif

/* Whether a tool is watching this thread's Python code. */
static inline int
tools_active(PyThreadState *tstate)
{
#if PY_VERSION_HEX >= 0x030C0000
    if (tools_monitoring(tstate->interp, TOOLS_OTHER_THAN_SYS)) {
        return 1;
    }
#endif
    return tools_thread_traced(tstate);
}

/* Whether traced functions run as plain Python on this thread right now. */
static inline int
tools_run_as_python(PyThreadState *tstate)
{
    return tools_disabled || tools_active(tstate);
}

/* The same for a call in `interp` (the calling thread's interpreter),
 * cheap enough for every call of a Dispatcher: on 3.12+ no tool has
 * events in the common case, which the interpreter alone says; on 3.11 the
 * thread state is read inline. */
static inline int
tools_call_runs_as_python(PyInterpreterState *interp)
{
    if (tools_disabled) {
        return 1;
    }
#if PY_VERSION_HEX >= 0x030C0000
    if (!tools_monitoring(interp, TOOLS_ANY)) {
        return 0;
    }
    return tools_active(_PyThreadState_UncheckedGet());
#else
    (void)interp;
    return tools_thread_traced(_PyThreadState_GET());
#endif
}

/* One line of user code an exception passes through, as generated code
 * lays it out (codegen/entry.py, TRACEBACK_SITE): the line in a function,
 * and the site it was called from when the function was inlined. */
typedef struct TracebackSite {
    const struct TracebackSite *caller;   /* NULL: the traced function's own line */
    const char *filename;                 /* UTF-8 */
    const char *name;                     /* the function's name (co_name) */
    int64_t lineno;
} TracebackSite;

/* With an exception set: adds a traceback entry for `site` and each of its
 * callers, so that the traceback reads caller -> ... -> site.  The
 * exception stays set (a failure to build an entry only leaves it out).
 * NULL adds nothing. */
void tools_add_traceback(const TracebackSite *site);
/* The same for an exception a call into CPython raised, without the
 * tracer's frames (codegen/callouts.py). */
void tools_call_out_failed(const TracebackSite *site);

/* With an exception set: drops the leading entries of its traceback whose
 * code is the tracer's own Python code (the prefixes given to
 * tracer.native.hide_frames), when a user frame follows them. */
void tools_hide_tracer_frames(void);

/* module.<name> = the address of a function compiled code calls (an int).  0 or -1. */
int tools_add_address(PyObject *module, const char *name, void *address);

/* Adds run_as_python, set_disabled, hide_frames and add_traceback_address
 * to the module.  0 or -1. */
int tools_module_init(PyObject *module);

#endif /* TRACER_TOOLS_H */
