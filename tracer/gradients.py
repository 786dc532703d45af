"""`grad`, `value_and_grad` and `vjp`: compiled reverse-mode derivatives of plain Python functions.

    from tracer import grad, value_and_grad, vjp

    def f(x, y):
        return x * math.sin(y)

    grad(f)(2.0, 1.0)                       # d f / d x = sin(1.0)
    grad(f, argnums=(0, 1))(2.0, 1.0)       # (sin(1.0), 2.0 * cos(1.0))
    value_and_grad(f)(2.0, 1.0)             # (f(2, 1), sin(1.0))
    grad(grad(f, 1), 1)(2.0, 1.0)           # d2 f / d y2 = -2.0 * sin(1.0)
    value, pullback = vjp(f, 2.0, 1.0)      # pullback(1.0) == (sin(1.0), 2.0 * cos(1.0))

Each returns a compiled callable exactly like `@trace` (same dispatcher, guards and cache): the
function is traced, the *transform* here turns its IR into the gradient's IR
(`tracer.transforms.autodiff`), and that IR is optimized and compiled. Transforms nest, so `grad(grad(f))`
differentiates the IR of the first gradient, and `trace(grad(f))` / `grad(trace(f))` work.
Called inside a traced function, `grad(f)(x)` is differentiated while tracing (`trace_call`), as
`jax.grad` inside `jax.jit`: the caller's compiled code computes the gradient itself.
"""
from __future__ import annotations

import dataclasses
import types
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tracer.api import COMPILE_LOCK, DEFAULT_MAX_SPECIALIZATIONS, made_once, make_dispatcher, unwrap
from tracer.errors import TracerError
from tracer.frontend.registered import implements
from tracer.pickling import function_reference, rebuild_transform

if TYPE_CHECKING:
    from tracer.frontend.interpreter import Trace

# What differentiates (the front end's values, autodiff, the compiler) is imported in the methods
# that trace and compile: `from tracer import grad` stays cheap, and a process whose gradients all
# come from the compile cache never loads it.


def _float_array(x) -> bool:
    from tracer.frontend.arrays import is_ndarray
    return is_ndarray(x) and x.dtype.name == "float64"


def _float_list_view(tracer, x):
    """A list of floats or of equal rows of floats (an input list, or one built in the trace)
    as a ListView, else None."""
    from tracer.frontend import gathered
    from tracer.ir import F64
    view = gathered.view_of(tracer, x, always=True)
    return view if view is not None and view.array.type.dtype == F64 else None


class NoFloatResult(TracerError, ArithmeticError):
    """The compiled code needs Python's exact arithmetic, which has no derivative."""


def _param_of_argument(trace: Trace, argnum: int) -> int | None:
    """The IR parameter the float argument `argnum` feeds (None: the trace never read it)."""
    from tracer.frontend.sources import ArgSource
    for i, (source, _) in enumerate(trace.leaves):
        if isinstance(source, ArgSource) and source.index == argnum:
            return i
    return None


class Transform:
    """Turns a function's trace into another function's trace (same arguments, new IR).

    `fn` is a Python function, or a `SymbolicFunction` when `grad(lambda ...)` is made inside
    traced code. `cacheable`: its compiled specializations can be stored in the compile cache
    (they need nothing of this process but the function)."""

    cacheable = True

    def __init__(self, fn, inner: Transform | None):
        self.fn = fn
        self.inner = inner                  # applied first (grad(grad(f)): the inner grad)
        python = isinstance(fn, types.FunctionType)        # else a SymbolicFunction
        code = fn.__code__ if python else fn.code
        self.name = fn.__qualname__ if python else fn.name
        self.nargs = code.co_argcount
        self.arg_names = list(code.co_varnames[:code.co_argcount])

    def apply(self, trace: Trace) -> Trace:
        if self.inner is not None:
            trace = self.inner.apply(trace)
        return dataclasses.replace(trace, function=self.transform(trace))

    def check_arguments(self, args: tuple) -> None:
        if self.inner is not None:
            self.inner.check_arguments(args)

    def trace_call(self, tracer, args: list, kwargs: dict):
        """The symbolic result of calling the transformed function inside a trace."""
        if self.inner is not None:
            def call_inner(a, k):
                return self.inner.trace_call(tracer, a, k)
        else:
            def call_inner(a, k):
                return tracer.call(self.fn, a, k)
        return self.transform_call(tracer, args, kwargs, call_inner)

    def transform_call(self, tracer, args, kwargs, call_inner):
        raise tracer.error(f"{self.describe(self.name)} cannot be called inside traced code")

    def check_float(self, args: tuple, argnum: int, hint: str = "or leave it out of argnums") -> None:
        if argnum < len(args) and type(args[argnum]) is not float and not _float_array(args[argnum]):
            raise self.not_float(argnum, type(args[argnum]).__name__, hint)

    def not_float(self, argnum: int, kind: str, hint: str) -> TypeError:
        name = self.arg_names[argnum] if argnum < len(self.arg_names) else f"args[{argnum}]"
        return TypeError(f"{self.describe(self.name)}: argument {argnum} ({name!r}) is {kind}, but only "
                         f"float arguments (and float64 arrays) can be differentiated (pass {name} as a float, "
                         f"{hint})")

    def fallback(self, *args):
        raise NoFloatResult(f"{self.describe(self.name)}: at these arguments Python computes {self.name}() "
                            f"with exact integers past 64 bits or a complex power, which have no float "
                            f"derivative")


