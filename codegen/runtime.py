"""The JIT's runtime: functions compiled code calls that must outlive any one compiled function,
loaded once per process and never unloaded.

- `__tracer_free_capsule`: the destructor of the capsules that own array results (an array can
  outlive the code that made it).
- `__tracer_alloc_block` / `__tracer_free_block`: the kernels' malloc and free. Blocks of at
  least BIG_BLOCK bytes are where the time goes when a loop over a million elements writes fresh
  arrays: every call would page-fault its results into existence (on this project's VMs, about
  2 us per 4 KB page, more than the loop itself). So a freed big block is kept in a small cache
  (CACHE_SLOTS blocks, CACHE_BYTES in all) and handed to the next request it fits snugly (at
  most a quarter larger), and a fresh big block is marked MADV_HUGEPAGE (2 MB pages: 512 times
  fewer faults) where the kernel allows it. The cache is lock-free (atomic exchange of its
  slots), so kernels that run without the GIL may use it too.
- `__tracer_check_signals`: what a kernel's loops call now and then (KernelBuilder.poll_signals)
  so that Ctrl-C interrupts them: `PyErr_CheckSignals()`, which runs Python's handlers for the
  signals that arrived (KeyboardInterrupt for SIGINT) and returns -1 if one raised. Where this
  thread holds the GIL (a kernel called through the CPython entry) it then releases it if the
  entry allows (codegen.entry.releases_gil); a kernel that released it checks through
  tracer/csrc/released.c; elsewhere (a kernel called through ctypes) it returns 0.

- `__tracer_pairwise_sum_f64` / `_f32`: NumPy's pairwise summation (codegen.reductions), which
  every kernel with a sum calls: compiled here once (`helpers()`), not again for each kernel.

An exported library (codegen.export) calls plain malloc and free instead, never polls, and
defines its own pairwise sums: it has no runtime.
"""
from __future__ import annotations

import platform
import sys

from llvmlite import ir as ll

from codegen.kernel import KernelRuntime
from codegen.parallel import PARALLEL_FOR
from codegen.reductions import PAIRWISE_SUMS, PARALLEL_FUSED_SUMS, PARALLEL_SUMS, define_pairwise_sum
from tracer import ir, native

BIG_BLOCK = 256 * 1024            # bytes: glibc's malloc maps blocks this large afresh each time
CACHE_SLOTS = 16
CACHE_BYTES = 256 * 1024 * 1024   # the most memory freed blocks keep
SNUG = 4                          # a cached block serves requests down to (1 - 1/SNUG) of its size
MADV_HUGEPAGE = 14                # Linux's value on every architecture

# the signal check saves the registers it uses (most of them) where LLVM supports that: the
# loops that call it, on a cold path, keep their values in registers
CHECK_CONVENTION = "preserve_mostcc" if platform.machine().lower() in ("x86_64", "amd64", "aarch64", "arm64") else ""

# what tracer.native defines for compiled code that runs without the GIL (tracer/csrc/released.h):
# the failed site per thread, the release's begin and end around a kernel, the signal checks
NOTE_SITE = "__tracer_note_site"
THREAD_FAILED_SITE = "__tracer_thread_failed_site"
RELEASE_BEGIN = "__tracer_release_begin"
RELEASE_END = "__tracer_release_end"
POLL_HOLDING = "__tracer_poll_holding"
POLL_RELEASED = "__tracer_poll_released"

# what the JIT's kernels call: the caching allocator, the signal check, the failed site's note
JIT_MEMORY = KernelRuntime("__tracer_alloc_block", "__tracer_free_block", "__tracer_check_signals", CHECK_CONVENTION,
                           shared_helpers=True, note_site=NOTE_SITE)
RUNTIME_FUNCTIONS = ("__tracer_free_capsule", JIT_MEMORY.alloc, JIT_MEMORY.free, JIT_MEMORY.check_signals,
                     *PAIRWISE_SUMS.values())


def native_symbols() -> dict[str, int]:
    """The addresses of tracer.native's functions for compiled code (NOTE_SITE...)."""
    return {NOTE_SITE: native.note_site_address, THREAD_FAILED_SITE: native.failed_site_address,
            RELEASE_BEGIN: native.release_begin_address, RELEASE_END: native.release_end_address,
            POLL_HOLDING: native.poll_holding_address, POLL_RELEASED: native.poll_released_address,
            PARALLEL_FOR: native.parallel_for_address, PARALLEL_SUMS[ir.F64]: native.parallel_sum_f64_address,
            PARALLEL_SUMS[ir.F32]: native.parallel_sum_f32_address,
            PARALLEL_FUSED_SUMS[ir.F64]: native.parallel_fused_sum_f64_address,
            PARALLEL_FUSED_SUMS[ir.F32]: native.parallel_fused_sum_f32_address}

# this thread's attached thread state, NULL while it does not hold the GIL (renamed in 3.13)
CURRENT_THREAD_STATE = "PyThreadState_GetUnchecked" if sys.version_info >= (3, 13) else "_PyThreadState_UncheckedGet"


def _huge_pages(block: str) -> str:
    """IR that marks the whole pages inside `block` (of %n bytes) MADV_HUGEPAGE (Linux only)."""
    if not sys.platform.startswith("linux"):
        return ""
    return f"""
  %address = ptrtoint ptr {block} to i64
  %to_page = sub i64 0, %address
  %skip = and i64 %to_page, 4095
  %start = getelementptr i8, ptr {block}, i64 %skip
  %rest = sub i64 %n, %skip
  %pages = and i64 %rest, -4096
  %ignored = call i32 @madvise(ptr %start, i64 %pages, i32 {MADV_HUGEPAGE})"""


