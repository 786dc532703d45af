"""Capture through PEP 523: hand a frame's arguments to the tracer before any bytecode runs.

The C hook (`tracer._frame`) is installed only while needed: while a `@trace`d function compiles
a new specialization, or inside a `capture()` region. One Python callback, `_on_frame`, receives
every intercepted frame and routes it by code object: to the `@trace`d function being compiled,
or to the innermost `capture()` region.
"""
from __future__ import annotations

import contextlib
import os
import sysconfig
import warnings
from dataclasses import dataclass, field

from tracer import _frame
from tracer.errors import BigIntInput, TracerError

_handlers: dict = {}            # code object -> callable(code, args, globals, builtins, closure)
_regions: list["CaptureRegion"] = []


def _on_frame(code, args, globals, builtins, closure):
    handler = _handlers.get(code)
    if handler is None and _regions:
        handler = _regions[-1].on_frame
    if handler is None:
        return _frame.SKIP
    return handler(code, args, globals, builtins, closure)


_frame.set_frame_callback(_on_frame)


def call_intercepted(py_func, args: tuple, kwargs: dict, handler):
    """Call `py_func`, letting `handler` take its frame (argument binding is CPython's own)."""
    code = py_func.__code__
    previous_state = _frame.code_state(code)
    _handlers[code] = handler
    _frame.register_code(code, True)
    _frame.install()
    try:
        return py_func(*args, **kwargs)
    finally:
        _frame.uninstall()
        del _handlers[code]
        if previous_state is None:
            _frame.unregister_code(code)
        else:
            _frame.register_code(code, previous_state)


def run_plain(py_func, *args, **kwargs):
    """Run the original Python function, never intercepted."""
    return _frame.run_plain(py_func, *args, **kwargs)


# ---------------------------------------------------------------------------- capture regions
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


_TRACER_DIR = os.path.dirname(os.path.abspath(__file__))
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
        from tracer.api import CodeCompiler
        if not self.wants(code, globals):
            _frame.register_code(code, _frame.SKIP)
            return _frame.SKIP
        # closures made by one factory share a code object but not their cells: one compiler each
        key = (code, id(globals), tuple(id(cell) for cell in closure or ()))
        compiler = _compilers.get(key)
        if compiler is None:
            compiler = _compilers[key] = CodeCompiler(code, code.co_qualname, self.fuse_fma, self.max_specializations)
        result = compiler.call_existing(args)
        if result is not _frame.MISS:
            return result
        if len(compiler.specializations) >= self.max_specializations:
            return self._give_up(code, f"more than {self.max_specializations} specializations")
        try:
            result = compiler.compile_and_call(args, globals, builtins, closure)
        except BigIntInput:
            return _frame.SKIP       # this call needs Python's big ints; later calls may compile
        except TracerError as exc:
            return self._give_up(code, exc.message if exc.loc is None else f"{exc.loc}: {exc.message}")
        except Exception:
            return _frame.SKIP       # e.g. a Python error at trace time: let Python raise it itself
        # later frames of this code go straight to its native entries, unless the code is shared
        # by several closures (their guards check one closure's cells): those come back here
        _frame.register_code(code, True if closure else compiler.bound)
        _stats.compiled[code.co_qualname] = len(compiler.specializations)
        return result

    def _give_up(self, code, why: str):
        _frame.register_code(code, _frame.SKIP)
        _stats.not_compiled[code.co_qualname] = why
        return _frame.SKIP


_compilers: dict = {}   # (code, globals, closure cells) -> CodeCompiler, for capture() regions


@contextlib.contextmanager
def capture(modules=None, *, fuse_fma: bool = True, max_specializations: int = 8):
    """Compile every Python function called inside the block when the tracer can handle it.

    `modules` limits capture to functions defined in those modules (names or prefixes). Functions
    the tracer cannot compile run as plain Python and are remembered, so they are not retried;
    `tracer.stats()` says what was compiled and why anything was not.
    """
    region = CaptureRegion(modules, fuse_fma, max_specializations)
    _regions.append(region)
    _frame.set_capture_all(True)
    _frame.install()
    try:
        yield _stats
    finally:
        _frame.uninstall()
        _regions.pop()
        _frame.set_capture_all(bool(_regions))


def warn_storm(name: str, limit: int):
    warnings.warn(f"{name}: more than {limit} specializations were compiled; further argument "
                  f"types/values run as plain Python (raise max_specializations to allow more)",
                  RuntimeWarning, stacklevel=4)
