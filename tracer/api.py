"""`@trace`: compile on the first call, cache per specialization, native speed afterwards.

`trace(fn)` returns a `tracer.native.Dispatcher`: a C callable that tries each compiled native
entry and, when none accepts the arguments, calls back into `CodeCompiler.on_call`, which
compiles a new specialization by letting the PEP 523 hook hand the call's frame to the tracer.
`grad(fn)` and friends (`tracer.gradients`) are the same machinery with a *transform* applied to
each trace before it is compiled.

While a debugger, profiler or coverage tool watches (`sys.settrace`, `sys.setprofile`,
`sys.monitoring`), and everywhere when the environment has TRACER_DISABLE=1 (read at import), a
traced function runs as the plain Python function, where the tool sees it; gradients, which have
no plain Python version, are still compiled.
"""
from __future__ import annotations

import array
import contextlib
import functools
import importlib.util
import os
import sys
import threading
import time
import types
import weakref
from collections.abc import Callable
from typing import Any

from tracer import native
from tracer.cache import entries as cache_entries
from tracer.cache.keys import code_fingerprint, digest, environment
from tracer.cache.store import current_store
from tracer.errors import BigIntInput, UnsupportedError
from tracer.frontend.binding import CO_VARARGS, bind_arguments
from tracer.frontend.capture import call_intercepted
from tracer.logs import INFO, cache_log, code_location, fallback_log, guard_log, log_compiled, log_recompile, warn_storm

# The compile path (the front end, the passes, codegen and LLVM) is imported where it is first
# needed, inside the methods below: a process whose specializations all come from the compile
# cache never loads it.

DEFAULT_MAX_SPECIALIZATIONS = 16

# runs the original function, never intercepted; in C, so that a traceback through it shows no
# frame of the tracer's
run_plain = native.run_plain

# Compiles run one at a time, in every thread: tracing is Python (the GIL runs one thread at a time
# anyway) and LLVM runs under codegen's own lock. One lock for all functions, not one each: a
# compile may compile other functions (a fallback's call, a gradient inside a trace), and two
# threads doing that in opposite orders would deadlock on two locks. Re-entrant for the same
# reason. It is held while tracing and compiling, never while a compiled or Python call runs.
COMPILE_LOCK = threading.RLock()

native.set_disabled(os.environ.get("TRACER_DISABLE", "").strip().lower() not in ("", "0", "false", "no", "off"))
# the traceback of an error raised in a call that compiled (or ran the Python function) starts at
# the user's code: the tracer's own frames above it are left out
native.hide_frames(tuple(os.path.dirname(os.path.abspath(path)) + os.sep
                         for path in (__file__, importlib.util.find_spec("codegen").origin)))