class Grad(Transform):
    """grad / value_and_grad with respect to the positional arguments `argnums`."""

    def __init__(self, fn, inner, argnums, with_value: bool):
        super().__init__(fn, inner)
        self.as_tuple = isinstance(argnums, tuple)
        self.argnums = argnums if self.as_tuple else (argnums,)
        self.with_value = with_value
        nargs = self.nargs
        if not self.argnums:
            raise ValueError(f"argnums {argnums!r} names no argument to differentiate")
        for a in self.argnums:
            if type(a) is not int or not -nargs <= a < nargs:
                raise ValueError(f"argnums {argnums!r}: {self.name}() has {nargs} positional "
                                 f"argument(s), so each argnum must be an int in [0, {nargs})")
        self.argnums = tuple(a % nargs for a in self.argnums)

    def __reduce__(self):
        """Pickled as its function and options (tracer.pickling)."""
        argnums = self.argnums if self.as_tuple else self.argnums[0]
        return rebuild_transform, (Grad, function_reference(self.fn), self.inner, argnums, self.with_value)

    def describe(self, name: str) -> str:
        inner = self.inner.describe(name) if self.inner else name
        what = "value_and_grad" if self.with_value else "grad"
        argnums = "" if self.argnums == (0,) and not self.as_tuple else f", argnums={self._argnums_text()}"
        return f"{what}({inner}{argnums})"

    def _argnums_text(self) -> str:
        return repr(self.argnums) if self.as_tuple else str(self.argnums[0])

    def check_arguments(self, args: tuple) -> None:
        super().check_arguments(args)
        for a in self.argnums:
            self.check_float(args, a)

    def transform_call(self, tracer, args: list, kwargs: dict, call_inner):
        b = tracer.builder
        from tracer.frontend import gathered
        from tracer.frontend.arrays import wrap
        from tracer.frontend.loader import PY_TYPE
        from tracer.frontend.objects import TracedArray
        from tracer.ir import F64, Value
        from tracer.transforms.autodiff import NotDifferentiable, backpropagate, zero_if_none
        what = self.describe(self.name)
        wrt: dict[int, Value] = {}          # argnum -> the value differentiated (argnums may repeat)
        as_list = {}                        # argnum -> makes a list held in an array (a list argument)
        for a in dict.fromkeys(self.argnums):
            if a >= len(args):
                raise tracer.error(f"{what}: pass the differentiated arguments positionally in traced code")
            x = args[a]
            if type(x) is float:
                x = b.const(x)
            elif isinstance(x, Value) and x.type == F64:
                x = b.emit("add", (x, b.const(-0.0)))   # x itself, as a value of its own: this argument's uses only
            elif isinstance(x, TracedArray) and x.type.dtype == F64:
                x = b.emit("transpose", (x.value,), perm=tuple(range(x.rank)))   # the same, for an array
            elif (view := _float_list_view(tracer, x)) is not None:
                # a list of floats (or of rows of floats) is differentiated as the array holding
                # it; the function reads a list held in that array, and its gradient is such a list
                x = b.emit("transpose", (view.array.value,), perm=tuple(range(view.array.rank)))
                as_list[a] = lambda g, view=view: gathered.ListView(tracer, TracedArray(tracer, g), len(view),
                                                                    row_length=view.row_length)
                wrt[a] = x
                args[a] = as_list[a](x)
                continue
            else:
                kind = PY_TYPE.get(x.type, str(x.type)) if isinstance(x, Value) else type(x).__name__
                raise self.not_float(a, kind, "or leave it out of argnums")
            wrt[a] = x
            args[a] = wrap(tracer, x)
        start = len(b.block.values)
        tracer.unroll_loops += 1             # autodiff differentiates unrolled loops
        try:
            result = call_inner(args, kwargs)
        finally:
            tracer.unroll_loops -= 1
        if type(result) is float:
            result = b.const(result)
        if not isinstance(result, Value) or result.type != F64:
            kind = type(result).__name__ if not isinstance(result, Value) else PY_TYPE.get(result.type, str(result.type))
            raise NotDifferentiable(f"{what} needs {self.name}() to return a float, not {kind}",
                                    tracer.loc)
        caller_loc = b.loc
        grads = dict(zip(wrt, backpropagate(b, b.block.values[start:], {result: b.const(1.0)}, list(wrt.values()),
                                             home=b.block)))
        b.loc = caller_loc
        grads = zero_if_none(b, [grads[a] for a in self.argnums], [wrt[a] for a in self.argnums])
        grads = [as_list[a](g) if a in as_list else wrap(tracer, g) for a, g in zip(self.argnums, grads)]
        g = tuple(grads) if self.as_tuple else grads[0]
        return (result, g) if self.with_value else g

    def transform(self, trace: Trace):
        from tracer.transforms.autodiff import grad_function
        wrt = [_param_of_argument(trace, a) for a in self.argnums]
        fn = trace.function
        prefix = "value_and_grad_" if self.with_value else "grad_"
        return grad_function(fn, wrt, self.with_value, self.as_tuple, name=prefix + fn.name)


