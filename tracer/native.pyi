"""Types of the C extension `tracer.native` (sources in tracer/csrc/): the PEP 523 frame hook,
the dispatcher that calls compiled entries, the list gatherer the loaders use, and what debuggers,
profilers and tracebacks see of compiled functions."""
from collections.abc import Callable
from types import CodeType
from typing import Any, final

@final
class Sentinel: ...

MISS: Sentinel      # no native entry took the call
python_entry_address: int   # an entry that calls its self_obj(args tuple): MISS from it is "not mine"
plain_entry_address: int    # an entry for (fn, types): fn(*args) as run_plain() when each type is exact, else "not mine"
gather_list_address: int   # int32 gather_list(list, out, n, m, is_float): a list argument read by a compiled entry (tracer/csrc/gather.c)
scatter_list_address: int   # int32 scatter_list(list, in, n, m, is_float): its numbers written back, 0 or -1
list_of_numbers_address: int   # PyObject *list_of_numbers(data, n, kind): a returned list of run-time length
lists_aliased_address: int   # int32 lists_aliased(written, rows, n, others, rows, n): lists written back that are read by another path
array_acquire_address: int   # char *array_acquire(obj, Py_buffer *, int32 typecode, n): an array.array argument's memory, exported
array_items_address: int   # void array_items(data, int32 typecode, n, out): its items as float64 or int64
array_scatter_address: int   # int32 array_scatter(obj, int32 typecode, in, n): the numbers back after a call, 0 or -1
ABSENT: Sentinel    # a guard: the attribute or binding is missing
SKIP: Sentinel      # the hook's answer: run the frame as plain Python

class Dispatcher:
    """Calls the first native entry that takes the arguments; otherwise calls `miss`."""

    miss: Callable[..., Any]
    plain: Callable[..., Any] | None   # called instead while a debugger or profiler watches
    entries: tuple[tuple[int, object, tuple[Any, ...]], ...]
    entry_count: int
    def __init__(self, miss: Callable[..., Any], name: str, qualname: str | None = None,
                 plain: Callable[..., Any] | None = None) -> None: ...
    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...
    def add_native(self, entry_address: int, self_obj: object, guards: tuple[Any, ...]) -> None: ...
    def clear(self) -> None: ...
    def try_entries(self, args: tuple[Any, ...]) -> Any: ...

def set_frame_callback(cb: Callable[..., Any]) -> None: ...
def install() -> None: ...
def uninstall() -> None: ...
def installed() -> bool: ...
def set_capture_all(flag: bool) -> None: ...
def interception_disabled() -> bool: ...
def run_plain(fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any: ...
def code_state(code: CodeType) -> object: ...
def register_code(code: CodeType, value: object) -> None: ...
def unregister_code(code: CodeType) -> None: ...
def gather(out: Any, items: list[Any], attr: str | None, row_length: int) -> Any: ...
def scatter(array: Any, items: list[Any], attr: str | None, row_length: int) -> None: ...
def same_values(items: list[Any], attr: str, value: object) -> bool: ...
def run_as_python() -> bool: ...
def set_disabled(flag: bool) -> bool: ...
def hide_frames(prefixes: tuple[str, ...]) -> None: ...

add_traceback_address: int   # void add_traceback(const TracebackSite *) (tracer/csrc/tools.h)
call_out_failed_address: int   # void call_out_failed(const TracebackSite *): the same, without the tracer's frames
release_begin_address: int   # int32 begin(int32 allowed): whether the kernel may release the GIL (tracer/csrc/released.h)
release_end_address: int   # void end(int32 previous): the GIL back if the kernel released it
check_signals_address: int   # int32 check_signals(void): the kernels' signal check, 0 or -1 (tracer/csrc/released.h)
check_signals_convention: str   # the LLVM calling convention to call it with ("preserve_mostcc" on x86-64)
alloc_block_address: int   # void *alloc_block(uint64 n): the kernels' caching malloc (tracer/csrc/runtime.h)
free_block_address: int   # void free_block(void *)
free_capsule_address: int   # void free_capsule(PyObject *): the destructor of an array result's capsule
pairwise_sum_f64_address: int   # double sum(data, n, stride, int32 *interrupted): NumPy's pairwise sum
pairwise_sum_f32_address: int   # float sum(...): the same for float32
pairwise_sum_f16_address: int   # float sum(...): float16 elements added in float32
note_site_address: int   # void note_site(int32): this thread's failed site (codegen.tracebacks)
failed_site_address: int   # int32 failed_site(void)
parallel_for_address: int   # int32 parallel_for(body, ctx, n, grain): the pool of parallel=True code (tracer/csrc/pool.h)
parallel_sum_f64_address: int   # double sum(pairwise_sum_f64, data, n, stride, interrupted): NumPy's pairwise sum on the pool
parallel_sum_f32_address: int   # the same for float32
parallel_fused_sum_f64_address: int   # double sum(fused, ctx, n, failed, interrupted): a fused sum's leaves on the pool
parallel_fused_sum_f32_address: int   # the same for float32
def set_num_threads(n: int, /) -> None: ...
def get_num_threads() -> int: ...

@final
class LoadedObject:
    """The memory of an object load_object loaded (tracer/csrc/objload.h): unmapped when dropped."""

    size: int      # the bytes mapped
    address: int   # where

def load_object(image: bytes, symbols: dict[str, int], exports: tuple[str, ...], /) -> tuple[LoadedObject, tuple[int, ...]]: ...
