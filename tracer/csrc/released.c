/* Compiled code that runs without the GIL: see released.h. */
#include "released.h"
#include "tools.h"

#include <stdint.h>
#include <time.h>

#define RELEASED_POLL_NS 10000000LL     /* 10 ms between two signal checks of the main thread */

static __thread PyThreadState *released_state;     /* the GIL released by this thread's kernel */
static __thread int32_t release_allowed;            /* the running kernel may release it */
static __thread long long released_last_poll;
static __thread int32_t failed_site = -1;
static unsigned long main_thread_ident;

static int32_t
released_begin(int32_t allowed)
{
    int32_t previous = release_allowed;
    release_allowed = allowed;
    return previous;
}

static void
released_end(int32_t previous)
{
    release_allowed = previous;
    PyThreadState *state = released_state;
    if (state != NULL) {
        released_state = NULL;
        PyEval_RestoreThread(state);
    }
}

static void
released_poll_holding(void)
{
    if (release_allowed && released_state == NULL) {
        released_state = PyEval_SaveThread();
    }
}

static long long
now_ns(void)
{
    struct timespec t;
#ifdef CLOCK_MONOTONIC_COARSE
    clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
#else
    clock_gettime(CLOCK_MONOTONIC, &t);
#endif
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* 0, or -1 when a signal handler raised (its exception is set in this thread's state). */
static int32_t
released_poll(void)
{
    if (released_state == NULL || PyThread_get_thread_ident() != main_thread_ident) {
        return 0;      /* not released by an entry (a kernel called through ctypes), or not main */
    }
    long long now = now_ns();
    if (now - released_last_poll < RELEASED_POLL_NS) {
        return 0;
    }
    released_last_poll = now;
    /* a signal handler may call compiled code of its own: this thread holds the GIL meanwhile */
    PyThreadState *state = released_state;
    released_state = NULL;
    PyEval_RestoreThread(state);
    int status = PyErr_CheckSignals();
    released_state = PyEval_SaveThread();
    return status;
}

static void
released_note_site(int32_t site)
{
    failed_site = site;
}

static int32_t
released_failed_site(void)
{
    return failed_site;
}

/* The signal check kernels poll (codegen.kernel): PyErr_CheckSignals() where this thread holds
 * the GIL (a thread state is attached, and it is this thread's: on 3.11 the first is the GIL
 * holder's, whichever thread that is), then the GIL's release where the kernel's entry allows it;
 * else the check of a kernel that released the GIL (0 where nothing released it, as in a kernel
 * called through ctypes).  0, or -1 when a handler raised. */
int32_t
released_check_signals(void)
{
#if PY_VERSION_HEX >= 0x030D0000
    PyThreadState *state = PyThreadState_GetUnchecked();
#else
    PyThreadState *state = _PyThreadState_UncheckedGet();
#endif
    if (state == NULL || !PyGILState_Check()) {
        return released_poll();
    }
    int status = PyErr_CheckSignals();
    if (status == 0) {
        released_poll_holding();
    }
    return status;
}

/* The same check as kernels call it on x86-64: with LLVM's preserve_most convention, which
 * saves every general register but r11 (the loops that call it, on a cold path, keep their
 * values in registers).  The stub saves the argument registers the C function may clobber
 * (seven pushes keep the stack 16-byte aligned at the call). */
#if defined(__x86_64__) && defined(__ELF__)
#define CHECK_CONVENTION "preserve_mostcc"
int32_t released_check_signals_preserving(void);
__asm__(".text\n"
        ".p2align 4\n"
        ".globl released_check_signals_preserving\n"
        ".hidden released_check_signals_preserving\n"
        ".type released_check_signals_preserving, @function\n"
        "released_check_signals_preserving:\n"
        "  pushq %rdi\n  pushq %rsi\n  pushq %rdx\n  pushq %rcx\n  pushq %r8\n  pushq %r9\n  pushq %r10\n"
        "  call released_check_signals\n"
        "  popq %r10\n  popq %r9\n  popq %r8\n  popq %rcx\n  popq %rdx\n  popq %rsi\n  popq %rdi\n"
        "  ret\n"
        ".size released_check_signals_preserving, .-released_check_signals_preserving\n");
#define CHECK_ENTRY released_check_signals_preserving
#else
#define CHECK_CONVENTION ""
#define CHECK_ENTRY released_check_signals
#endif

int
released_module_init(PyObject *module)
{
    PyObject *threading = PyImport_ImportModule("threading");
    if (threading == NULL) {
        return -1;
    }
    PyObject *main_thread = PyObject_CallMethod(threading, "main_thread", NULL);
    Py_DECREF(threading);
    if (main_thread == NULL) {
        return -1;
    }
    PyObject *ident = PyObject_GetAttrString(main_thread, "ident");
    Py_DECREF(main_thread);
    if (ident == NULL) {
        return -1;
    }
    main_thread_ident = PyLong_AsUnsignedLong(ident);
    Py_DECREF(ident);
    if (PyErr_Occurred()) {
        return -1;
    }
    if (tools_add_address(module, "release_begin_address", (void *)(uintptr_t)&released_begin) < 0
            || tools_add_address(module, "release_end_address", (void *)(uintptr_t)&released_end) < 0
            || tools_add_address(module, "note_site_address", (void *)(uintptr_t)&released_note_site) < 0
            || tools_add_address(module, "failed_site_address", (void *)(uintptr_t)&released_failed_site) < 0
            || tools_add_address(module, "check_signals_address", (void *)(uintptr_t)&CHECK_ENTRY) < 0
            || PyModule_AddStringConstant(module, "check_signals_convention", CHECK_CONVENTION) < 0) {
        return -1;
    }
    return 0;
}