class Vjp(Transform):
    """The forward half of `vjp`: the value, a tag naming the backward, and its residuals."""

    cacheable = False       # its backwards are compiled in this process, by tag

    def __init__(self, fn, inner, fuse_fma: bool):
        super().__init__(fn, inner)
        self.fuse_fma = fuse_fma
        self.backwards: list[Backward] = []

    def __reduce__(self):
        """Pickled as its function and options (tracer.pickling): no backward travels."""
        return rebuild_transform, (Vjp, function_reference(self.fn), self.inner, self.fuse_fma)

    def describe(self, name: str) -> str:
        return f"vjp({self.inner.describe(name) if self.inner else name})"

    def check_arguments(self, args: tuple) -> None:
        super().check_arguments(args)
        for a in range(len(args)):
            self.check_float(args, a, "or fix it with a closure: vjp differentiates every argument")

    def transform(self, trace: Trace):
        from tracer.transforms.autodiff import BlockEmitter, vjp_functions
        wrt = [_param_of_argument(trace, a) for a in range(trace.nargs)]
        forward, backward = vjp_functions(trace.function, wrt)
        tag = len(self.backwards)
        self.backwards.append(Backward(backward, trace.function.result_type, self.fuse_fma))
        value, *residuals = forward.result.args     # (value, *residuals): put the tag second
        emitter = BlockEmitter(forward.body)
        emitter.loc = forward.result.loc
        forward.body.results = [emitter.emit("tuple", (value, emitter.emit("const", (), value=tag), *residuals))]
        return forward


class Backward:
    """The backward half of one `vjp` specialization, compiled on first use."""

    def __init__(self, function, output_type, fuse_fma: bool):
        self.function = function
        self.output_type = output_type
        self.fuse_fma = fuse_fma
        self._compiled = None

    def __call__(self, residuals: tuple, cotangent):
        from tracer.specialize import compile_ir
        if self._compiled is None:
            with COMPILE_LOCK:
                if self._compiled is None:
                    self._compiled = compile_ir(self.function, self.fuse_fma)
        return self._compiled(*residuals, *_flatten_cotangent(self.output_type, cotangent))


def _flatten_cotangent(t, ct) -> list:
    """The float leaves of a cotangent shaped like the output (its int/bool leaves are ignored)."""
    from tracer.ir import F64, TupleType
    if isinstance(t, TupleType):
        if type(ct) is not tuple or len(ct) != len(t.elements):
            raise TypeError(f"the pullback takes a cotangent shaped like the output ({_shape(t)}), "
                            f"got {ct!r}")
        return [leaf for e, c in zip(t.elements, ct) for leaf in _flatten_cotangent(e, c)]
    if t != F64:
        return []
    if type(ct) is not float:
        raise TypeError(f"the pullback takes a float cotangent for a float output, got {type(ct).__name__}")
    return [ct]


