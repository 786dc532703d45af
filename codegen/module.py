"""The LLVM module for one IR function: its kernel and its CPython entry, under namespaced symbols."""
from __future__ import annotations

import re

from llvmlite import ir as ll

from codegen.entry import lower_entry
from codegen.kernel import C_MEMORY
from codegen.lower import lower_function
from codegen.target import host_target_machine
from tracer import ir

SYMBOL_PREFIX = "__tracer_"


def kernel_symbol(name: str) -> str:
    """`__tracer_<name>`: a user function named `fma` or `sin` must not be libm's symbol."""
    return SYMBOL_PREFIX + re.sub(r"[^A-Za-z0-9_]", "_", name)


def entry_symbol(kernel: str) -> str:
    return kernel + "_entry"


def lower_module(fn: ir.Function, entry_args: list[ir.EntryArg] | None = None,
                 symbol: str | None = None, tm=None, memory: tuple[str, str] = C_MEMORY) -> ll.Module:
    """An llvmlite module with the kernel `symbol` (default `kernel_symbol(fn.name)`) and, when
    `entry_args` is given, its CPython entry `entry_symbol(symbol)`; for the host unless `tm`.
    `memory` names the kernel's (alloc, free) functions (see KernelBuilder)."""
    symbol = symbol or kernel_symbol(fn.name)
    tm = tm or host_target_machine()
    module = ll.Module(name=fn.name)
    module.triple = tm.triple
    module.data_layout = str(tm.target_data)
    kernel = lower_function(fn, module, symbol, memory)
    if entry_args is not None:
        lower_entry(fn, entry_args, module, kernel, entry_symbol(symbol))
    return module
