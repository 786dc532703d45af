/* tracer.native: the PEP 523 frame hook used for capture.
 *
 * While installed, CPython hands every new frame to `hook` before running
 * it.  For code objects registered for capture (or every function when
 * capture_all is on) the hook gives the frame's code, arguments, globals,
 * builtins and closure to a Python callback *before any bytecode runs*, and
 * returns the callback's result in place of evaluating the frame.  Every
 * other frame goes to the previous evaluator untouched.
 *
 * While a debugger, profiler or coverage tool watches the thread, or with
 * TRACER_DISABLE, the hook intercepts nothing: the frame runs as Python,
 * where the tool sees it (tools.h).
 *
 * The hook is installed only while needed (install()/uninstall() nest):
 * with any hook installed CPython stops inlining Python-to-Python calls, so
 * every call gets slower and uses C stack.
 *
 * CPython 3.11, 3.12 and 3.13, GIL builds.  The frame struct is internal
 * and changes between versions; everything version-specific is in the
 * "Frame access" section.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#if PY_VERSION_HEX < 0x030B0000 || PY_VERSION_HEX >= 0x030E0000
#  error "tracer.native supports CPython 3.11 to 3.13"
#endif
#ifdef Py_GIL_DISABLED
#  error "tracer.native supports GIL builds only"
#endif

/* _PyInterpreterFrame lives in an internal header that needs Py_BUILD_CORE.
 * 3.12's headers clash on _PyGC_FINALIZED in that mode (cpython gh-105268). */
#define Py_BUILD_CORE
#if PY_VERSION_HEX >= 0x030C0000 && PY_VERSION_HEX < 0x030D0000
#  undef _PyGC_FINALIZED
#endif
#include <internal/pycore_frame.h>
#undef Py_BUILD_CORE

#include <stdint.h>

#include "dispatch.h"
#include "gather.h"
#include "objload.h"
#include "pool.h"
#include "released.h"
#include "runtime.h"
#include "tools.h"

#define PY_3_12 (PY_VERSION_HEX >= 0x030C0000)
#define PY_3_13 (PY_VERSION_HEX >= 0x030D0000)

#if PY_3_13
/* Exported by 3.13 but declared only in internal/pycore_ceval.h, which
 * drags in much more of the core: declare it here. */
PyAPI_FUNC(void) _PyEval_FrameClearAndPop(PyThreadState *tstate,
                                          _PyInterpreterFrame *frame);
#endif

#if PY_3_12
#  define code_get_extra PyUnstable_Code_GetExtra
#  define code_set_extra PyUnstable_Code_SetExtra
#  define request_code_extra_index PyUnstable_Eval_RequestCodeExtraIndex
#else
#  define code_get_extra _PyCode_GetExtra
#  define code_set_extra _PyCode_SetExtra
#  define request_code_extra_index _PyEval_RequestCodeExtraIndex
#endif

/* ------------------------------------------------------------------------ */
/* Frame access (version-specific)                                          */
/* ------------------------------------------------------------------------ */

static inline PyCodeObject *
frame_code(_PyInterpreterFrame *frame)
{
#if PY_3_13
    return (PyCodeObject *)frame->f_executable;
#else
    return frame->f_code;
#endif
}

/* The function being called.  Its closure is where the free variables are:
 * COPY_FREE_VARS, the first instruction, has not copied them yet. */
static inline PyFunctionObject *
frame_function(_PyInterpreterFrame *frame)
{
#if PY_3_12
    return (PyFunctionObject *)frame->f_funcobj;
#else
    return frame->f_func;
#endif
}

#if PY_3_12 && !PY_3_13
/* 3.12: the evaluator pops its own frames and the helpers that do it are
 * not exported, so this mirrors clear_thread_frame() in ceval.c for a frame
 * that never ran: it was never linked into the frame chain, has no frame
 * object, and its value stack is empty.  Drop the references it owns, then
 * pop it off the thread's data stack. */