class CodeCompiler:
    """The specializations of one function's code, and the dispatchers that select among them.

    Two C dispatchers hold the native entries: `dispatcher` is what users call (its argument
    vector is the caller's positional arguments), `bound` takes the frame's full argument vector
    (defaults filled in, keyword-only arguments and *args included), as the PEP 523 hook and
    `on_call` pass it. They are the same vector only for a function without keyword-only
    parameters or *args; only then does `dispatcher` get the entries too.
    """

    def __init__(self, code, name: str, fuse_fma: bool, max_specializations: int, py_func=None,
                 transform=None, display_name: str | None = None, plain_python: bool = True,
                 fullgraph: bool = True, strict_arguments: bool = True, parallel: bool = False,
                 cache: bool = False):
        self.code = code
        self.name = name
        self.display_name = display_name or name
        self.fuse_fma = fuse_fma
        self.parallel = parallel        # maps on every core (codegen.parallel)
        self.max_specializations = max_specializations
        self.py_func = py_func
        self.transform = transform      # Trace -> Trace (e.g. a gradient), or None
        self.specializations: list = []     # Specialization, BreakRun, PythonRun, CachedSpecialization
        # what runs while a debugger watches (or under TRACER_DISABLE); None: always compiled, as
        # a gradient, which has no plain version
        self.plain = py_func if transform is None and plain_python else None
        self.dispatcher = native.Dispatcher(self.on_call, display_name or name, plain=self.plain)
        self.bound = native.Dispatcher(_never_called, display_name or name)
        self.positional_only_vector = not code.co_kwonlyargcount and not code.co_flags & CO_VARARGS
        # without fullgraph, what cannot be compiled runs as Python (a PythonRun records why);
        # a transform (a gradient) has no Python version and always raises
        self.python_on_break = not fullgraph and transform is None and py_func is not None
        # a TypeError for arguments traced code cannot take; else (a continuation's) they run as Python
        self.strict_arguments = strict_arguments
        self._warned = False
        # the compile cache (tracer.cache): specializations stored on disk, loaded by later processes
        self.cache = cache and py_func is not None and (transform is None or transform.cacheable)
        self._cache_key: str | None = None
        self._looked_up: set[tuple] = set()       # argument kinds (and ints) already looked for in the cache

    # ---------------------------------------------------------------- compiling
    def compile(self, args: tuple, globals, builtins, closure) -> None:
        """Trace this frame's call, compile it and keep it (with COMPILE_LOCK held). The
        "tracer.guards" log says why no earlier specialization took the call, "tracer.compile"
        what was compiled and how long each stage took (tracer.logs)."""
        from tracer.guard_misses import describe_misses
        seen = len(self.specializations)
        if seen and guard_log.isEnabledFor(INFO):
            log_recompile(self.display_name, code_location(self.code), seen, self.max_specializations,
                          describe_misses(self.specializations, args, self.code))
        start = time.perf_counter()
        with _room_to_compile():
            self._compile(args, globals, builtins, closure)
        if len(self.specializations) > seen:
            self._log_compiled(self.specializations[-1], args, time.perf_counter() - start)

    def _log_compiled(self, spec, args: tuple, seconds: float) -> None:
        from tracer.guard_misses import describe_arguments, pinned_arguments
        from tracer.specialize import BreakRun, PythonRun
        if isinstance(spec, PythonRun):
            return                      # nothing compiled: "tracer.fallback" says why
        compiled = spec.prefix if isinstance(spec, BreakRun) else spec
        path = (f"up to a graph break at {spec.point.loc}" if isinstance(spec, BreakRun) else
                "native entry" if spec.fast else "loaded inputs")
        if not self.strict_arguments:
            path = f"the code after a graph break, {path}"
        log_compiled(self.display_name, code_location(self.code),
                     describe_arguments(self.code, args, pinned_arguments(compiled.trace)), seconds, compiled.timings, path)

    def _compile(self, args: tuple, globals, builtins, closure, call_out: bool | None = None) -> None:
        from tracer.frontend.interpreter import trace_frame
        from tracer.specialize import BreakRun, PythonRun, RaisedAfterHeldWrites, Specialization, argument_signature
        call_out = self.python_on_break if call_out is None else call_out
        try:
            start = time.perf_counter()
            trace = trace_frame(self.code, args, globals, builtins, closure, self.name,
                                unroll_loops=self.transform is not None, call_out=call_out)
            py_func = self.py_func or types.FunctionType(self.code, globals, self.name, None, closure)
            fallback = functools.partial(run_plain, py_func)
            if self.transform is not None:
                trace = self.transform.apply(trace)
                fallback = self.transform.fallback
            if trace.break_point is not None:
                fallback = self._finish_as_python
            traced = time.perf_counter() - start
            spec = Specialization.build(trace, trace.function.name, self.fuse_fma, fallback, parallel=self.parallel,
                                        keep_object=self.cache and current_store() is not None)
            spec.timings = {"trace": traced, **spec.timings}
        except RaisedAfterHeldWrites:
            return self._compile(args, globals, builtins, closure, call_out=False)
        except UnsupportedError as exc:
            if not self.python_on_break or isinstance(exc, BigIntInput):
                raise
            run = PythonRun(self.display_name, argument_signature(args), exc)
            run.log(code_location(self.code))
            self._add_native(run)
            self.specializations.append(run)
            return
        if trace.break_point is not None:     # the continuation: a function of its own, traced alike
            resume = types.FunctionType(trace.break_point.code, globals, self.name, None, closure)
            continuation = make_dispatcher(resume, None, self.fuse_fma, self.max_specializations, fullgraph=False,
                                           strict_arguments=False, parallel=self.parallel)
            run = BreakRun(spec, continuation)
            run.log()
            self._add_native(run)
            self.specializations.append(run)
            return
        if not spec.fast and self.python_on_break and trace.break_point is None:
            spec.on_mostly_python = self._run_as_python
        self._add_native(spec)
        if self.cache:
            self._store(spec, args, globals, builtins, closure)
        # last: a thread that sees the new count finds the new entries in place
        self.specializations.append(spec)

    def _add_native(self, spec) -> None:
        """Put `spec` in the C dispatcher's table: its native entry behind its binding guards, or
        (the loaded path, a graph break) its `run`, which checks the arguments itself, or (a
        PythonRun) an entry that checks the argument types and calls the function (where the
        argument vector is the positional one; else `call_existing` finds the PythonRun)."""
        if getattr(spec, "python", False):
            if not self.positional_only_vector or not all(isinstance(kind, type) for kind in spec.signature):
                return
            entry = (native.plain_entry_address, (self.py_func, spec.signature), ())
        elif spec.fast:
            guards = spec.native_guards()
            address = spec.entry_address if getattr(spec, "from_cache", False) else spec.compiled.entry_address
            entry = (address, spec.fallback, guards)
        else:
            entry = (native.python_entry_address, spec.run, ())
        self.bound.add_native(*entry)
        if self.positional_only_vector:
            self.dispatcher.add_native(*entry)

    def _run_as_python(self, spec, args: tuple) -> None:
        """Most calls of the loaded-path `spec` needed Python after all (its `run` says so): it
        gives way to a PythonRun for its arguments' kinds, after every compiled entry."""
        from tracer.specialize import PythonRun, argument_signature
        with COMPILE_LOCK:
            if spec not in self.specializations:
                return
            reason = UnsupportedError(f"its compiled code gave {spec.fell_back} of {spec.calls} calls to Python "
                                      f"(an exception an except clause catches, or a result only Python gives)")
            run = PythonRun(self.display_name, argument_signature(args), reason)
            run.log(code_location(self.code))
            self.specializations[:] = [s for s in self.specializations if s is not spec] + [run]
            self.bound.clear()
            if self.positional_only_vector:
                self.dispatcher.clear()
            compiled = [s for s in self.specializations if not getattr(s, "python", False)]
            for s in compiled + [s for s in self.specializations if getattr(s, "python", False)]:
                self._add_native(s)

    # ---------------------------------------------------------------- the compile cache
    def cache_key(self) -> str:
        """What the stored specializations of this function are filed under: the environment,
        the code, the options (tracer.cache.keys)."""
        if self._cache_key is None:
            transform = None if self.transform is None else self.transform.describe("")
            self._cache_key = digest(environment(), code_fingerprint(self.code), self.name, transform, self.fuse_fma,
                                     self.parallel, self.python_on_break)
        return self._cache_key

    def _store(self, spec, args: tuple, globals, builtins, closure) -> None:
        from tracer.frontend.sources import ABSENT
        store = current_store()
        try:
            if store is not None:
                path = cache_entries.store(store, self.cache_key(), spec, args, globals, builtins, closure, ABSENT)
                if path is not None:
                    cache_log.info("%s: stored in the cache (%s)", self.display_name, path)
        except Exception as exc:     # the cache never fails a call
            cache_log.warning("compile cache: %s not stored (%s: %s)", self.display_name, type(exc).__name__, exc)
        spec.compiled.object_code = None

    def load_cached(self, full: tuple) -> bool:
        """Add the stored specializations made for arguments like `full` (with COMPILE_LOCK
        held); whether there were any. Each kind of arguments is looked up once."""
        store = current_store() if self.cache else None
        kinds = tuple(cache_entries.argument_kinds(full))
        looked = (kinds, cache_entries.pinnable_values(full))    # (an entry may pin an int, a str, an item)
        if store is None or looked in self._looked_up:
            return False
        self._looked_up.add(looked)
        f = self.py_func
        start = time.perf_counter()
        try:
            fallback = functools.partial(run_plain, f) if self.transform is None else self.transform.fallback
            found = cache_entries.load(store, self.cache_key(), full, f.__globals__, f.__builtins__, f.__closure__,
                                       fallback, _materialize)
        except Exception as exc:     # the cache never fails a call
            cache_log.warning("compile cache: %s not loaded (%s: %s)", self.display_name, type(exc).__name__, exc)
            return False
        found = found[:max(self.max_specializations - len(self.specializations), 0)]
        for spec in found:
            spec.timings = {"load": time.perf_counter() - start}
            self._add_native(spec)
            self.specializations.append(spec)
        if not found:
            cache_log.info("%s: no stored specialization for arguments (%s) in the cache", self.display_name,
                           ", ".join(kinds))
        return bool(found)

    def call_compiled(self, args: tuple):
        """The result for `args` from the specialization just compiled for them."""
        result = self.call_existing(args)
        if result is native.MISS:
            raise AssertionError(f"{self.name}: a new specialization rejected the call it was made for")
        return result

    def call_or_compile(self, args: tuple, globals, builtins, closure):
        """The result for a frame's `args`: from a specialization that takes them, else from one
        compiled now (MISS when max_specializations are compiled already)."""
        while True:
            seen = len(self.specializations)
            result = self.call_existing(args)
            if result is not native.MISS:
                return result
            with COMPILE_LOCK:
                if len(self.specializations) != seen:
                    continue        # another thread compiled one meanwhile: it may take these arguments
                if seen >= self.max_specializations:
                    return native.MISS
                self.compile(args, globals, builtins, closure)
            return self.call_compiled(args)

    def call_existing(self, args: tuple):
        """Run a compiled specialization that accepts the full argument vector, or return MISS."""
        result = self.bound.try_entries(args)     # every compiled one (_add_native)
        if result is not native.MISS:
            return result
        for spec in self.specializations:
            if getattr(spec, "python", False) and spec.accepts(args):   # a PythonRun: these
                return self._plain_vector(args)                        # arguments run as Python
        return native.MISS

    # ---------------------------------------------------------------- the miss path
    def on_call(self, *args, **kwargs):
        """No native entry took these arguments: bind them, try the other paths, else compile."""
        if any(map(_has_copied_dtype, args)) or any(map(_has_copied_dtype, kwargs.values())):
            args = tuple(map(_with_builtin_dtype, args))
            kwargs = {k: _with_builtin_dtype(a) for k, a in kwargs.items()}
        f = self.py_func
        if not kwargs and self.positional_only_vector and len(args) == self.code.co_argcount:
            full = args                 # already the frame's argument vector
        else:
            try:    # the function's current defaults, as CPython would bind them
                full = tuple(bind_arguments(self.code, self.name, args, kwargs, f.__defaults__ or (),
                                            f.__kwdefaults__ or {}).values())
            except TypeError:
                return f(*args, **kwargs)   # raises CPython's own TypeError for the call
        seen = len(self.specializations)    # compiled so far: see COMPILE_LOCK below
        result = self.call_existing(full)
        if result is not native.MISS:
            return result
        if any(map(_is_numpy_scalar, full)):
            from tracer.frontend.dtypes import numpy_scalar_dtype
            if any(_is_numpy_scalar(a) and (self.transform is not None or numpy_scalar_dtype(a) is None) for a in full):
                return self._numpy_scalar_call(args, kwargs)
        try:
            self._check_argument_types(full)
        except TypeError as exc:
            if self.strict_arguments and not self.python_on_break:
                raise
            if self.strict_arguments:       # (not a continuation's: its arguments say nothing new)
                fallback_log.info("%s: %s() runs as Python: %s", code_location(self.code), self.display_name, exc)
            return self._plain(args, kwargs)
        if self.transform is not None:
            self.transform.check_arguments(full)
        if any(type(a) is int and not -(1 << 63) <= a < (1 << 63) for a in full):
            return self._plain(args, kwargs)   # exact big-int arithmetic needs Python
        if len(self.specializations) >= self.max_specializations and self.transform is None:
            if not self._warned:
                self._warned = True
                from tracer.guard_misses import describe_misses
                warn_storm(self.display_name, code_location(self.code), self.max_specializations,
                           describe_misses(self.specializations[-1:], full, self.code)[0])
            return run_plain(f, *args, **kwargs)
        if native.run_as_python() and self.plain is not None:
            return run_plain(f, *args, **kwargs)
        if self.cache:
            with COMPILE_LOCK:
                loaded = len(self.specializations) == seen and self.load_cached(full)
            if loaded:
                return self.on_call(*args, **kwargs)
        try:
            with COMPILE_LOCK:
                if len(self.specializations) != seen:
                    outcome = _AGAIN      # another thread compiled meanwhile: it may take these arguments
                elif native.interception_disabled() or native.run_as_python():
                    # inside the plain Python run of another function (its fallback), or while a
                    # debugger watches (or TRACER_DISABLE): no frame is intercepted here, so trace
                    # from the function object itself. A transform must: running f plainly would
                    # answer its value, not its gradient (and export needs the compiled code)
                    self.compile(full, f.__globals__, f.__builtins__, f.__closure__)
                    outcome = _Compiled(full)
                else:
                    outcome = call_intercepted(f, args, kwargs, self._on_frame)
        except BigIntInput:
            return self._plain(args, kwargs)   # an int past 64 bits inside an input
        if outcome is _AGAIN:
            return self.on_call(*args, **kwargs)
        if type(outcome) is not _Compiled:
            return outcome                     # the frame was not handed over: it ran as Python
        return self.call_compiled(outcome.args)

    def _plain(self, args, kwargs):
        """The call's answer without compiling: the original function, run by CPython (a
        transformed function has no Python version, so it says why it cannot answer)."""
        if self.transform is not None:
            return self.transform.fallback()
        return run_plain(self.py_func, *args, **kwargs)

    def _finish_as_python(self, *full):
        """A graph break's prefix cannot finish natively: the whole call runs as Python."""
        from tracer.specialize import Finished
        raise Finished(self._plain_vector(full))

    def _plain_vector(self, full: tuple):
        """The original function run by CPython on a frame's full argument vector."""
        if self.positional_only_vector:
            return run_plain(self.py_func, *full)
        code = self.code
        n, k = code.co_argcount, code.co_kwonlyargcount
        positional = full[:n] + (full[n + k] if code.co_flags & CO_VARARGS else ())
        return run_plain(self.py_func, *positional, **dict(zip(code.co_varnames[n:n + k], full[n:n + k])))

    def _on_frame(self, code, args, globals, builtins, closure):
        self.compile(args, globals, builtins, closure)
        return _Compiled(args)      # the frame is not run: on_call runs the new specialization

    def _numpy_scalar_call(self, args: tuple, kwargs: dict):
        """A call with NumPy scalars (np.float64, np.int32, np.bool_...) among its arguments. Their
        arithmetic is NumPy's (inf and a RuntimeWarning for 1 / np.float64(0), wrapping int32, results
        typed as NumPy types them), which compiled code for Python's numbers would not give: the
        original function runs. A gradient has no plain version: it takes the scalars' values."""
        if self.transform is None:
            return run_plain(self.py_func, *args, **kwargs)
        return self.dispatcher(*(_as_python_number(a) for a in args),
                               **{k: _as_python_number(a) for k, a in kwargs.items()})

    def _check_argument_types(self, args: tuple):
        names = self.code.co_varnames
        for name, a in zip(names, args):
            if type(a) in (float, int, bool, complex, str, list, tuple, dict, set, frozenset, array.array, types.FunctionType,
                           types.BuiltinFunctionType) or a is None:
                continue
            if _is_numpy_scalar(a):
                from tracer.frontend.dtypes import numpy_scalar_dtype
                if numpy_scalar_dtype(a) is not None:
                    continue
            if isinstance(a, (int, float)):
                raise TypeError(f"{self.name}() argument '{name}' is a {type(a).__name__} (a subclass of "
                                f"{'float' if isinstance(a, float) else 'int'}): traced functions take exact "
                                f"float, int and bool numbers")
            if hasattr(a, "__dict__") and type(a).__module__ not in ("builtins", "numpy"):
                continue   # a user object: its attributes are read by the trace
            if _is_ndarray(a):
                continue   # its dtype is checked by the trace
            raise TypeError(f"{self.name}() argument '{name}' is a {type(a).__name__}: traced functions "
                            f"take float, int, bool and str arguments, NumPy arrays, array.array, and lists, tuples, dicts, sets or "
                            f"objects holding them")


