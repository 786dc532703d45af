"""`vectorize(fn)`: a scalar function compiled into one native loop over arrays of its arguments.

    d = vectorize(value_and_grad(f, argnums=(0, 1)))
    value, (da, db) = d(a, b)          # a, b: float64 arrays (broadcast) or floats

The scalar function (or its gradient: `grad`, `value_and_grad`) is traced once for float
arguments, as `@trace` would, and its IR becomes the region of one `map` over the arguments
broadcast together (NumPy's rules): every element runs the same scalar code, branches and loops
included, with no Python in between and no temporary arrays between the forward and the
gradient. A tuple result is a tuple of arrays (nested as the function nests it).

Arguments are float64 arrays and floats (np.float64 scalars and 0-d arrays count as floats);
with no array among them, the result is the scalar function's (numbers, not 0-d arrays).
An element whose scalar code raises (`1.0 / 0.0`, a `math` domain error) raises that exception
for the whole call, as `numpy.vectorize(fn)` would; one the compiled code cannot answer exactly
runs `numpy.vectorize` on the Python function instead.
"""
from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from tracer import native
from tracer.api import COMPILE_LOCK, made_once, unwrap
from tracer.cache import entries as cache_entries
from tracer.cache.keys import code_fingerprint, digest, environment
from tracer.cache.store import current_store, linkable
from tracer.logs import cache_log
from tracer.pickling import function_reference, rebuild_vectorized

# The tracer and the compiler are imported where a loop is first compiled (_Kernel): a process
# whose loops all come from the compile cache never loads them.


def vectorize(fn: Callable[..., Any], *, fuse_fma: bool = True, parallel: bool = False) -> Vectorized:
    """`fn` (a Python function of floats, or grad/value_and_grad of one) applied elementwise to
    float64 arrays, compiled into one loop; see the module docstring. Made once per function
    and options, and kept with the function: `vectorize(f)(a)` written inline compiles once.
    With `parallel=True` the loop runs on every core (as `trace(parallel=True)`'s maps) where
    the function has no branch."""
    py_func, transform = unwrap(fn, "vectorize")
    return made_once(py_func, ("vectorize", transform, fuse_fma, parallel), lambda: Vectorized(fn, fuse_fma, parallel))