static void
frame_clear_and_pop_312(PyThreadState *tstate, _PyInterpreterFrame *frame)
{
    for (int i = 0; i < frame->stacktop; i++) {
        Py_XDECREF(frame->localsplus[i]);
    }
    Py_XDECREF(frame->frame_obj);
    Py_XDECREF(frame->f_locals);
    Py_DECREF(frame->f_funcobj);
    Py_DECREF(frame->f_code);

    /* As _PyThreadState_PopFrame: a frame at the very start of a chunk
     * opened that chunk, so free it and go back to the previous one (the
     * root chunk's first frame starts at data[1]: it is never freed). */
    PyObject **base = (PyObject **)frame;
    _PyStackChunk *chunk = tstate->datastack_chunk;
    if (base == &chunk->data[0]) {
        _PyStackChunk *previous = chunk->previous;
        PyObjectArenaAllocator arena;
        tstate->datastack_top = &previous->data[previous->top];
        tstate->datastack_chunk = previous;
        tstate->datastack_limit = (PyObject **)((char *)previous + previous->size);
        PyObject_GetArenaAllocator(&arena);
        arena.free(arena.ctx, chunk, chunk->size);
    }
    else {
        tstate->datastack_top = base;
    }
}
#endif

/* Disposes of a frame the hook answered without evaluating it. */
static inline void
frame_dispose(PyThreadState *tstate, _PyInterpreterFrame *frame)
{
#if PY_3_13
    _PyEval_FrameClearAndPop(tstate, frame);
#elif PY_3_12
    frame_clear_and_pop_312(tstate, frame);
#else
    /* 3.11: _PyEval_Vector, which pushed the frame, clears and pops it
     * after the evaluator returns, whatever the evaluator did. */
    (void)tstate;
    (void)frame;
#endif
}

/* ------------------------------------------------------------------------ */
/* State                                                                    */
/* ------------------------------------------------------------------------ */

/* Module state is process-global: the GIL serializes access, and a
 * single-phase module is not loaded into isolated subinterpreters. */
static _PyFrameEvalFunction previous_eval = NULL; /* the one we chain to */
static Py_ssize_t install_count = 0;              /* install() nesting */
static int hook_in_chain = 0;     /* our hook is in the interpreter's chain */
static PyObject *frame_callback = NULL;           /* strong, or NULL */
static int capture_all = 0;
static Py_ssize_t extra_index = -1;               /* code-object extra slot */

/* Per-thread depth of "do not intercept": raised while the callback (the
 * tracer's own Python code) or run_plain() runs on this thread. */
static Py_tss_t disabled_key = Py_tss_NEEDS_INIT;

static inline intptr_t
disabled_depth(void)
{
    return (intptr_t)PyThread_tss_get(&disabled_key);
}

