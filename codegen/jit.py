"""Compile an IR function to native code in this process: one shared LLJIT, one library per
compile, and a handle (`CompiledFunction`) that keeps the code loaded while it is referenced."""
from __future__ import annotations

import functools
import itertools
import threading
from dataclasses import dataclass, field

import llvmlite.binding as llvm

from tracer import ir

from .module import entry_symbol, kernel_symbol, lower_module
from .target import assembly, host_target_machine, optimize

_lock = threading.Lock()          # LLVM's global context is not thread safe
_serial = itertools.count()


@functools.cache
def _lljit() -> llvm.LLJIT:
    return llvm.create_lljit_compiler(host_target_machine())


@dataclass(eq=False)
class CompiledFunction:
    name: str
    kernel_symbol: str
    entry_symbol: str
    kernel_address: int              # the kernel ABI of codegen.lower
    entry_address: int               # the METH_FASTCALL entry of codegen.entry
    llvm_ir: str                     # as lowered
    optimized_ir: str                # after O3
    _tracker: object = field(repr=False)   # the code is unloaded when this is collected

    @functools.cached_property
    def assembly(self) -> str:
        """Host assembly of the optimized module (made on demand: it costs a codegen)."""
        with _lock:
            return assembly(self.optimized_ir)


def compile_function(fn: ir.Function, entry_args: list[ir.EntryArg], name: str | None = None) -> CompiledFunction:
    name = name or fn.name
    with _lock:
        n = next(_serial)
        symbol = f"{kernel_symbol(name)}_{n}"        # unique: one process, many specializations
        module = lower_module(fn, entry_args, symbol)
        llvm_ir = str(module)
        optimized = optimize(llvm_ir)
        optimized_ir = str(optimized)
        tracker = (llvm.JITLibraryBuilder()
                   .add_ir(optimized_ir)
                   .add_current_process()
                   .export_symbol(symbol)
                   .export_symbol(entry_symbol(symbol))
                   .link(_lljit(), f"tracer_{n}"))
    return CompiledFunction(name, symbol, entry_symbol(symbol), tracker[symbol],
                            tracker[entry_symbol(symbol)], llvm_ir, optimized_ir, tracker)