COMPILE_FRAMES = 1000      # the recursion limit is raised by this much while the tracer works
_compiling = threading.local()


@contextlib.contextmanager
def _room_to_compile():
    """Tracing is Python code that recurses: a first call made near the recursion limit must
    still compile (its plain run would fit), so the limit is raised while compiling (once, not
    again for the functions compiled inside)."""
    if getattr(_compiling, "active", False):
        yield
        return
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(limit + COMPILE_FRAMES)
    _compiling.active = True
    try:
        yield
    finally:
        _compiling.active = False
        sys.setrecursionlimit(limit)


def _has_copied_dtype(a) -> bool:
    """An array whose dtype equals a builtin one without being it (an unpickled array's: what
    multiprocessing passes). Compiled code knows the builtin descriptors by identity."""
    if not _is_ndarray(a) or a.dtype.fields is not None or a.dtype.subdtype is not None or not a.dtype.isnative:
        return False
    import numpy
    builtin = numpy.dtype(a.dtype.str)
    return builtin is not a.dtype and builtin.isbuiltin == 1 and builtin == a.dtype


def _with_builtin_dtype(a):
    """The array itself, or a view of it (its memory, writes included) with the builtin dtype."""
    if not _has_copied_dtype(a):
        return a
    import numpy
    return a.view(numpy.dtype(a.dtype.str))


