/* Compiled code that runs without the GIL.
 *
 * A generated CPython entry (codegen.entry) whose kernel touches no Python object lets the
 * kernel release the GIL, as NumPy releases it around its loops: other Python threads run
 * meanwhile, and two threads in compiled code run on two cores.  The release happens at the
 * kernel's first poll for signals (after about a millisecond of work: codegen.kernel's
 * POLL_BUDGET), so a short call pays nothing for it.  What such a kernel needs of its thread
 * lives here, per thread (LLVM's JIT has no thread-local storage of its own):
 *
 * - released_begin(allowed) -> previous, released_end(previous): around the kernel's call, by
 *   its entry: whether the kernel may release the GIL; the end takes the GIL back if it did;
 * - released_poll_holding: the signal check of a thread that holds the GIL calls it after
 *   PyErr_CheckSignals found nothing: it releases the GIL where that is allowed;
 * - released_poll: the signal check of a thread without the GIL.  Python's signal handlers run
 *   in the main thread only, so elsewhere it does nothing; in the main thread it takes the GIL
 *   back, runs PyErr_CheckSignals and releases the GIL again, at most every RELEASED_POLL_NS, so
 *   that a Python thread running meanwhile is not held up by the polls;
 * - released_note_site / released_failed_site: the index of the user's line where a kernel
 *   failed, noted by the kernel and read by its entry for the traceback (codegen.tracebacks).
 */
#ifndef TRACER_RELEASED_H
#define TRACER_RELEASED_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* The kernels' signal check (and that of the pairwise sums, runtime.c): 0, or -1 when a
 * signal handler raised.  Its address for compiled code is `check_signals_address`, called with
 * the convention `check_signals_convention` names. */
int32_t released_check_signals(void);

/* Adds the functions' addresses to `module` (release_begin_address, ...); -1 on error. */
int released_module_init(PyObject *module);

#endif