RUNTIME = f"""
declare ptr @PyCapsule_GetPointer(ptr, ptr)
declare ptr @malloc(i64)
declare void @free(ptr)
declare i64 @malloc_usable_size(ptr)
declare i32 @madvise(ptr, i64, i32)
declare ptr @{CURRENT_THREAD_STATE}()
declare i32 @PyGILState_Check()
declare i32 @PyErr_CheckSignals()
declare i32 @{POLL_RELEASED}()
declare void @{POLL_HOLDING}()

@cache = internal global [{CACHE_SLOTS} x ptr] zeroinitializer
@cached_bytes = internal global i64 0

define void @__tracer_free_capsule(ptr %capsule) {{
  %data = call ptr @PyCapsule_GetPointer(ptr %capsule, ptr null)
  call void @__tracer_free_block(ptr %data)
  ret void
}}

; PyErr_CheckSignals() if this thread holds the GIL (a thread state is attached, and it is this
; thread's: on 3.11 the first is the GIL holder's, whichever thread that is), then the GIL's
; release where the kernel's entry allows it; else the check of a kernel that released the GIL
; (tracer/csrc/released.c: 0 where nothing released it, as in a kernel called through ctypes)
define {CHECK_CONVENTION} i32 @__tracer_check_signals() cold nounwind {{
entry:
  %state = call ptr @{CURRENT_THREAD_STATE}()
  %attached = icmp ne ptr %state, null
  br i1 %attached, label %mine, label %released
mine:
  %holds = call i32 @PyGILState_Check()
  %held = icmp ne i32 %holds, 0
  br i1 %held, label %check, label %released
check:
  %status = call i32 @PyErr_CheckSignals()
  %raised = icmp ne i32 %status, 0
  br i1 %raised, label %done, label %release
release:
  call void @{POLL_HOLDING}()
  br label %done
done:
  ret i32 %status
released:
  %polled = call i32 @{POLL_RELEASED}()
  ret i32 %polled
}}

; malloc(n), or a cached block that holds n bytes and is at most a quarter larger
define ptr @__tracer_alloc_block(i64 %n) {{
entry:
  %big = icmp uge i64 %n, {BIG_BLOCK}
  br i1 %big, label %search, label %fresh
search:
  %i = phi i64 [0, %entry], [%next, %continue]
  %slot = getelementptr [{CACHE_SLOTS} x ptr], ptr @cache, i64 0, i64 %i
  %block = atomicrmw xchg ptr %slot, ptr null acq_rel
  %empty = icmp eq ptr %block, null
  br i1 %empty, label %continue, label %check
check:
  %size = call i64 @malloc_usable_size(ptr %block)
  %slack = sub i64 %size, %n
  %most = udiv i64 %size, {SNUG}
  %holds = icmp uge i64 %size, %n
  %snug = icmp ule i64 %slack, %most
  %fits = and i1 %holds, %snug
  br i1 %fits, label %take, label %put_back
take:
  %taken = atomicrmw sub ptr @cached_bytes, i64 %size acq_rel
  ret ptr %block
put_back:
  %swap = cmpxchg ptr %slot, ptr null, ptr %block acq_rel monotonic
  %returned = extractvalue {{ptr, i1}} %swap, 1
  br i1 %returned, label %continue, label %drop
drop:
  %dropped = atomicrmw sub ptr @cached_bytes, i64 %size acq_rel
  call void @free(ptr %block)
  br label %continue
continue:
  %next = add i64 %i, 1
  %more = icmp ult i64 %next, {CACHE_SLOTS}
  br i1 %more, label %search, label %fresh
fresh:
  %new = call ptr @malloc(i64 %n)
  %failed = icmp eq ptr %new, null
  %small = xor i1 %big, true
  %plain = or i1 %failed, %small
  br i1 %plain, label %done, label %advise
advise:{_huge_pages("%new")}
  br label %done
done:
  ret ptr %new
}}

; free(p), or keep p in the cache (a big block, while the cache has a slot and room)
define void @__tracer_free_block(ptr %p) {{
entry:
  %null = icmp eq ptr %p, null
  br i1 %null, label %done, label %sized
sized:
  %size = call i64 @malloc_usable_size(ptr %p)
  %big = icmp uge i64 %size, {BIG_BLOCK}
  br i1 %big, label %reserve, label %release
reserve:
  %before = atomicrmw add ptr @cached_bytes, i64 %size acq_rel
  %after = add i64 %before, %size
  %room = icmp ule i64 %after, {CACHE_BYTES}
  br i1 %room, label %insert, label %unreserve
insert:
  %i = phi i64 [0, %reserve], [%next, %occupied]
  %slot = getelementptr [{CACHE_SLOTS} x ptr], ptr @cache, i64 0, i64 %i
  %swap = cmpxchg ptr %slot, ptr null, ptr %p acq_rel monotonic
  %kept = extractvalue {{ptr, i1}} %swap, 1
  br i1 %kept, label %done, label %occupied
occupied:
  %next = add i64 %i, 1
  %more = icmp ult i64 %next, {CACHE_SLOTS}
  br i1 %more, label %insert, label %unreserve
unreserve:
  %undone = atomicrmw sub ptr @cached_bytes, i64 %size acq_rel
  br label %release
release:
  call void @free(ptr %p)
  br label %done
done:
  ret void
}}
"""


def helpers() -> str:
    """The IR of the helpers JIT_MEMORY's kernels declare (`shared_helpers`), linked into the
    runtime: the pairwise sums of float64 and float32."""
    module = ll.Module("tracer_helpers")
    for dtype in PAIRWISE_SUMS:
        define_pairwise_sum(module, dtype, JIT_MEMORY)
    return str(module)
