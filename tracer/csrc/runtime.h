/* The JIT's runtime: functions compiled code calls that outlive any one compiled function.
 *
 * - runtime_alloc_block / runtime_free_block: the kernels' malloc and free.  Blocks of at
 *   least BIG_BLOCK bytes are where the time goes when a loop over a million elements writes
 *   fresh arrays: every call would page-fault its results into existence (on this project's
 *   VMs, about 2 us per 4 KB page, more than the loop itself).  So a freed big block is kept in
 *   a small cache (CACHE_SLOTS blocks, CACHE_BYTES in all) and handed to the next request it
 *   fits snugly (at most a quarter larger), and a fresh big block is marked MADV_HUGEPAGE (2 MB
 *   pages: 512 times fewer faults) where the kernel allows it.  The cache is lock-free (atomic
 *   exchange of its slots), so kernels that run without the GIL may use it too.
 * - runtime_free_capsule: the destructor of the capsules that own array results (an array can
 *   outlive the code that made it).
 * - runtime_pairwise_sum_f64 / _f32 / _f16: NumPy's pairwise summation
 *   (numpy/_core/src/umath/loops_utils.h.src), bit for bit, which every kernel with a sum calls
 *   (codegen.reductions declares them; an exported library defines its own copy in LLVM IR).
 *
 * The signal check that kernels poll is released_check_signals (released.h).  Being C, all of
 * it is ready when the module loads: a process compiles no runtime before its first function.
 */
#ifndef TRACER_RUNTIME_H
#define TRACER_RUNTIME_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* Adds the functions' addresses to `module` (alloc_block_address, ...); -1 on error. */
int runtime_module_init(PyObject *module);

#endif