def _is_numpy_scalar(a) -> bool:
    """np.float64(1.0), np.int32(2), np.bool_(True)...: a NumPy scalar, not a 0-d array."""
    return type(a).__module__ == "numpy" and getattr(a, "ndim", None) == 0 and not _is_ndarray(a)


def _materialize(shape, result):
    """A loaded-path result made from the compiled code's (tracer.frontend.results)."""
    from tracer.frontend.results import build_result
    return build_result(shape, result)


def _is_ndarray(a) -> bool:
    """Exactly a numpy.ndarray (numpy is not imported for programs without arrays)."""
    return type(a).__name__ == "ndarray" and type(a).__module__ == "numpy"


def _as_python_number(a):
    return a.item() if _is_numpy_scalar(a) else a


class _Compiled:
    """An intercepted frame's answer once its specialization is compiled: the frame's argument
    vector, which on_call runs the specialization with after releasing COMPILE_LOCK."""

    __slots__ = ("args",)

    def __init__(self, args: tuple):
        self.args = args


_AGAIN = object()      # on_call: another thread compiled a specialization, try again


def _never_called(*args):
    raise AssertionError("the bound-vector dispatcher is only used through try_entries")


def trace(fn: Callable[..., Any] | None = None, *, fuse_fma: bool = True,
          max_specializations: int = DEFAULT_MAX_SPECIALIZATIONS, fullgraph: bool = False,
          parallel: bool = False, cache: bool = True) -> Any:
    """Compile `fn` to native code on its first call (per argument types), then call that.

    `fuse_fma=False` keeps every multiply and add separately rounded, so results equal CPython's
    bit for bit. A construct the tracer cannot compile makes those calls run as plain Python
    (`tracer.explain` says where and why, and the `tracer` logger too); with `fullgraph=True` it
    raises an `UnsupportedError` naming the construct and the file:line instead. The returned callable has `py_func` (the original), `specializations` (what has
    been compiled, with guards) and `dump(*args, stage=...)`. Without `fn`, a decorator:
    `@trace(fuse_fma=False)`.

    While `sys.settrace` or `sys.setprofile` (pdb, cProfile, coverage) or a `sys.monitoring` tool
    is active, and always with TRACER_DISABLE=1 in the environment, `fn` runs as plain Python.
    Errors raised in compiled code have traceback entries for the user's lines.

    With `parallel=True` array maps (elementwise chains) of at least some 32k elements run on every
    core (`TRACER_NUM_THREADS` threads, default the CPUs), cut into chunks along their first axis;
    results are those of one thread.

    Compiled specializations are stored on disk (the compile cache: the user's cache folder, or
    TRACER_CACHE_DIR) and later processes load them instead of compiling; `cache=False`, or
    TRACER_CACHE=0 in the environment, turns that off. `python -m tracer cache info|clear`.
    """
    if fn is None:
        return lambda f: trace(f, fuse_fma=fuse_fma, max_specializations=max_specializations, fullgraph=fullgraph,
                               parallel=parallel, cache=cache)
    py_func, transform = unwrap(fn, "trace")
    return make_dispatcher(py_func, transform, fuse_fma, max_specializations, fullgraph=fullgraph, parallel=parallel,
                           cache=cache)


