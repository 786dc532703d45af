"""Compile an IR function to native code in this process, and unload it when it is dropped.

Each compile emits one object (absolute 64-bit relocations: codegen.target) and links it: on Linux x86-64 in memory by
`tracer.native.load_object` (the linker the compile cache loads stored objects with: the code a
process runs is the code the cache stores), elsewhere into an LLJIT. It returns a handle
(`CompiledFunction`) that keeps the code loaded while it is referenced; a process that compiles
and drops functions forever stays at a fixed size:
- each compile parses its module into an LLVM context of its own, freed with the function (the
  global context keeps a little of everything parsed into it, for good);
- unloading a library frees its code, but its LLJIT keeps a little bookkeeping per library ever
  linked (about 12 KB), so an LLJIT takes at most `LIBRARIES_PER_JIT` libraries and is then
  retired: it is freed, bookkeeping and all, once the last of its libraries is unloaded.
"""
from __future__ import annotations

import functools
import itertools
import sys
import threading
import time
from dataclasses import dataclass, field

import llvmlite.binding as llvm

from codegen.entry import object_symbols
from codegen.linalg import lapack_symbols
from codegen.module import entry_symbol, kernel_symbol, lower_module
from codegen.numpy_math import WIDE_VECTOR_OPS
from codegen.runtime import JIT_MEMORY, native_symbols
from codegen.sorts import numpy_sort_symbols
from codegen.target import assembly, host_target_machine, optimize, parse
from tracer import ir, native
from tracer.cache.store import linkable

# Compiles share LLVM objects that are not thread safe (the target machine, the JITs, the global
# context of the runtime and of codegen.target's pass builder), and the bookkeeping below. Re-entrant:
# a function collected while this thread compiles unloads its library (under the lock) there and then.
_lock = threading.RLock()
_serial = itertools.count()

LIBRARIES_PER_JIT = 32


class _Jit:
    """An LLJIT with the count of libraries linked into it and still loaded."""

    def __init__(self):
        self.lljit = llvm.create_lljit_compiler(host_target_machine())
        self.linked = 0
        self.loaded = 0


# Every open LLJIT, and the LLVM context of every loaded library, is referenced from here until
# LoadedLibrary.unload closes it, after what lives in it (llvmlite's own finalizers run in no set
# order within a collected cycle: an LLJIT freed before one of its libraries, or a context before
# its module, would crash).
_open_jits: set[_Jit] = set()
_open_contexts: set = set()
_current_jit: _Jit | None = None


def _jit_for_next_library() -> _Jit:
    global _current_jit
    if _current_jit is None or _current_jit.linked >= LIBRARIES_PER_JIT:
        retired, _current_jit = _current_jit, _Jit()
        _open_jits.add(_current_jit)
        if retired is not None and retired.loaded == 0:
            _close(retired)
    return _current_jit


def _close(jit: _Jit) -> None:
    _open_jits.discard(jit)
    jit.lljit.close()


class LoadedLibrary:
    """One linked library, and the optimized module it was compiled from with its LLVM context:
    its exported addresses are valid until it is unloaded, which happens when this handle is
    collected."""

    def __init__(self, jit: _Jit, tracker, module: llvm.ModuleRef, context):
        self._jit = jit
        self._tracker = tracker          # llvmlite's handle: closing it unloads the code
        self.module = module
        self._context = context
        _open_contexts.add(context)
        jit.linked += 1
        jit.loaded += 1

    def __getitem__(self, symbol: str) -> int:
        return self._tracker[symbol]

    def unload(self) -> None:
        """Free the library's code now (its addresses must not be called afterwards)."""
        if sys.is_finalizing():
            return                       # the process is ending: the OS takes it all back
        with _lock:
            if self._tracker is None:
                return
            self._tracker.close()
            self._tracker = None
            self.module.close()
            _open_contexts.discard(self._context)
            self._context.close()
            jit = self._jit
            jit.loaded -= 1
            if jit.loaded == 0 and jit is not _current_jit:
                _close(jit)

    __del__ = unload


class LinkedObject:
    """One object linked in memory by tracer.native.load_object (Linux x86-64), and the optimized
    module it was compiled from with its LLVM context: its exported addresses are valid until it
    is unloaded, which happens when this handle is collected (the mapping goes with it)."""

    def __init__(self, linked, addresses: dict[str, int], module: llvm.ModuleRef, context):
        self._linked = linked
        self._addresses = addresses
        self.module = module
        self._context = context
        _open_contexts.add(context)

    def __getitem__(self, symbol: str) -> int:
        return self._addresses[symbol]

    def unload(self) -> None:
        if sys.is_finalizing():
            return
        with _lock:
            if self._linked is None:
                return
            self._linked = None
            self.module.close()
            _open_contexts.discard(self._context)
            self._context.close()

    __del__ = unload


def _target_machine(fn: ir.Function) -> llvm.TargetMachine:
    """The host's, with 512-bit vectors for a function with np.exp or np.log of arrays (codegen.numpy_math)."""
    return host_target_machine(wide=any(v.op in WIDE_VECTOR_OPS for v in fn.walk()))