static int
disabled_add(intptr_t delta)
{
    if (PyThread_tss_set(&disabled_key, (void *)(disabled_depth() + delta)) != 0) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

/* The code-object slot holds a strong reference; CPython calls this when
 * the slot is overwritten or the code object dies. */
static void
code_state_free(void *state)
{
    Py_XDECREF((PyObject *)state);
}

/* Borrowed; NULL when the code object has no state. */
static inline PyObject *
code_state_get(PyCodeObject *code)
{
    void *state = NULL;
    if (code_get_extra((PyObject *)code, extra_index, &state) < 0) {
        PyErr_Clear();  /* only for a non-code object: cannot happen */
        return NULL;
    }
    return (PyObject *)state;
}

/* ------------------------------------------------------------------------ */
/* C stack guard                                                            */
/* ------------------------------------------------------------------------ */

/* With a hook installed every Python-to-Python call recurses in C (CPython
 * stops inlining them), through the hook.  3.11 does not count C recursion:
 * with a raised recursion limit, deep recursion overflows the C stack
 * (about 25000 frames deep in 8 MiB).  3.12 and 3.13 count it, but their
 * limits assume a full-size stack, so a thread with a small stack
 * (threading.stack_size) overflows too.  So the hook raises RecursionError
 * itself when the thread's C stack is nearly used up.  The check costs a
 * few loads and compares; it skips shallow frames (STACK_CHECK_DEPTH), so
 * short-lived threads never look their stack up. */
#if defined(__linux__) && defined(__GNUC__)
#  include <pthread.h>
#  define STACK_GUARD 1
#  define STACK_CHECK_DEPTH 16
#  define STACK_MARGIN_MAX (256 * 1024)
#  define STACK_SLOTS 4

/* Bounds of the stacks checked most recently, most recent first, keyed by
 * the thread state's id (unique for the life of the process: a dead
 * thread's stack memory may be reused by a new thread with other bounds).
 * Looking a thread's bounds up is cheap, except for the main thread (glibc
 * reads /proc/self/maps), so a few are kept for threads taking turns. */
typedef struct {
    uint64_t thread;
    uintptr_t low, size, margin;
} StackBounds;

static StackBounds stacks[STACK_SLOTS];

/* Moves the bounds of this thread's stack to stacks[0]; 0 if unknown. */
static Py_NO_INLINE int
stack_bounds_find(uint64_t thread, uintptr_t sp)
{
    StackBounds found;
    int i;
    for (i = 1; i < STACK_SLOTS; i++) {
        if (stacks[i].thread == thread && stacks[i].size) {
            break;
        }
    }
    if (i < STACK_SLOTS) {
        found = stacks[i];
    }
    else {
        pthread_attr_t attr;
        void *addr;
        size_t size;
        if (pthread_getattr_np(pthread_self(), &attr) != 0) {
            return 0;
        }
        int rc = pthread_attr_getstack(&attr, &addr, &size);
        pthread_attr_destroy(&attr);
        if (rc != 0 || sp - (uintptr_t)addr >= size) {
            return 0;
        }
        found.thread = thread;
        found.low = (uintptr_t)addr;
        found.size = size;
        found.margin = size / 4 < STACK_MARGIN_MAX ? size / 4 : STACK_MARGIN_MAX;
        i = STACK_SLOTS - 1;  /* drop the least recent */
    }
    for (; i > 0; i--) {
        stacks[i] = stacks[i - 1];
    }
    stacks[0] = found;
    return 1;
}

static inline int
stack_nearly_exhausted(PyThreadState *tstate)
{
    uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
    uint64_t thread = (uint64_t)tstate->id;
    if ((stacks[0].thread != thread || !stacks[0].size)
        && !stack_bounds_find(thread, sp)) {
        return 0;
    }
    /* A thread state can move to another OS thread (PyGILState on a
     * foreign thread): outside the recorded stack, say nothing. */
    if (sp - stacks[0].low >= stacks[0].size) {
        return 0;
    }
    return sp - stacks[0].low < stacks[0].margin;
}

static inline int
python_depth(PyThreadState *tstate)
{
#if PY_3_12
    return tstate->py_recursion_limit - tstate->py_recursion_remaining;
#else
    return tstate->recursion_limit - tstate->recursion_remaining;
#endif
}

static inline int
stack_guard_tripped(PyThreadState *tstate)
{
    if (python_depth(tstate) > STACK_CHECK_DEPTH && stack_nearly_exhausted(tstate)) {
        PyErr_SetString(PyExc_RecursionError,
                        "maximum recursion depth exceeded "
                        "(C stack nearly exhausted with the frame hook installed)");
        return 1;
    }
    return 0;
}
#endif

/* ------------------------------------------------------------------------ */
/* The hook                                                                 */
/* ------------------------------------------------------------------------ */

/* Generators, coroutines and async generators: their first evaluation only
 * creates the generator object.  (Module and class bodies are excluded too,
 * by requiring CO_OPTIMIZED: they run with a locals dict.) */
#define CODE_NOT_INTERCEPTED \
    (CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR | CO_ITERABLE_COROUTINE)

/* The frame's arguments are localsplus[0:n], in the order positional,
 * keyword-only, *args, **kwargs. */
static inline Py_ssize_t
frame_argument_count(PyCodeObject *code)
{
    return code->co_argcount + code->co_kwonlyargcount
           + ((code->co_flags & CO_VARARGS) != 0)
           + ((code->co_flags & CO_VARKEYWORDS) != 0);
}

static PyObject *
call_frame_callback(PyCodeObject *code, _PyInterpreterFrame *frame,
                    PyObject *const *args, Py_ssize_t nargs)
{
    PyFunctionObject *func = frame_function(frame);
    PyObject *cb = Py_NewRef(frame_callback);  /* cb may replace itself */
    PyObject *argtuple = PyTuple_New(nargs);
    PyObject *result = NULL;
    if (argtuple == NULL) {
        goto done;
    }
    for (Py_ssize_t i = 0; i < nargs; i++) {
        PyTuple_SET_ITEM(argtuple, i, Py_NewRef(args[i]));
    }
    PyObject *closure = func->func_closure != NULL ? func->func_closure : Py_None;
    PyObject *cbargs[5] = {(PyObject *)code, argtuple, frame->f_globals,
                           frame->f_builtins, closure};
    if (disabled_add(1) < 0) {
        goto done;
    }
    result = PyObject_Vectorcall(cb, cbargs, 5, NULL);
    disabled_add(-1);  /* the slot exists now: cannot fail */
done:
    Py_XDECREF(argtuple);
    Py_DECREF(cb);
    return result;
}

/* The slow path, kept out of `hook` so that declining stays a tail call
 * with no stack frame of its own (deep recursion runs through the hook). */
static Py_NO_INLINE PyObject *
intercept(PyThreadState *tstate, _PyInterpreterFrame *frame, PyObject *state)
{
    PyCodeObject *code = frame_code(frame);
    PyObject *const *args = frame->localsplus;
    Py_ssize_t nargs = frame_argument_count(code);
    PyObject *result;

    /* A frame object would need CPython's take_ownership on disposal; an
     * unlinked frame cannot have one, but never risk it. */
    PyFunctionObject *func = frame_function(frame);
    if (frame->frame_obj != NULL || func == NULL || !PyFunction_Check(func)) {
        return previous_eval(tstate, frame, 0);
    }
    /* The callback may replace the code's state, dropping this reference. */
    Py_XINCREF(state);
    if (state != NULL && Dispatcher_Check(state)) {
        int missed;
        result = dispatcher_try_entries(state, args, nargs, &missed);
        if (!missed) {
            goto answered;
        }
    }
    if (frame_callback == NULL) {
        goto evaluate;
    }
    result = call_frame_callback(code, frame, args, nargs);
    if (result == dispatch_SKIP) {
        Py_DECREF(result);
        goto evaluate;
    }
answered:
    /* A result, or NULL with an exception that propagates to the caller
     * as if the function had raised it. */
    Py_XDECREF(state);
    frame_dispose(tstate, frame);
    return result;
evaluate:
    Py_XDECREF(state);
    return previous_eval(tstate, frame, 0);
}

static PyObject *
hook(PyThreadState *tstate, _PyInterpreterFrame *frame, int throwflag)
{
    /* Only function entries: not a generator being resumed or thrown into. */
    if (!throwflag && frame->owner == FRAME_OWNED_BY_THREAD) {
#ifdef STACK_GUARD
        if (stack_guard_tripped(tstate)) {
            frame_dispose(tstate, frame);
            return NULL;
        }
#endif
        PyCodeObject *code = frame_code(frame);
        int flags = code->co_flags;
        if ((flags & CO_OPTIMIZED) && !(flags & CODE_NOT_INTERCEPTED)) {
            PyObject *state = code_state_get(code);
            if (state != dispatch_SKIP && (state != NULL || capture_all)
                    && install_count > 0 && disabled_depth() == 0
                    && !tools_run_as_python(tstate)) {
                return intercept(tstate, frame, state);
            }
        }
    }
    return previous_eval(tstate, frame, throwflag);
}

/* ------------------------------------------------------------------------ */
/* Module functions                                                         */
/* ------------------------------------------------------------------------ */

static PyObject *
frame_install(PyObject *module, PyObject *unused)
{
    PyInterpreterState *interp = PyInterpreterState_Get();
    if (!hook_in_chain) {
        previous_eval = _PyInterpreterState_GetEvalFrameFunc(interp);
        _PyInterpreterState_SetEvalFrameFunc(interp, hook);
        hook_in_chain = 1;
    }
    install_count++;
    Py_RETURN_NONE;
}

static PyObject *
frame_uninstall(PyObject *module, PyObject *unused)
{
    PyInterpreterState *interp = PyInterpreterState_Get();
    if (install_count == 0) {
        PyErr_SetString(PyExc_RuntimeError, "the frame hook is not installed");
        return NULL;
    }
    if (--install_count == 0
            && _PyInterpreterState_GetEvalFrameFunc(interp) == hook) {
        _PyInterpreterState_SetEvalFrameFunc(interp, previous_eval);
        hook_in_chain = 0;
    }
    /* Otherwise another evaluator was installed on top of ours and still
     * chains to it: stay in its chain, declining every frame (the count is
     * 0), and reuse our place on the next install(). */
    Py_RETURN_NONE;
}

static PyObject *
frame_installed(PyObject *module, PyObject *unused)
{
    return PyBool_FromLong(install_count > 0);
}

static PyObject *
frame_set_frame_callback(PyObject *module, PyObject *cb)
{
    if (cb != Py_None && !PyCallable_Check(cb)) {
        PyErr_Format(PyExc_TypeError, "callback must be callable or None, not %.100s",
                     Py_TYPE(cb)->tp_name);
        return NULL;
    }
    PyObject *old = frame_callback;
    frame_callback = cb == Py_None ? NULL : Py_NewRef(cb);
    return old != NULL ? old : Py_NewRef(Py_None);
}

static PyObject *
frame_set_capture_all(PyObject *module, PyObject *flag)
{
    int on = PyObject_IsTrue(flag);
    if (on < 0) {
        return NULL;
    }
    int old = capture_all;
    capture_all = on;
    return PyBool_FromLong(old);
}

static int
check_code(PyObject *code)
{
    if (!PyCode_Check(code)) {
        PyErr_Format(PyExc_TypeError, "expected a code object, not %.100s",
                     Py_TYPE(code)->tp_name);
        return -1;
    }
    return 0;
}

static PyObject *
frame_register_code(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_Format(PyExc_TypeError,
                     "register_code() takes 2 arguments (%zd given)", nargs);
        return NULL;
    }
    if (check_code(args[0]) < 0) {
        return NULL;
    }
    /* None means "no state", as code_state() reports it. */
    PyObject *value = args[1] == Py_None ? NULL : Py_NewRef(args[1]);
    /* Frees (decrefs) the previous value through code_state_free. */
    if (code_set_extra(args[0], extra_index, value) < 0) {
        Py_XDECREF(value);
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *
frame_unregister_code(PyObject *module, PyObject *code)
{
    if (check_code(code) < 0 || code_set_extra(code, extra_index, NULL) < 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *
frame_code_state(PyObject *module, PyObject *code)
{
    if (check_code(code) < 0) {
        return NULL;
    }
    PyObject *state = code_state_get((PyCodeObject *)code);
    return Py_NewRef(state != NULL ? state : Py_None);
}

static PyObject *
frame_run_plain(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                PyObject *kwnames)
{
    if (nargs < 1) {
        PyErr_SetString(PyExc_TypeError, "run_plain() needs a callable");
        return NULL;
    }
    if (disabled_add(1) < 0) {
        return NULL;
    }
    PyObject *result = PyObject_Vectorcall(args[0], args + 1, nargs - 1, kwnames);
    disabled_add(-1);
    return result;
}

/* A dispatcher entry for calls that run as Python (a PythonRun, tracer.specialize): self_obj
 * is (fn, types).  When every argument's type is exactly the one at its place, fn(*args) runs
 * as run_plain() runs it; otherwise the entry is "not mine" (NULL, no exception).  Its address
 * is `plain_entry_address`, for add_native: such calls skip the miss path's Python. */
static PyObject *
plain_entry(PyObject *self_obj, PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *types = PyTuple_GET_ITEM(self_obj, 1);
    if (nargs != PyTuple_GET_SIZE(types)) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < nargs; i++) {
        if ((PyObject *)Py_TYPE(args[i]) != PyTuple_GET_ITEM(types, i)) {
            return NULL;
        }
    }
    if (disabled_add(1) < 0) {
        return NULL;
    }
    PyObject *result = PyObject_Vectorcall(PyTuple_GET_ITEM(self_obj, 0), args, nargs, NULL);
    disabled_add(-1);
    return result;
}

static PyObject *
frame_interception_disabled(PyObject *module, PyObject *unused)
{
    return PyBool_FromLong(disabled_depth() != 0);
}

static PyMethodDef frame_methods[] = {
    {"install", frame_install, METH_NOARGS,
     "install()\n--\n\nInstall the frame hook (nested: each install() needs an "
     "uninstall())."},
    {"uninstall", frame_uninstall, METH_NOARGS,
     "uninstall()\n--\n\nUndo one install(); the last one restores the previous "
     "evaluator."},
    {"installed", frame_installed, METH_NOARGS,
     "installed()\n--\n\nWhether the frame hook is installed."},
    {"set_frame_callback", frame_set_frame_callback, METH_O,
     "set_frame_callback(cb)\n--\n\n"
     "cb(code, args, globals, builtins, closure) runs before a captured frame;\n"
     "it returns the frame's result, or SKIP to evaluate the frame normally,\n"
     "or raises.  None removes it.  Returns the previous callback."},
    {"set_capture_all", frame_set_capture_all, METH_O,
     "set_capture_all(flag)\n--\n\n"
     "When true, functions with no code state also go to the callback.\n"
     "Returns the previous flag."},
    {"register_code", (PyCFunction)(void (*)(void))frame_register_code,
     METH_FASTCALL,
     "register_code(code, value)\n--\n\n"
     "Set the code object's state: SKIP (never intercept), a Dispatcher (try\n"
     "its native entries, then the callback), or anything else (always the\n"
     "callback).  None removes the state."},
    {"unregister_code", frame_unregister_code, METH_O,
     "unregister_code(code)\n--\n\nRemove the code object's state."},
    {"code_state", frame_code_state, METH_O,
     "code_state(code)\n--\n\nThe code object's state, or None."},
    {"run_plain", (PyCFunction)(void (*)(void))frame_run_plain,
     METH_FASTCALL | METH_KEYWORDS,
     "run_plain(fn, /, *args, **kwargs)\n--\n\n"
     "Call fn(*args, **kwargs) with interception disabled on this thread."},
    {"interception_disabled", frame_interception_disabled, METH_NOARGS,
     "interception_disabled()\n--\n\n"
     "Whether interception is disabled on this thread (inside the callback\n"
     "or run_plain)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef frame_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "tracer.native",
    .m_doc = "PEP 523 frame hook and native-entry Dispatcher for the tracer.",
    .m_size = -1,
    .m_methods = frame_methods,
};

PyMODINIT_FUNC
PyInit_native(void)
{
    if (extra_index < 0) {
        if (PyThread_tss_create(&disabled_key) != 0) {
            PyErr_NoMemory();
            return NULL;
        }
        extra_index = request_code_extra_index(code_state_free);
        if (extra_index < 0) {
            PyErr_SetString(PyExc_RuntimeError, "no free code-object extra slot");
            return NULL;
        }
    }
    PyObject *module = PyModule_Create(&frame_module);
    if (module == NULL) {
        return NULL;
    }
    if (dispatch_module_init(module) < 0 || gather_module_init(module) < 0
            || tools_module_init(module) < 0 || released_module_init(module) < 0
            || pool_module_init(module) < 0 || objload_module_init(module) < 0
            || runtime_module_init(module) < 0
            || tools_add_address(module, "plain_entry_address", (void *)(uintptr_t)&plain_entry) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