def unwrap(fn, caller: str):
    """(the Python function, the transform or None) of a function or of a traced/grad one."""
    py_func = getattr(fn, "py_func", fn)
    if isinstance(py_func, types.BuiltinFunctionType):
        py_func = _python_wrapper(py_func)           # grad(math.sin)
    if not isinstance(py_func, types.FunctionType):
        raise TypeError(f"{caller}() takes a Python function, not {type(fn).__name__}")
    return py_func, getattr(fn, "transform", None)


@functools.lru_cache(maxsize=256)   # one wrapper per builtin: grad(math.sin) inline compiles once
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


def make_dispatcher(fn, transform, fuse_fma: bool, max_specializations: int = DEFAULT_MAX_SPECIALIZATIONS,
                    plain_python: bool = True, fullgraph: bool = True, strict_arguments: bool = True,
                    parallel: bool = False, cache: bool = False):
    """The compiled callable for `fn` (after `transform`, if any), compiling on demand. With
    `plain_python=False` it compiles even while a debugger watches or under TRACER_DISABLE (export);
    without `fullgraph`, calls that cannot be compiled run as Python."""
    display_name = transform.describe(fn.__qualname__) if transform is not None else fn.__qualname__
    compiler = CodeCompiler(fn.__code__, fn.__qualname__, fuse_fma, max_specializations, py_func=fn,
                            transform=transform, display_name=display_name, plain_python=plain_python,
                            fullgraph=fullgraph, strict_arguments=strict_arguments, parallel=parallel, cache=cache)
    d = compiler.dispatcher
    d.py_func = d.__wrapped__ = fn
    d.transform = transform
    d.__doc__ = fn.__doc__
    d.__module__ = fn.__module__
    d.fuse_fma = fuse_fma
    d.fullgraph = fullgraph
    d.parallel = parallel
    d.cache = cache
    d.max_specializations = max_specializations
    d.specializations = compiler.specializations

    def dump(*args, stage: str = "opt"):
        from tracer.dump import dump_function
        return dump_function(fn, args, stage=stage, fuse_fma=fuse_fma, transform=transform, fullgraph=fullgraph,
                             parallel=parallel)
    d.dump = dump
    return d


