"""Show what the compiler does to a function: bytecode, IR as captured, IR after the passes,
optimized LLVM IR, and assembly (`python -m tracer dump FILE.py:fn --args 3.0 -1.0 2.0`).
With a transform (`--grad`), the IR stages show the transformed (gradient) function."""
from __future__ import annotations

import dis

from tracer.errors import BigIntInput, UnsupportedError
from tracer.frontend.capture import call_intercepted
from tracer.transforms.passes import count_fused, count_in_place, count_maps, optimize

STAGES = ("bytecode", "ir", "opt", "llvm", "asm")


def capture_trace(py_func, args: tuple, call_out: bool = False):
    """Trace `py_func` for `args` through the PEP 523 hook, without compiling or running it (with
    `call_out`, call statements it cannot compile are calls into CPython, as under @trace)."""
    from tracer.frontend.interpreter import trace_frame
    traces = []

    def on_frame(code, frame_args, globals, builtins, closure):
        traces.append(trace_frame(code, frame_args, globals, builtins, closure, py_func.__qualname__,
                                  call_out=call_out))
        return None

    call_intercepted(py_func, args, {}, on_frame)
    return traces[0]


def dump_function(py_func, args: tuple, stage: str = "opt", fuse_fma: bool = True, transform=None,
                  fullgraph: bool = False) -> str:
    """The stage's text. Without `fullgraph` (and a transform), as under @trace: a function the
    tracer cannot compile says that it runs as Python, and why."""
    if stage not in STAGES:
        raise ValueError(f"unknown stage {stage!r}; choose from {', '.join(STAGES)}")
    if stage == "bytecode":
        return dis.Bytecode(py_func).dis()
    strict = fullgraph or transform is not None
    try:
        trace = capture_trace(py_func, args, call_out=not strict)
    except UnsupportedError as exc:
        if strict or isinstance(exc, BigIntInput):
            raise
        return f"# {py_func.__qualname__} runs as Python for these arguments (nothing is compiled): {exc}"
    if transform is not None:
        transform.check_arguments(args)
        trace = transform.apply(trace)
    if stage == "ir":
        return str(trace.function)
    optimized = optimize(trace.function, fuse_fma=fuse_fma)
    if stage == "opt":
        before, after = len(list(trace.function.walk())), len(list(optimized.walk()))
        note = (f"# {before} values captured, {after} after passes; "
                f"fused multiply-adds: {count_fused(optimized)}{'' if fuse_fma else ' (fusion off)'}")
        if count_maps(optimized):
            note += f"; fused loops (map): {count_maps(optimized)}"
        if count_in_place(optimized):
            note += f"; arrays updated in place: {count_in_place(optimized)}"
        calls = sum(1 for v in optimized.walk() if v.op == "python_call")
        if calls:
            note += f"; calls into CPython (python_call): {calls}"
        return f"{optimized}\n{note}"
    from codegen.jit import assembly_for, llvm_ir_for
    from tracer.specialize import entry_args_for
    entry_args = entry_args_for(trace, optimized)
    if stage == "llvm":
        return llvm_ir_for(optimized, entry_args, optimized.name)
    return assembly_for(optimized, entry_args, optimized.name)