class Vectorized:
    def __init__(self, fn, fuse_fma: bool, parallel: bool = False):
        self.fn = fn                                 # what was vectorized: what a pickle holds
        self.py_func, self.transform = unwrap(fn, "vectorize")
        self.fuse_fma = fuse_fma
        self.parallel = parallel
        self.name = (self.transform.describe(self.py_func.__qualname__) if self.transform is not None
                     else self.py_func.__qualname__)
        self.compiled: dict[tuple, _Kernel] = {}     # argument layout -> compiled loop
        self.unguarded: dict[tuple, _Kernel] = {}    # float64 arrays and floats -> a loop that reads no globals
        self.array_type = None                       # (numpy.ndarray, float64 dtype), once NumPy is imported
        self.scalar = None                           # the compiled scalar function, for numbers only
        # the compile cache (tracer.cache), unless the traced function turned it off
        self.cache = getattr(fn, "cache", True) and (self.transform is None or self.transform.cacheable)

    def __repr__(self):
        return f"<vectorize {self.name}>"

    def __reduce__(self):
        """Pickled as `vectorize(fn)` (tracer.pickling): the receiving process compiles its own loops."""
        return rebuild_vectorized, (function_reference(self.fn), self.fuse_fma, self.parallel)

    def __call__(self, *args, out=None):
        if self.unguarded:      # the common calls: a loop that reads no globals, arguments as they come
            outs = None if out is None else _flatten(out)
            kernel = self.unguarded.get(_fast_key(args, outs, *self.array_type))
            if kernel is not None:
                if out is None:
                    return kernel.call(*args)
                kernel.call(*args, *outs)        # the loop checks the shapes and overlaps itself
                return out
        return self.call_checked(args, out)

    def call_checked(self, args: tuple, out):
        """The call with every argument converted and checked in Python (compiling on a miss)."""
        import numpy
        args = tuple(_argument(a, i, self.name) for i, a in enumerate(args))
        arrays = [a for a in args if isinstance(a, numpy.ndarray)]
        if not arrays and out is None:                            # numbers only: the scalar function
            if self.scalar is None:
                from tracer.api import make_dispatcher
                self.scalar = make_dispatcher(self.py_func, self.transform, self.fuse_fma, cache=self.cache)
            return self.scalar(*args)
        shape = numpy.broadcast_shapes(*(a.shape for a in arrays))   # NumPy's ValueError if they do not
        outs = None if out is None else _out_arrays(out, shape, args, self.name)
        if outs is not None:
            args = tuple(a.copy() if isinstance(a, numpy.ndarray) and any(_overlaps(a, o) for o in outs) else a
                         for a in args)
        key = (tuple(_layout(a) for a in args), None if outs is None else tuple(_layout(o) for o in outs))
        kernel = self.compiled.get(key)
        examples = tuple(_example(a) for a in args)
        if kernel is None or kernel.loader(examples) is None:
            kernel = self._compile(key, args, examples, outs)
        if outs is None:
            return kernel.call(*args)
        kernel.call(*args, *outs)
        return out

    def _compile(self, key: tuple, args: tuple, examples: tuple, outs: list | None) -> _Kernel:
        """The loop for this layout: compiled now, unless another thread just did."""
        import numpy
        with COMPILE_LOCK:
            kernel = self.compiled.get(key)
            if kernel is not None and kernel.loader(examples) is not None:
                return kernel
            kernel = self._stored_kernel(key, args, outs)
            if kernel is None:
                kernel = _Kernel(self, args, examples, outs)
                self._store(key, kernel)
            if not kernel.guarded:
                self.array_type = numpy.ndarray, numpy.dtype(numpy.float64)
                self.unguarded[_fast_key(args, outs, *self.array_type)] = kernel
            self.compiled[key] = kernel
            return kernel


    # ------------------------------------------------------------------ the compile cache
    def _cache_key(self) -> str:
        transform = None if self.transform is None else self.transform.describe("")
        return digest(environment(), code_fingerprint(self.py_func.__code__), self.py_func.__qualname__, "vectorize",
                      transform, self.fuse_fma, self.parallel)

    def _stored_kernel(self, key: tuple, args: tuple, outs: list | None):
        """The loop for this layout from the compile cache, or None."""
        store = current_store() if self.cache else None
        if store is None or not linkable():
            return None
        f = self.py_func
        for path in store.entries(self._cache_key()):
            got = store.read(path, self._cache_key())
            if got is None or got[0].get("layout") != repr(key):
                continue
            meta, code = got
            linked = cache_entries.link(meta, code, f.__globals__, f.__builtins__, f.__closure__, path)
            if linked is not None:
                cache_log.info("%s: loaded from the cache (%s)", self.name, path)
                return _StoredKernel(self, meta, linked, len(args), outs is not None)
        return None

    def _store(self, key: tuple, kernel: _Kernel) -> None:
        store = current_store() if self.cache else None
        if store is None or kernel.call.compiled.object_code is None:
            return
        from tracer.frontend.sources import ABSENT
        f = self.py_func
        compiled = kernel.call.compiled
        try:
            meta = cache_entries.describe_code(self.name, compiled, kernel.function, kernel.binding_guards,
                                               f.__globals__, f.__builtins__, f.__closure__, ABSENT)
            meta.update(layout=repr(key), expected=kernel.expected)
            path = store.write(self._cache_key(), digest(repr(key), meta["guards"])[:32], meta, compiled.object_code)
            cache_log.info("%s: stored in the cache (%s)", self.name, path)
        except cache_entries.NotStorable as exc:
            cache_log.info("%s: not cached: %s", self.name, exc)
        except Exception as exc:     # the cache never fails a call
            cache_log.warning("compile cache: %s not stored (%s: %s)", self.name, type(exc).__name__, exc)
        compiled.object_code = None


def _argument(a, index: int, name: str):
    """A float, or a float64 ndarray of rank >= 1; TypeError for anything else."""
    import numpy
    if type(a) is float:
        return a
    if isinstance(a, (float, numpy.floating)) and not isinstance(a, numpy.float32):
        return float(a)
    if type(a) is numpy.ndarray and a.dtype == numpy.float64:
        return _with_builtin_dtype(a) if a.ndim else float(a)
    raise TypeError(f"vectorize({name}): argument {index} is {type(a).__name__}"
                    f"{'[' + str(a.dtype) + ']' if isinstance(a, numpy.ndarray) else ''}; it takes float64 arrays "
                    f"and floats (convert with np.asarray(x, dtype=float))")