def made_once(fn: types.FunctionType, key, make: Callable[[], Any]) -> Any:
    """`make()` for (fn, key), made on the first call and returned again by later ones, so that
    `grad(f)(x)` written inline compiles once. `key` holds the options (hashable).

    What is made is kept in fn's own `__dict__`, so it lives exactly as long as fn: it refers to
    fn, and that cycle is collected with fn (a table keyed by fn, even weakly, would keep fn
    alive through its values). A copy of the entry onto another function (`functools.wraps`
    copies `__dict__`) is not taken for that function's own."""
    made = fn.__dict__.get(_MADE_KEY)
    if made is None or made.owner() is not fn:
        made = fn.__dict__[_MADE_KEY] = _Made(fn)
    try:
        value = made.values.get(key)
    except TypeError:
        return make()       # an unhashable option: make() says what is wrong with it, or not kept
    if value is None:
        value = made.values.setdefault(key, make())   # two threads at once: both get the first kept
    return value


_MADE_KEY = "__tracer_made__"


class _Made:
    """What `made_once` made for one function, by options."""

    def __init__(self, fn):
        self.owner = weakref.ref(fn)
        self.values: dict = {}

    def __repr__(self):
        return f"<{len(self.values)} compiled transform(s) of this function (tracer)>"

    def __reduce__(self):
        """Pickled with its function (cloudpickle carries a function's __dict__), it is None: the
        receiving process compiles its own (tracer.pickling)."""
        return type(None), ()
