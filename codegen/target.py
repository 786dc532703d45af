"""The target machine (the host's, for the JIT) and the LLVM passes run on a module."""
from __future__ import annotations

import functools

import llvmlite.binding as llvm
from llvmlite import ir as ll


@functools.cache
def initialize() -> None:
    """Make the host's target and assembly printer available to LLVM (once; llvm.initialize()
    is gone in llvmlite 0.50, the native target still needs these)."""
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()


@functools.cache
def host_target_machine() -> llvm.TargetMachine:
    """This CPU, by name and features (so llvm.fma.f64 is one vfmadd), at opt level 3."""
    initialize()
    target = llvm.Target.from_default_triple()
    return target.create_target_machine(cpu=llvm.get_host_cpu_name(),
                                        features=llvm.get_host_cpu_features().flatten(),
                                        opt=3, jit=True)


def parse(module: ll.Module | str, tm: llvm.TargetMachine | None = None) -> llvm.ModuleRef:
    """Parse LLVM IR text (or an llvmlite module) for `tm`, and verify it."""
    tm = tm or host_target_machine()
    ref = llvm.parse_assembly(str(module))
    ref.triple = tm.triple
    ref.data_layout = str(tm.target_data)
    ref.verify()
    return ref


def optimize(module: ll.Module | str | llvm.ModuleRef, tm: llvm.TargetMachine | None = None) -> llvm.ModuleRef:
    """The O3 pipeline of the new pass manager; returns the (parsed, optimized) module."""
    tm = tm or host_target_machine()
    ref = module if isinstance(module, llvm.ModuleRef) else parse(module, tm)
    options = llvm.create_pipeline_tuning_options(speed_level=3)
    options.loop_vectorization = True
    options.slp_vectorization = True
    passes = llvm.create_pass_builder(tm, options)
    passes.getModulePassManager().run(ref, passes)
    return ref


def assembly(module: ll.Module | str | llvm.ModuleRef, tm: llvm.TargetMachine | None = None) -> str:
    """The target's assembly text for a module (as it is: optimize first for O3 code)."""
    tm = tm or host_target_machine()
    ref = module if isinstance(module, llvm.ModuleRef) else parse(module, tm)
    return tm.emit_assembly(ref)