def _shape(t) -> str:
    from tracer.frontend.loader import PY_TYPE
    from tracer.ir import TupleType
    if isinstance(t, TupleType):
        return "(" + ", ".join(_shape(e) for e in t.elements) + ("," if len(t.elements) == 1 else "") + ")"
    return PY_TYPE[t]


# ------------------------------------------------------------------------------------ the API
def grad(fn: Callable[..., Any], argnums: int | tuple[int, ...] = 0, *,
         fuse_fma: bool | None = None) -> Callable[..., Any]:
    """The gradient of `fn` (which returns a float) with respect to positional argument(s)
    `argnums`: a float for an int `argnums`, a tuple of floats for a tuple. Compiled like
    `@trace`. Differentiating with respect to an int or bool argument is a TypeError.

    The compiled gradient is kept with `fn` for as long as `fn` lives: `grad(f)(x)` written
    inline compiles on its first call only (`value_and_grad`, `vjp` and `vectorize` too)."""
    return _transformed(fn, "grad", argnums, lambda f, inner: Grad(f, inner, argnums, with_value=False), fuse_fma)


def value_and_grad(fn: Callable[..., Any], argnums: int | tuple[int, ...] = 0, *,
                   fuse_fma: bool | None = None) -> Callable[..., Any]:
    """`(fn(*args), grad(fn, argnums)(*args))`, both from one compiled function."""
    return _transformed(fn, "value_and_grad", argnums, lambda f, inner: Grad(f, inner, argnums, with_value=True),
                        fuse_fma)


def _transformed(fn, caller: str, argnums, make, fuse_fma):
    """The dispatcher of `make(py_func, inner)`, made once per function and options."""
    py_func, inner = unwrap(fn, caller)
    if fuse_fma is None:
        fuse_fma = getattr(fn, "fuse_fma", True)
    # argnums as given: 0 and (0,) answer differently (a float, a 1-tuple)
    cache = getattr(fn, "cache", True)          # trace(f, cache=False) stays out of the cache
    key = caller, type(argnums), argnums, inner, fuse_fma, cache
    return made_once(py_func, key, lambda: make_dispatcher(py_func, make(py_func, inner), fuse_fma,
                                                           DEFAULT_MAX_SPECIALIZATIONS, cache=cache))


def vjp(fn: Callable[..., Any], *args: Any) -> tuple[Any, Callable[[Any], tuple[Any, ...]]]:
    """`(fn(*args), pullback)`: `pullback(ct)` gives the gradients of `sum(ct * fn(*args))` with
    respect to every argument (a tuple, one float per argument), from a compiled backward that
    reuses what the compiled forward saved. `ct` has the shape of the output: a float, or a
    tuple for a tuple output (its int and bool entries are ignored)."""
    py_func, inner = unwrap(fn, "vjp")
    fuse_fma = getattr(fn, "fuse_fma", True)
    forward = made_once(py_func, ("vjp", inner, fuse_fma), lambda: make_dispatcher(
        py_func, Vjp(py_func, inner, fuse_fma), fuse_fma, DEFAULT_MAX_SPECIALIZATIONS))
    value, tag, *residuals = forward(*args)
    backward = forward.transform.backwards[tag]

    def pullback(ct):
        return backward(tuple(residuals), ct)
    pullback.__qualname__ = f"pullback of {forward.transform.describe(py_func.__qualname__)}"
    return value, pullback


# ---------------------------------------------------------------------------- inside traced code
def _transform_in_trace(with_value: bool):
    """`grad(f, argnums)` met while tracing is made at trace time (its arguments are constants);
    calling the result differentiates `f` inside the caller's trace (`Transform.trace_call`)."""
    def make(tracer, fn, argnums=0, **options):
        from tracer.frontend.objects import SymbolicFunction, TransformedFunction
        from tracer.ir import Value
        if any(isinstance(a, Value) for a in (argnums, *options.values())):
            raise tracer.error("grad()/value_and_grad() arguments other than the function must be constants")
        if isinstance(fn, SymbolicFunction):
            return TransformedFunction(Grad(fn, None, argnums, with_value))
        if isinstance(fn, TransformedFunction):          # grad(grad(f)) inside the trace
            return TransformedFunction(Grad(fn.transform.fn, fn.transform, argnums, with_value))
        py_func, inner = unwrap(fn, "value_and_grad" if with_value else "grad")
        return TransformedFunction(Grad(py_func, inner, argnums, with_value))
    return make


implements(grad)(_transform_in_trace(with_value=False))
implements(value_and_grad)(_transform_in_trace(with_value=True))
