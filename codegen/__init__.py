"""The back end: typed IR (tracer.ir) -> LLVM IR -> native code, with a CPython entry point.

    lower_function(fn, module, symbol)     the kernel (codegen.lower; each op by its rule in
                                           codegen.lowerings.LOWERINGS, found by lowering_for)
    lower_module(fn, entry_args)           kernel + CPython entry in one llvmlite module
    optimize(module) / assembly(module)    O3 for the host, and its assembly text
    compile_function(fn, entry_args, name) JIT in process -> CompiledFunction
    llvm_ir_for / assembly_for(fn, entry_args, name)   optimized text for `dump`, no JIT

It reads only tracer.ir, tracer.ir.ops and tracer.errors.
"""
from codegen.jit import CompiledFunction, assembly_for, compile_function, llvm_ir_for
from codegen.lower import lower_function
from codegen.lowerings import LOWERINGS, lowering_for, lowers
from codegen.module import entry_symbol, kernel_symbol, lower_module
from codegen.target import assembly, host_target_machine, optimize, parse

__all__ = ["CompiledFunction", "compile_function", "llvm_ir_for", "assembly_for", "LOWERINGS", "lowering_for",
           "lowers", "lower_function", "lower_module", "kernel_symbol", "entry_symbol", "optimize", "assembly",
           "parse", "host_target_machine"]