def _out_arrays(out, shape: tuple, args: tuple, name: str) -> list:
    """The arrays of `out=` (an array, or tuples of arrays nested as the results are), checked:
    float64, writeable, of the broadcast shape."""
    import numpy
    leaves = []

    def visit(x):
        if isinstance(x, tuple):
            for item in x:
                visit(item)
        elif type(x) is numpy.ndarray and x.dtype == numpy.float64 and x.flags.writeable:
            if x.shape != tuple(shape):
                raise ValueError(f"vectorize({name}): out= array has shape {x.shape}, the result has {tuple(shape)}")
            leaves.append(_with_builtin_dtype(x))
        else:
            raise TypeError(f"vectorize({name}): out= takes writeable float64 arrays (tuples of them for a tuple "
                            f"result), not {type(x).__name__}")
    visit(out)
    for i, o in enumerate(leaves):
        if any(_overlaps(o, other) for other in leaves[i + 1:]):
            raise ValueError(f"vectorize({name}): two out= arrays share memory")
    return leaves


def _with_builtin_dtype(a):
    """A float64 array as compiled loops take it: with NumPy's own float64 dtype object, not an
    equal copy (an unpickled array's, as multiprocessing and dask pass them): a view if need be."""
    import numpy
    return a if a.dtype is numpy.dtype(numpy.float64) else a.view(numpy.float64)


def _overlaps(a, b) -> bool:
    import numpy
    return numpy.may_share_memory(a, b) and numpy.shares_memory(a, b)   # the cheap bounds test first


def _fast_key(args: tuple, outs: list | None, ndarray: type, float64) -> tuple | None:
    """The layout key of arguments that need no conversion (floats, float64 arrays of rank >= 1)
    and out= arrays (writeable float64 arrays), None for any other: it is computed on every
    call, so it does only what the key needs. Shapes and overlaps are not compared here: the
    loop checks them (and on a failure its fallback raises NumPy's error, or copies)."""
    key = []
    for a in args:
        if type(a) is float:
            key.append(_FLOAT)
        elif type(a) is ndarray and a.dtype is float64 and a.ndim:
            key.append(_layout(a))
        else:
            return None
    if outs is None:
        return tuple(key), None
    for o in outs:
        if not (type(o) is ndarray and o.dtype is float64 and o.ndim and o.flags.writeable):
            return None
    return tuple(key), tuple(_layout(o) for o in outs)


def _flatten(x) -> list:
    """The items of nested tuples, left to right (x itself if it is not a tuple)."""
    if type(x) is not tuple:
        return [x]
    return [leaf for item in x for leaf in _flatten(item)]


def _layout(a) -> tuple:
    """What the compiled loop depends on: a float, or an array's rank and which axes have size 1."""
    if type(a) is float:
        return _FLOAT
    shape = a.shape
    return "array", len(shape), tuple(i for i, n in enumerate(shape) if n == 1) if 1 in shape else ()


_FLOAT = ("float",)


def _example(a) -> float:
    """The float the scalar function is traced with (an array's first element)."""
    if type(a) is float:
        return a
    return float(a.flat[0]) if a.size else 1.0


class _Kernel:
    """The loop compiled for one argument layout, and the guards of its scalar trace."""

    def __init__(self, owner: Vectorized, args: tuple, examples: tuple, outs: list | None):
        from tracer.frontend.loader import make_loader
        from tracer.specialize import compile_ir
        from tracer.transforms.vectorize import map_over_arrays
        trace = _scalar_trace(owner, examples)
        self.loader = make_loader(trace)       # globals and closures the scalar code read
        self.guarded = bool(trace.guards())
        self.binding_guards = trace.binding_guards
        by_argument = {source.index: param for (source, _), param in zip(trace.leaves, trace.function.params)}
        fn = map_over_arrays(trace.function, by_argument, [_shape_of(a) for a in args], owner.name,
                             None if outs is None else [_shape_of(o) for o in outs])
        fallback = _python_fallback(owner) if outs is None else _out_fallback(owner, len(args))
        self.call = compile_ir(fn, owner.fuse_fma, fallback=fallback, parallel=owner.parallel,
                               keep_object=owner.cache and current_store() is not None)
        self.expected = self.call.expected
        self.function = fn


