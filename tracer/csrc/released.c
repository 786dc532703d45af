/* Compiled code that runs without the GIL: see released.h. */
#include "released.h"

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

static int
add_address(PyObject *module, const char *name, void *address)
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
    if (add_address(module, "release_begin_address", (void *)(uintptr_t)&released_begin) < 0
            || add_address(module, "release_end_address", (void *)(uintptr_t)&released_end) < 0
            || add_address(module, "poll_holding_address", (void *)(uintptr_t)&released_poll_holding) < 0
            || add_address(module, "poll_released_address", (void *)(uintptr_t)&released_poll) < 0
            || add_address(module, "note_site_address", (void *)(uintptr_t)&released_note_site) < 0
            || add_address(module, "failed_site_address", (void *)(uintptr_t)&released_failed_site) < 0) {
        return -1;
    }
    return 0;
}
