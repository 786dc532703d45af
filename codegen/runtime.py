"""The JIT's runtime: what compiled code calls that must outlive any one compiled function. It is
C, in tracer.native (tracer/csrc/runtime.c and released.c), ready when the module loads: no
process compiles a runtime before its first function, and compiled objects (the compile cache's
too) name its functions by their tracer.native attribute.

- `__tracer_alloc_block` / `__tracer_free_block`: the kernels' malloc and free, with a small
  lock-free cache of big blocks (a loop over a million elements that writes fresh arrays would
  otherwise page-fault its results into existence on every call) marked MADV_HUGEPAGE.
- `__tracer_free_capsule`: the destructor of the capsules that own array results.
- `__tracer_check_signals`: what a kernel's loops call now and then (KernelBuilder.poll_signals)
  so that Ctrl-C interrupts them: `PyErr_CheckSignals()` where this thread holds the GIL, then
  the GIL's release where the kernel's entry allows it (codegen.entry.releases_gil); the check
  of a kernel that released the GIL otherwise. On x86-64 it keeps LLVM's preserve_most
  convention (the loops that call it, on a cold path, keep their values in registers).
- `__tracer_pairwise_sum_f64` / `_f32` / `_f16`: NumPy's pairwise summation, which every kernel
  with a sum calls (codegen.reductions).

An exported library (codegen.export) calls plain malloc and free instead, never polls, and
defines its own pairwise sums: it has no runtime.
"""
from __future__ import annotations

from codegen.entry_lists import (
    ARRAY_ACQUIRE,
    ARRAY_ITEMS,
    ARRAY_SCATTER,
    GATHER_LIST,
    LIST_OF_NUMBERS,
    LISTS_ALIASED,
    SCATTER_LIST,
)
from codegen.kernel import KernelRuntime
from codegen.parallel import PARALLEL_FOR
from codegen.reductions import PAIRWISE_SUMS, PARALLEL_FUSED_SUMS, PARALLEL_SUMS
from tracer import ir, native

# what tracer.native defines for compiled code that runs without the GIL (tracer/csrc/released.h):
# the failed site per thread, the release's begin and end around a kernel
NOTE_SITE = "__tracer_note_site"
THREAD_FAILED_SITE = "__tracer_thread_failed_site"
RELEASE_BEGIN = "__tracer_release_begin"
RELEASE_END = "__tracer_release_end"

# what the JIT's kernels call: the caching allocator, the signal check, the failed site's note
JIT_MEMORY = KernelRuntime("__tracer_alloc_block", "__tracer_free_block", "__tracer_check_signals",
                           native.check_signals_convention, shared_helpers=True, note_site=NOTE_SITE)
FREE_CAPSULE = "__tracer_free_capsule"


def native_symbols() -> dict[str, int]:
    """The addresses of the runtime's functions, and of tracer.native's others for compiled code."""
    return {FREE_CAPSULE: native.free_capsule_address, JIT_MEMORY.alloc: native.alloc_block_address,
            JIT_MEMORY.free: native.free_block_address, JIT_MEMORY.check_signals: native.check_signals_address,
            PAIRWISE_SUMS[ir.F64]: native.pairwise_sum_f64_address,
            PAIRWISE_SUMS[ir.F32]: native.pairwise_sum_f32_address,
            PAIRWISE_SUMS[ir.F16]: native.pairwise_sum_f16_address,
            GATHER_LIST: native.gather_list_address, SCATTER_LIST: native.scatter_list_address,
            LISTS_ALIASED: native.lists_aliased_address, LIST_OF_NUMBERS: native.list_of_numbers_address,
            ARRAY_ACQUIRE: native.array_acquire_address, ARRAY_ITEMS: native.array_items_address,
            ARRAY_SCATTER: native.array_scatter_address,
            NOTE_SITE: native.note_site_address, THREAD_FAILED_SITE: native.failed_site_address,
            RELEASE_BEGIN: native.release_begin_address, RELEASE_END: native.release_end_address,
            PARALLEL_FOR: native.parallel_for_address, PARALLEL_SUMS[ir.F64]: native.parallel_sum_f64_address,
            PARALLEL_SUMS[ir.F32]: native.parallel_sum_f32_address,
            PARALLEL_FUSED_SUMS[ir.F64]: native.parallel_fused_sum_f64_address,
            PARALLEL_FUSED_SUMS[ir.F32]: native.parallel_fused_sum_f32_address}