class _StoredKernel:
    """A loop from the compile cache: its entry behind a dispatcher, as compile_ir makes one, and
    the binding guards of the scalar code it was compiled from."""

    def __init__(self, owner: Vectorized, meta: dict, linked: tuple, nargs: int, with_out: bool):
        self.loaded, entry, self.guards = linked
        self.guarded = bool(self.guards)
        fallback = _out_fallback(owner, nargs) if with_out else _python_fallback(owner)
        self.call = native.Dispatcher(functools.partial(_wrong_arguments, meta["name"], meta["expected"]), meta["name"])
        self.call.add_native(entry, fallback, ())

    def loader(self, examples: tuple):
        """[] while every binding holds what it held when the loop was compiled, else None."""
        return [] if cache_entries.bindings_hold(self.guards) else None


def _wrong_arguments(name: str, expected: str, *args):
    raise TypeError(f"{name}() takes ({expected}), got ({', '.join(type(a).__name__ for a in args)})")


def _scalar_trace(owner: Vectorized, examples: tuple):
    """The trace of the scalar function for float arguments (transformed: its gradient)."""
    from tracer import ir
    from tracer.frontend.capture import call_intercepted
    from tracer.frontend.interpreter import trace_frame
    from tracer.frontend.sources import ArgSource
    traces = []

    def on_frame(code, frame_args, globals, builtins, closure):
        traces.append(trace_frame(code, frame_args, globals, builtins, closure, owner.py_func.__qualname__,
                                  unroll_loops=owner.transform is not None))
        return None
    if owner.transform is not None:
        owner.transform.check_arguments(examples)
    call_intercepted(owner.py_func, examples, {}, on_frame)
    trace = traces[0]
    if owner.transform is not None:
        trace = owner.transform.apply(trace)
    fn = trace.function
    if fn.returns_none or not all(isinstance(t, ir.ScalarType) for t in ir.leaf_types(fn.result_type)):
        raise TypeError(f"vectorize({owner.name}): the function must return numbers (or tuples of them), "
                        f"not {fn.result_type}")
    if any(not isinstance(source, ArgSource) for source, _ in trace.leaves):
        raise TypeError(f"vectorize({owner.name}): the function reads numbers from globals or objects; pass them "
                        f"as arguments")
    if trace.pins or any(p.type != ir.F64 for p in fn.params):
        raise TypeError(f"vectorize({owner.name}): every argument must be used as a float (an argument used as an "
                        f"int, or as a range bound, cannot vary per element)")
    return trace


def _shape_of(a) -> tuple | None:
    """An argument as `map_over_arrays` takes it: None for a float, else its shape with each axis
    of size 1 kept (it broadcasts) and every other size known only at run time."""
    return None if type(a) is float else tuple(1 if n == 1 else None for n in a.shape)


def _out_fallback(owner: Vectorized, nargs: int):
    """What runs when the loop into out= arrays fails its checks or meets something it cannot
    answer exactly: the checks in Python (NumPy's errors for shapes; an input that overlaps an
    output is copied, then the loop runs again); if they pass, the Python fallback's results
    are written into the outputs."""
    def fallback(*values):
        import numpy
        args, outs = values[:nargs], values[nargs:]
        shape = numpy.broadcast_shapes(*(numpy.shape(a) for a in args))
        _out_arrays(outs, shape, args, owner.name)                # ValueError: a shape, or outputs that overlap
        if any(isinstance(a, numpy.ndarray) and _overlaps(a, o) for a in args for o in outs):
            return owner.call_checked(args, outs)
        for o, result in zip(outs, _flatten(_python_fallback(owner)(*args))):
            o[...] = result
    return fallback


def _python_fallback(owner: Vectorized):
    """What runs when the compiled loop cannot answer exactly: numpy.vectorize of the Python
    function (a gradient has no Python version: it says why)."""
    def fallback(*args):
        import numpy
        numpy.broadcast_shapes(*(numpy.shape(a) for a in args))     # NumPy's ValueError if they do not
        if owner.transform is not None:
            return owner.transform.fallback(*args)
        return numpy.vectorize(owner.py_func, otypes=None)(*args)
    return fallback
