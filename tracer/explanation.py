"""`tracer.explain(fn, *args, **kwargs)`: what @trace does with `fn` for these arguments.

It traces and compiles `fn` for the arguments, as a first call would, without running it, and
says: whether the function compiles or runs as Python (and why: the construct and its
file:line), each call the compiled code makes into CPython (a `print` in a loop), the guards
that select the compiled code, and how long compiling took.

    >>> print(tracer.explain(step, 3000))
    step(n: int): compiled, in 41.2 ms
      calls into CPython (1):
        demo.py:7: print(...), inside a loop
      guards: builtins['print'] is <built-in function print>, ...
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from tracer.api import COMPILE_LOCK, CodeCompiler, unwrap
from tracer.cache import entries as cache_entries
from tracer.cache.store import current_store, linkable
from tracer.errors import SourceLoc, UnsupportedError
from tracer.frontend.binding import bind_arguments
from tracer.frontend.sources import ABSENT
from tracer.logs import format_stages
from tracer.specialize import BreakRun, PythonRun, argument_signature


@dataclass(frozen=True)
class Break:
    """Where compiled code stops: `kind` is "python call" (the compiled code calls CPython for one
    statement there) or "runs as Python" (the whole call runs in CPython), `what` the construct."""
    kind: str
    what: str
    loc: SourceLoc | None
    in_loop: bool = False

    def __str__(self) -> str:
        where = f"{self.loc}: " if self.loc is not None else ""
        line = f"  ({self.loc.source_line})" if self.loc is not None and self.loc.source_line else ""
        text = f"{where}{self.what}{', inside a loop' if self.in_loop else ''}{line}"
        outer = self.loc
        while outer is not None and outer.caller is not None:
            outer = outer.caller
        if outer is not self.loc:        # in a callee (a library's code): the line that called it
            text += f"; reached from {outer}  ({outer.source_line})"
        return text


@dataclass
class Explanation:
    name: str
    signature: str
    compiled: bool                         # False: calls with these arguments run as Python
    breaks: list[Break] = field(default_factory=list)
    guards: list[str] = field(default_factory=list)
    compile_seconds: float = 0.0
    specialization: object = None          # the Specialization (or PythonRun) made for the arguments
    stages: dict = field(default_factory=dict)    # seconds per stage of the compile (tracer.logs.STAGE_NAMES)
    cache: str = ""                        # what the compile cache does with it (docs/cache.md)

    @property
    def python_calls(self) -> list[Break]:
        return [b for b in self.breaks if b.kind == "python call"]

    def __str__(self) -> str:
        head = f"{self.name}({self.signature}): "
        if not self.compiled:
            strict = any(b.kind == "error" for b in self.breaks)
            lines = [head + ("raises UnsupportedError (fullgraph=True)" if strict else
                             "runs as Python (nothing compiled for these arguments)")]
            lines += [f"  because {b}" for b in self.breaks]
            return "\n".join(lines)
        lines = [head + f"compiled, in {self.compile_seconds * 1e3:.1f} ms"]
        calls = self.python_calls
        if calls:
            lines.append(f"  calls into CPython ({len(calls)}):")
            lines += [f"    {b}" for b in calls]
        graph_breaks = [b for b in self.breaks if b.kind == "graph break"]
        lines += [f"  {b}" for b in graph_breaks]
        if not calls and not graph_breaks:
            lines.append("  no calls into CPython: the whole function is native code")
        if self.guards:
            lines.append(f"  guards: {', '.join(self.guards)}")
        if self.stages:
            lines.append(f"  stages: {format_stages(self.stages)}")
        if self.cache:
            lines.append(f"  compile cache: {self.cache}")
        return "\n".join(lines)


def explain(fn, *args, **kwargs) -> Explanation:
    """What `@trace` makes of `fn` (a function, or a traced one, whose options it uses) for these
    arguments: compiled or run as Python and why, its calls into CPython, guards, compile time.
    Nothing is run; array arguments are only read for their types."""
    py_func, transform = unwrap(fn, "explain")
    code = py_func.__code__
    name = py_func.__qualname__
    full = tuple(bind_arguments(code, name, args, kwargs, py_func.__defaults__ or (),
                                py_func.__kwdefaults__ or {}).values())
    compiler = CodeCompiler(code, name, getattr(fn, "fuse_fma", True), 1, py_func=py_func, transform=transform,
                            fullgraph=getattr(fn, "fullgraph", False), parallel=getattr(fn, "parallel", False))
    start = time.perf_counter()
    try:
        with COMPILE_LOCK:
            compiler.compile(full, py_func.__globals__, py_func.__builtins__, py_func.__closure__)
    except UnsupportedError as exc:      # fullgraph=True, or a gradient: the call would raise this
        signature = PythonRun(name, argument_signature(full), exc).describe_signature()
        return Explanation(name, signature, False, [Break("error", exc.message, exc.loc)],
                           compile_seconds=time.perf_counter() - start)
    seconds = time.perf_counter() - start
    spec = compiler.specializations[-1]
    if isinstance(spec, PythonRun):
        return Explanation(name, spec.describe_signature(), False,
                           [Break("runs as Python", spec.reason.message, spec.reason.loc)],
                           compile_seconds=seconds, specialization=spec)
    compiled = spec.prefix if isinstance(spec, BreakRun) else spec
    breaks = [Break("python call", f"{v.attrs['callee']}", v.loc, in_loop)
              for v, in_loop in _python_calls(compiled.optimized.body)]
    if isinstance(spec, BreakRun):
        breaks.append(Break("graph break", spec.describe(), spec.point.loc))
    return Explanation(name, spec.signature(), True, breaks, spec.guards(), seconds, spec, compiled.timings,
                       _cache_status(fn, compiler, spec, full))


def _cache_status(fn, compiler: CodeCompiler, spec, full: tuple) -> str:
    """Whether the compile cache stores this specialization, holds it already, or why not."""
    if not getattr(fn, "cache", True) or current_store() is None:
        return "off (TRACER_CACHE=0 or cache=False)"
    if not linkable():
        return "off (cached code is linked on Linux x86-64 only)"
    if isinstance(spec, BreakRun):
        return "not stored: a graph break"
    if compiler.transform is not None and not compiler.transform.cacheable:
        return "not stored: vjp's backward is compiled in each process"
    f = compiler.py_func
    try:
        meta = cache_entries.describe(spec, full, f.__globals__, f.__builtins__, f.__closure__, ABSENT)
    except cache_entries.NotStorable as exc:
        return f"not stored: {exc}"
    if cache_entries.stored_alike(current_store(), compiler.cache_key(), meta):
        return "stored: a new process loads it without compiling"
    return "not stored yet: the first call stores it"


def _python_calls(block, in_loop: bool = False):
    """The python_call ops of a block and its regions, each with whether a loop holds it."""
    for v in block.values:
        if v.op == "python_call":
            yield v, in_loop
        for region in v.regions:
            yield from _python_calls(region, in_loop or v.op == "loop")
