/* The thread pool of `parallel=True` code (codegen.parallel).
 *
 * pool_parallel_for(body, ctx, n, grain) runs body(ctx, lo, hi) over range(n) cut into chunks of
 * at least `grain` iterations, on this thread and the pool's workers, and returns the status of
 * the first chunk (in index order) whose body returned one other than 0: what a failure returns
 * does not depend on which thread ran what.  The chunks depend on n and the pool's size only.
 *
 * The pool is the runtime's own (no OpenMP): TRACER_NUM_THREADS threads (default: the CPUs this
 * process may run on), the caller among them, started on first use, never holding the GIL, with
 * every signal blocked (Python's handlers run in the main thread).  One parallel loop runs at a
 * time: a call made while the pool is busy (another Python thread's, or a signal handler's) runs
 * all of range(n) on its own thread.  A forked child starts with no workers and makes its own.
 */
#ifndef TRACER_POOL_H
#define TRACER_POOL_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>

typedef int32_t (*pool_body)(void *ctx, int64_t lo, int64_t hi);

/* Adds parallel_for_address, set_num_threads and get_num_threads to `module`; -1 on error. */
int pool_module_init(PyObject *module);

#endif
