"""`@trace`: compile on the first call, cache per specialization, native speed afterwards.

`trace(fn)` returns a `tracer.native.Dispatcher`: a C callable that tries each compiled native
entry and, when none accepts the arguments, calls back into `CodeCompiler.on_call`, which
compiles a new specialization by letting the PEP 523 hook hand the call's frame to the tracer.
`grad(fn)` and friends (`tracer.gradients`) are the same machinery with a *transform* applied to
each trace before it is compiled.
"""
from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

from tracer import native
from tracer.errors import BigIntInput
from tracer.frontend.arrays import is_ndarray
from tracer.frontend.capture import call_intercepted, run_plain, warn_storm
from tracer.frontend.interpreter import CO_VARARGS, bind_arguments, trace_frame
from tracer.frontend.loader import ALIASED
from tracer.ir import I64_MAX, I64_MIN
from tracer.specialize import NeedsPython, Specialization

DEFAULT_MAX_SPECIALIZATIONS = 16


class CodeCompiler:
    """The specializations of one function's code, and the dispatchers that select among them.

    Two C dispatchers hold the native entries: `dispatcher` is what users call (its argument
    vector is the caller's positional arguments), `bound` takes the frame's full argument vector
    (defaults filled in, keyword-only arguments and *args included), as the PEP 523 hook and
    `on_call` pass it. They are the same vector only for a function without keyword-only
    parameters or *args; only then does `dispatcher` get the entries too.
    """

    def __init__(self, code, name: str, fuse_fma: bool, max_specializations: int, py_func=None,
                 transform=None, display_name: str | None = None):
        self.code = code
        self.name = name
        self.fuse_fma = fuse_fma
        self.max_specializations = max_specializations
        self.py_func = py_func
        self.transform = transform      # Trace -> Trace (e.g. a gradient), or None
        self.specializations: list[Specialization] = []
        self.dispatcher = native.Dispatcher(self.on_call, display_name or name)
        self.bound = native.Dispatcher(_never_called, display_name or name)
        self.positional_only_vector = not code.co_kwonlyargcount and not code.co_flags & CO_VARARGS
        self._warned = False

    # ---------------------------------------------------------------- compiling
    def compile_and_call(self, args: tuple, globals, builtins, closure):
        """Trace this frame's call, compile it, keep it, and return its result for `args`."""
        trace = trace_frame(self.code, args, globals, builtins, closure, self.name,
                            unroll_loops=self.transform is not None)
        py_func = self.py_func or types.FunctionType(self.code, globals, self.name, None, closure)
        fallback = _Fallback(py_func)
        if self.transform is not None:
            trace = self.transform.apply(trace)
            fallback = self.transform.fallback
        spec = Specialization.build(trace, trace.function.name, self.fuse_fma, fallback)
        self.specializations.append(spec)
        if spec.fast:
            guards = spec.native_guards()
            self.bound.add_native(spec.compiled.entry_address, spec.fallback, guards)
            if self.positional_only_vector:
                self.dispatcher.add_native(spec.compiled.entry_address, spec.fallback, guards)
        result = self.call_existing(args)
        if result is native.MISS:
            raise AssertionError(f"{self.name}: a new specialization rejected the call it was made for")
        return result

    def call_existing(self, args: tuple):
        """Run a compiled specialization that accepts the full argument vector, or return MISS."""
        result = self.bound.try_entries(args)
        if result is not native.MISS:
            return result
        for spec in self.specializations:
            if not spec.fast:
                leaves = spec.load(args)
                if leaves is ALIASED:           # lists it writes are shared: Python does it
                    return spec.fallback(*args)
                if leaves is not None:
                    try:
                        return spec.call_loaded(leaves)
                    except NeedsPython:
                        return spec.fallback(*args)
        return native.MISS

    # ---------------------------------------------------------------- the miss path
    def on_call(self, *args, **kwargs):
        """No native entry took these arguments: bind them, try the other paths, else compile."""
        f = self.py_func
        if not kwargs and self.positional_only_vector and len(args) == self.code.co_argcount:
            full = args                 # already the frame's argument vector
        else:
            try:    # the function's current defaults, as CPython would bind them
                full = tuple(bind_arguments(self.code, self.name, args, kwargs, f.__defaults__ or (),
                                            f.__kwdefaults__ or {}).values())
            except TypeError:
                return f(*args, **kwargs)   # raises CPython's own TypeError for the call
        result = self.call_existing(full)
        if result is not native.MISS:
            return result
        self._check_argument_types(full)
        if self.transform is not None:
            self.transform.check_arguments(full)
        if any(type(a) is int and not I64_MIN <= a <= I64_MAX for a in full):
            return self._plain(args, kwargs)   # exact big-int arithmetic needs Python
        if len(self.specializations) >= self.max_specializations and self.transform is None:
            if not self._warned:
                warn_storm(self.name, self.max_specializations)
                self._warned = True
            return run_plain(f, *args, **kwargs)
        try:
            if native.interception_disabled():
                # inside the plain Python run of another function (its fallback): no frame can
                # be intercepted here, so trace from the function object itself. A transform
                # must: running f plainly would answer its value, not its gradient
                if self.transform is None:
                    return run_plain(f, *args, **kwargs)
                return self.compile_and_call(full, f.__globals__, f.__builtins__, f.__closure__)
            return call_intercepted(f, args, kwargs, self._on_frame)
        except BigIntInput:
            return self._plain(args, kwargs)   # an int past 64 bits inside an input

    def _plain(self, args, kwargs):
        """The call's answer without compiling: the original function, run by CPython (a
        transformed function has no Python version, so it says why it cannot answer)."""
        if self.transform is not None:
            return self.transform.fallback()
        return run_plain(self.py_func, *args, **kwargs)

    def _on_frame(self, code, args, globals, builtins, closure):
        return self.compile_and_call(args, globals, builtins, closure)

    def _check_argument_types(self, args: tuple):
        names = self.code.co_varnames
        for name, a in zip(names, args):
            if type(a) in (float, int, bool, list, tuple, types.FunctionType, types.BuiltinFunctionType) or a is None:
                continue
            if isinstance(a, (int, float)):
                raise TypeError(f"{self.name}() argument '{name}' is a {type(a).__name__} (a subclass of "
                                f"{'float' if isinstance(a, float) else 'int'}): traced functions take exact "
                                f"float, int and bool numbers")
            if hasattr(a, "__dict__") and type(a).__module__ not in ("builtins", "numpy"):
                continue   # a user object: its attributes are read by the trace
            if is_ndarray(a):
                continue   # its dtype is checked by the trace
            raise TypeError(f"{self.name}() argument '{name}' is a {type(a).__name__}: traced functions "
                            f"take float, int and bool arguments, NumPy arrays, and lists, tuples or "
                            f"objects holding them")


