"""`capture()`: compile every Python function called inside a block, where the tracer can.

    with tracer.capture("mypackage"):
        train(model, data)          # each function of mypackage it calls is compiled on its first call
    print(tracer.stats())           # what was compiled, and why anything was not

Each intercepted frame (the PEP 523 hook of `tracer.frontend.capture`) goes to its code's
`CodeCompiler` (`tracer.api`): one per code object, globals and closure. A region captures the
frames of the thread that opened it; regions may be open in several threads at once.
"""
from __future__ import annotations

import contextlib
import os
import sys
import sysconfig
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from tracer import native
from tracer.api import CodeCompiler
from tracer.errors import BigIntInput, TracerError
from tracer.frontend.capture import pop_region, push_region
from tracer.logs import code_location, fallback_log


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
        compiler = _compilers.get(code, globals, closure, self)
        result = compiler.call_existing(args)
        if result is not native.MISS:
            return result
        compiled = len(compiler.specializations)
        # the compiled code gets a copy of the closure tuple: the table tells the closure's death
        # by the references to the tuple itself (_CompilerTable.sweep)
        cells = None if closure is None else (*closure,)
        try:
            result = compiler.call_or_compile(args, globals, builtins, cells)
        except BigIntInput:
            return native.SKIP       # this call needs Python's big ints; later calls may compile
        except TracerError as exc:
            return self._give_up(code, exc.message if exc.loc is None else f"{exc.loc}: {exc.message}")
        except Exception:
            return native.SKIP       # e.g. a Python error at trace time: let Python raise it itself
        if result is native.MISS:
            return self._give_up(code, f"more than {self.max_specializations} specializations")
        if len(compiler.specializations) != compiled:
            # later frames of this code go straight to its native entries, unless the code is
            # shared by several closures (their guards check one closure's cells): those come back
            native.register_code(code, True if closure else compiler.bound)
            _stats.compiled[code.co_qualname] = len(compiler.specializations)
        return result

    def _give_up(self, code, why: str):
        native.register_code(code, native.SKIP)
        fallback_log.info("%s: %s() runs as Python in capture(): %s", code_location(code), code.co_qualname, why)
        _stats.not_compiled[code.co_qualname] = why
        return native.SKIP


class _Closure:
    """A closure's compiler, and the closure tuple it was made for (`sweep` counts its references)."""

    __slots__ = ("closure", "compiler")

    def __init__(self, closure: tuple, compiler: CodeCompiler):
        self.closure = closure
        self.compiler = compiler


class _CompilerTable:
    """The CodeCompiler of each function met by capture() regions, by code, globals and closure.

    Closures made by one factory share a code object but not their cells: one compiler each. A
    closure's entry goes with the closure: nothing of the tracer's holds the closure tuple but
    the entry, so a tuple referenced by nothing else belongs to a function that is gone (cells and
    tuples take no weak references, and the callback sees no function object). Entries are swept
    when a region ends and whenever the table has doubled since the last sweep. The compiler of a
    function without closure lives as long as its code object.
    """

    def __init__(self):
        self.compilers: dict = {}    # (code, id(globals)) -> CodeCompiler
        self.closures: dict = {}     # (code, id(globals), id(closure tuple)) -> _Closure
        self.swept_size = 0          # len(closures) after the last sweep
        self.lock = threading.Lock()

    def get(self, code, globals: dict, closure: tuple | None, region: CaptureRegion) -> CodeCompiler:
        if closure is None:
            key = code, id(globals)
            compiler = self.compilers.get(key)
            if compiler is None:
                compiler = self.compilers.setdefault(key, _new_compiler(code, region))
            return compiler
        key = code, id(globals), id(closure)
        entry = self.closures.get(key)
        if entry is None:
            if len(self.closures) >= max(64, 2 * self.swept_size):
                self.sweep()
            entry = self.closures.setdefault(key, _Closure(closure, _new_compiler(code, region)))
        return entry.compiler

    def sweep(self) -> None:
        """Drop the entries of closures that are gone (their tuple's only reference is the entry)."""
        with self.lock:
            for key, entry in list(self.closures.items()):
                if sys.getrefcount(entry.closure) <= _ONLY_THE_ENTRY:
                    del self.closures[key]
            self.swept_size = len(self.closures)


def _new_compiler(code, region: CaptureRegion) -> CodeCompiler:
    return CodeCompiler(code, code.co_qualname, region.fuse_fma, region.max_specializations)


def _references_from_the_entry() -> int:
    """The references sys.getrefcount counts to a closure tuple that only its _Closure holds (the
    slot and getrefcount's own argument; a tuple made here, not the immortal `()`)."""
    entry = _Closure((object(),), None)
    return sys.getrefcount(entry.closure)


_ONLY_THE_ENTRY = _references_from_the_entry()
_compilers = _CompilerTable()   # for capture() regions


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
        _compilers.sweep()
