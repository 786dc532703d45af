"""Compile an IR function to native code in this process: one shared LLJIT, one library per
compile, and a handle (`CompiledFunction`) that keeps the code loaded while it is referenced."""
from __future__ import annotations

import functools
import itertools
import threading
import time
from dataclasses import dataclass, field

import llvmlite.binding as llvm

from codegen.entry import object_symbols
from codegen.module import entry_symbol, kernel_symbol, lower_module
from codegen.runtime import JIT_MEMORY, RUNTIME, RUNTIME_FUNCTIONS
from codegen.target import assembly, host_target_machine, optimize
from tracer import ir

_lock = threading.Lock()          # LLVM's global context is not thread safe
_serial = itertools.count()


@functools.cache
def _lljit() -> llvm.LLJIT:
    return llvm.create_lljit_compiler(host_target_machine())


_runtime_library = None           # codegen.runtime's functions: loaded once, never unloaded


def runtime_symbols() -> dict[str, int]:
    """The RUNTIME functions' addresses (loading them on first use)."""
    global _runtime_library
    if _runtime_library is None:
        obj = host_target_machine().emit_object(optimize(RUNTIME))
        library = llvm.JITLibraryBuilder().add_object_img(obj).add_current_process()
        for name in RUNTIME_FUNCTIONS:
            library.export_symbol(name)
        _runtime_library = library.link(_lljit(), "tracer_runtime")
    return {name: _runtime_library[name] for name in RUNTIME_FUNCTIONS}


@dataclass(eq=False)
class CompiledFunction:
    name: str
    kernel_symbol: str
    entry_symbol: str
    kernel_address: int | None       # the kernel ABI of codegen.lower (None: not exported)
    entry_address: int | None        # the METH_FASTCALL entry of codegen.entry (None: no entry)
    llvm_ir: str                     # as lowered, before any pass
    timings: dict = field(repr=False)       # seconds per stage: lower, optimize, codegen, link
    _module: llvm.ModuleRef = field(repr=False)
    _tracker: object = field(repr=False)    # the code is unloaded when this is collected

    @functools.cached_property
    def optimized_ir(self) -> str:
        """The LLVM IR after O3 (text made on demand: a compile does not need it)."""
        with _lock:
            return str(self._module)

    @functools.cached_property
    def assembly(self) -> str:
        """Host assembly of the optimized module, as loaded (made on demand: a second codegen)."""
        with _lock:
            return assembly(self._module)


def compile_function(fn: ir.Function, entry_args: list[ir.EntryArg] | None, name: str | None = None,
                     export_kernel: bool = True) -> CompiledFunction:
    """Lower `fn` with its CPython entry, optimize at O3 for this CPU, and load it.

    With `export_kernel=False` the kernel lives only inlined in the entry (kernel_address is
    None): a third less to optimize and compile, for callers that only use the entry. With
    `entry_args=None` there is no entry (entry_address is None): the kernel ABI only."""
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
        optimized = optimize(llvm_ir)
        t2 = time.perf_counter()
        # codegen with our target machine (the JIT's is built from the same one), then link
        obj = host_target_machine().emit_object(optimized)
        t3 = time.perf_counter()
        library = (llvm.JITLibraryBuilder()
                   .add_object_img(obj)
                   .add_current_process())         # the C API and libm, resolved in process
        for name, address in runtime_symbols().items():   # the kernel's allocator, the entry's capsules
            library.import_symbol(name, address)
        if entry_args is not None:
            library.export_symbol(entry_symbol(symbol))
            for name, address in object_symbols(fn, entry_args).items():
                library.import_symbol(name, address)
        if export_kernel:
            library.export_symbol(symbol)
        tracker = library.link(_lljit(), f"tracer_{n}")
        t4 = time.perf_counter()
    timings = {"lower": t1 - t0, "optimize": t2 - t1, "codegen": t3 - t2, "link": t4 - t3}
    return CompiledFunction(name, symbol, entry_symbol(symbol), tracker[symbol] if export_kernel else None,
                            tracker[entry_symbol(symbol)] if entry_args is not None else None,
                            llvm_ir, timings, optimized, tracker)


def llvm_ir_for(fn: ir.Function, entry_args: list[ir.EntryArg], name: str | None = None) -> str:
    """The optimized LLVM IR `compile_function` would load (for `dump`; nothing is loaded)."""
    with _lock:
        return str(optimize(lower_module(fn, entry_args, kernel_symbol(name or fn.name), memory=JIT_MEMORY)))


def assembly_for(fn: ir.Function, entry_args: list[ir.EntryArg], name: str | None = None) -> str:
    """The host assembly of that optimized module (for `dump`; nothing is loaded)."""
    with _lock:
        return assembly(optimize(lower_module(fn, entry_args, kernel_symbol(name or fn.name), memory=JIT_MEMORY)))