@dataclass(eq=False)
class CompiledFunction:
    name: str
    kernel_symbol: str
    entry_symbol: str
    kernel_address: int | None       # the kernel ABI of codegen.lower (None: not exported)
    entry_address: int | None        # the METH_FASTCALL entry of codegen.entry (None: no entry)
    llvm_ir: str                     # as lowered, before any pass
    timings: dict = field(repr=False)       # seconds per stage: lower, optimize, codegen, link
    _library: LoadedLibrary = field(repr=False)    # the code is unloaded when this is collected
    object_code: bytes | None = field(default=None, repr=False)   # what was linked (tracer.cache stores it)
    imports: dict = field(default_factory=dict, repr=False)        # the process's symbols it was linked with

    @functools.cached_property
    def optimized_ir(self) -> str:
        """The LLVM IR after O3 (text made on demand: a compile does not need it)."""
        with _lock:
            return str(self._library.module)

    @functools.cached_property
    def assembly(self) -> str:
        """Host assembly of the optimized module, as loaded (made on demand: a second codegen)."""
        with _lock:
            return assembly(self._library.module)


def compile_function(fn: ir.Function, entry_args: list[ir.EntryArg] | None, name: str | None = None,
                     export_kernel: bool = True, keep_object: bool = False) -> CompiledFunction:
    """Lower `fn` with its CPython entry, optimize at O3 for this CPU, and load it.

    With `export_kernel=False` the kernel lives only inlined in the entry (kernel_address is
    None): a third less to optimize and compile, for callers that only use the entry. With
    `entry_args=None` there is no entry (entry_address is None): the kernel ABI only. With
    `keep_object`, the object code linked stays on the result (for the compile cache to store)."""
    name = name or fn.name
    with _lock:
        t0 = time.perf_counter()
        n = next(_serial)
        symbol = f"{kernel_symbol(name)}_{n}"        # unique: one process, many specializations
        module = lower_module(fn, entry_args, symbol, memory=JIT_MEMORY)
        if not export_kernel:
            module.get_global(symbol).linkage = "internal"
        llvm_ir = str(module)
        t1 = time.perf_counter()
        context = llvm.create_context()
        tm = _target_machine(fn)
        optimized = optimize(parse(llvm_ir, context=context), tm)
        t2 = time.perf_counter()
        # codegen with our target machine (the JIT's is built from the host's), then link
        obj = tm.emit_object(optimized)
        t3 = time.perf_counter()
        imports = {**native_symbols(), **lapack_symbols(fn), **numpy_sort_symbols(fn)}   # the allocator, NumPy's LAPACK and sorts
        if entry_args is not None:
            imports.update(object_symbols(fn, entry_args))     # the entry's types and capsules
        exports = ([entry_symbol(symbol)] if entry_args is not None else []) + ([symbol] if export_kernel else [])
        if linkable():       # linked in memory as the compile cache links it (no LLJIT)
            linked, addresses = native.load_object(obj, imports, tuple(exports))
            loaded = LinkedObject(linked, dict(zip(exports, addresses)), optimized, context)
        else:
            loaded = _link_with_lljit(obj, imports, exports, n, optimized, context)
        t4 = time.perf_counter()
    timings = {"lower": t1 - t0, "optimize": t2 - t1, "codegen": t3 - t2, "link": t4 - t3}
    return CompiledFunction(name, symbol, entry_symbol(symbol), loaded[symbol] if export_kernel else None,
                            loaded[entry_symbol(symbol)] if entry_args is not None else None,
                            llvm_ir, timings, loaded, obj if keep_object else None, imports)


def _link_with_lljit(obj: bytes, imports: dict, exports: list, n: int, optimized, context) -> LoadedLibrary:
    library = (llvm.JITLibraryBuilder()
               .add_object_img(obj)
               .add_current_process())         # the C API and libm, resolved in process
    for import_name, address in imports.items():
        library.import_symbol(import_name, address)
    for name in exports:
        library.export_symbol(name)
    jit = _jit_for_next_library()
    return LoadedLibrary(jit, library.link(jit.lljit, f"tracer_{n}"), optimized, context)


def llvm_ir_for(fn: ir.Function, entry_args: list[ir.EntryArg], name: str | None = None) -> str:
    """The optimized LLVM IR `compile_function` would load (for `dump`; nothing is loaded)."""
    with _lock:
        module = lower_module(fn, entry_args, kernel_symbol(name or fn.name), memory=JIT_MEMORY)
        return str(optimize(parse(module, context=llvm.create_context()), _target_machine(fn)))


def assembly_for(fn: ir.Function, entry_args: list[ir.EntryArg], name: str | None = None) -> str:
    """The host assembly of that optimized module (for `dump`; nothing is loaded)."""
    with _lock:
        module = lower_module(fn, entry_args, kernel_symbol(name or fn.name), memory=JIT_MEMORY)
        tm = _target_machine(fn)
        return assembly(optimize(parse(module, context=llvm.create_context()), tm), tm)