def _never_called(*args):
    raise AssertionError("the bound-vector dispatcher is only used through try_entries")


class _Fallback:
    """Runs the original function for a call whose exact result needs Python (e.g. big ints)."""

    def __init__(self, py_func):
        self.py_func = py_func

    def __call__(self, *args):
        return run_plain(self.py_func, *args)


def trace(fn: Callable[..., Any] | None = None, *, fuse_fma: bool = True,
          max_specializations: int = DEFAULT_MAX_SPECIALIZATIONS) -> Any:
    """Compile `fn` to native code on its first call (per argument types), then call that.

    `fuse_fma=False` keeps every multiply and add separately rounded, so results equal CPython's
    bit for bit. The returned callable has `py_func` (the original), `specializations` (what has
    been compiled, with guards) and `dump(*args, stage=...)`. Without `fn`, a decorator:
    `@trace(fuse_fma=False)`.
    """
    if fn is None:
        return lambda f: trace(f, fuse_fma=fuse_fma, max_specializations=max_specializations)
    py_func, transform = unwrap(fn, "trace")
    return make_dispatcher(py_func, transform, fuse_fma, max_specializations)


def unwrap(fn, caller: str):
    """(the Python function, the transform or None) of a function or of a traced/grad one."""
    py_func = getattr(fn, "py_func", fn)
    if isinstance(py_func, types.BuiltinFunctionType):
        py_func = _python_wrapper(py_func)           # grad(math.sin)
    if not isinstance(py_func, types.FunctionType):
        raise TypeError(f"{caller}() takes a Python function, not {type(fn).__name__}")
    return py_func, getattr(fn, "transform", None)


def _python_wrapper(builtin):
    """`def sin(x): return sin(x)` for a builtin with a fixed signature such as `math.sin`, so it
    can be traced like a Python function."""
    import inspect
    try:
        params = list(inspect.signature(builtin).parameters.values())
    except (TypeError, ValueError):
        return builtin
    if any(p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) or p.default is not p.empty for p in params):
        return builtin
    names = ", ".join(p.name for p in params)
    namespace = {"_builtin": builtin}
    exec(f"def {builtin.__name__}({names}):\n    return _builtin({names})\n", namespace)
    wrapper = namespace[builtin.__name__]
    wrapper.__qualname__ = f"{getattr(builtin, '__module__', None) or 'builtins'}.{builtin.__name__}"
    return wrapper


def make_dispatcher(fn, transform, fuse_fma: bool, max_specializations: int = DEFAULT_MAX_SPECIALIZATIONS):
    """The compiled callable for `fn` (after `transform`, if any), compiling on demand."""
    display_name = transform.describe(fn.__qualname__) if transform is not None else fn.__qualname__
    compiler = CodeCompiler(fn.__code__, fn.__qualname__, fuse_fma, max_specializations, py_func=fn,
                            transform=transform, display_name=display_name)
    d = compiler.dispatcher
    d.py_func = d.__wrapped__ = fn
    d.transform = transform
    d.__doc__ = fn.__doc__
    d.__module__ = fn.__module__
    d.fuse_fma = fuse_fma
    d.specializations = compiler.specializations

    def dump(*args, stage: str = "opt"):
        from tracer.dump import dump_function
        return dump_function(fn, args, stage=stage, fuse_fma=fuse_fma, transform=transform)
    d.dump = dump
    return d
