"""`capture()`: compile every Python function called inside a block, where the tracer can.

    with tracer.capture("mypackage"):
        train(model, data)          # each function of mypackage it calls is compiled on its first call
    print(tracer.stats())           # what was compiled, and why anything was not

Each intercepted frame (the PEP 523 hook of `tracer.frontend.capture`) goes to its code's
`CodeCompiler` (`tracer.api`): one per code object, closure cells and globals.
"""
from __future__ import annotations

import contextlib
import os
import sysconfig
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from tracer import native
from tracer.api import CodeCompiler
from tracer.errors import BigIntInput, TracerError
from tracer.frontend.capture import pop_region, push_region


@dataclass
class CaptureStats:
    compiled: dict[str, int] = field(default_factory=dict)      # qualname -> specializations
    not_compiled: dict[str, str] = field(default_factory=dict)  # qualname -> why not

    def __str__(self):
        lines = [f"compiled: {name} ({n} specialization{'s' * (n != 1)})" for name, n in self.compiled.items()]
        lines += [f"not compiled: {name}: {why}" for name, why in self.not_compiled.items()]
        return "\n".join(lines) or "nothing was called"


_stats = CaptureStats()


def stats() -> CaptureStats:
    """What `capture()` regions compiled so far, and why anything was left to Python."""
    return _stats


_TRACER_DIR = os.path.dirname(os.path.abspath(__file__))   # the tracer package
_STDLIB_DIRS = tuple({sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"]})


class CaptureRegion:
    def __init__(self, modules, fuse_fma: bool, max_specializations: int):
        self.modules = None if modules is None else {modules} if isinstance(modules, str) else set(modules)
        self.fuse_fma = fuse_fma
        self.max_specializations = max_specializations

    def wants(self, code, globals: dict) -> bool:
        if code.co_filename.startswith(("<", _TRACER_DIR, *_STDLIB_DIRS)):
            return False    # generated code, the tracer itself, the standard library
        if self.modules is None:
            return True
        module = globals.get("__name__", "")
        return any(module == m or module.startswith(m + ".") for m in self.modules)

    def on_frame(self, code, args, globals, builtins, closure):
        if not self.wants(code, globals):
            native.register_code(code, native.SKIP)
            return native.SKIP
        # closures made by one factory share a code object but not their cells: one compiler each
        key = (code, id(globals), tuple(id(cell) for cell in closure or ()))
        compiler = _compilers.get(key)
        if compiler is None:
            compiler = _compilers[key] = CodeCompiler(code, code.co_qualname, self.fuse_fma, self.max_specializations)
        result = compiler.call_existing(args)
        if result is not native.MISS:
            return result
        if len(compiler.specializations) >= self.max_specializations:
            return self._give_up(code, f"more than {self.max_specializations} specializations")
        try:
            result = compiler.compile_and_call(args, globals, builtins, closure)
        except BigIntInput:
            return native.SKIP       # this call needs Python's big ints; later calls may compile
        except TracerError as exc:
            return self._give_up(code, exc.message if exc.loc is None else f"{exc.loc}: {exc.message}")
        except Exception:
            return native.SKIP       # e.g. a Python error at trace time: let Python raise it itself
        # later frames of this code go straight to its native entries, unless the code is shared
        # by several closures (their guards check one closure's cells): those come back here
        native.register_code(code, True if closure else compiler.bound)
        _stats.compiled[code.co_qualname] = len(compiler.specializations)
        return result

    def _give_up(self, code, why: str):
        native.register_code(code, native.SKIP)
        _stats.not_compiled[code.co_qualname] = why
        return native.SKIP


_compilers: dict = {}   # (code, globals, closure cells) -> CodeCompiler, for capture() regions


@contextlib.contextmanager
def capture(modules: str | Iterable[str] | None = None, *, fuse_fma: bool = True,
            max_specializations: int = 8) -> Iterator[CaptureStats]:
    """Compile every Python function called inside the block when the tracer can handle it.

    `modules` limits capture to functions defined in those modules (names or prefixes). Functions
    the tracer cannot compile run as plain Python and are remembered, so they are not retried;
    `tracer.stats()` says what was compiled and why anything was not.
    """
    region = CaptureRegion(modules, fuse_fma, max_specializations)
    push_region(region.on_frame)
    try:
        yield _stats
    finally:
        pop_region()
