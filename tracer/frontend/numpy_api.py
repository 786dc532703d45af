"""What calls to NumPy functions mean inside a trace: `np.exp(x)`, `np.sum(x, axis=1)`, `np.zeros(n)`,
and array methods (`x.sum()`, `x.reshape(2, 3)`: `call_array_method`).

`lookup(fn)` maps the NumPy callable itself (so `np.exp`, `numpy.exp` and `from numpy import exp`
are the same) to `(tracer, *args, **kwargs) -> symbolic result`. Ufuncs work on arrays and on
scalars (traced or not: `np.exp(2.0)` is a traced f64); reductions, matmul and creation follow
NumPy's signatures for the arguments traced code commonly passes, and say clearly what they do
not take.
"""
from __future__ import annotations

import functools
import math
import sys

from tracer.frontend import (  # noqa: F401 (these register into numpy_more)
    arrays,
    complex_arrays,
    complex_numpy,
    dynlists,
    gathered,
    numpy_dtypes,
    numpy_einsum,
    numpy_extra,
    numpy_linalg,
    numpy_masks,
    numpy_more,
    numpy_shapes,
    numpy_signal,
    numpy_sort,
    numpy_stats,
    numpy_take,
)
from tracer.frontend.arrays import convert, emit_elementwise, kind, operand, promote, wrap
from tracer.frontend.builder import is_number, is_traced
from tracer.frontend.numpy_more import select
from tracer.frontend.objects import ArrayMethod, ExternalList, TracedArray
from tracer.ir import BOOL, DTYPES_BY_NAME, F32, F64, I64, NUMPY_DTYPE_NAMES, ArrayType, ScalarType, compute_type

# ufunc -> (IR op, result dtype rule): "float" computes in f64, "same" keeps int/float
UNARY_UFUNCS = {
    "exp": "exp", "log": "log", "sqrt": "sqrt", "sin": "sin", "cos": "cos", "tan": "tan", "tanh": "tanh",
    "sinh": "sinh", "cosh": "cosh", "arcsin": "asin", "arccos": "acos", "arctan": "atan", "log1p": "log1p",
    "expm1": "expm1", "log2": "log2", "log10": "log10", "floor": "floor", "ceil": "ceil", "trunc": "trunc",
    "rint": "round_even", "fabs": "fabs",
}
BINARY_UFUNCS = {"add": "add", "subtract": "sub", "multiply": "mul", "divide": "div", "true_divide": "div",
                 "floor_divide": "floordiv", "power": "pow", "arctan2": "atan2", "hypot": "c_hypot",
                 "maximum": "maximum", "minimum": "minimum", "remainder": "mod", "mod": "mod",
                 "copysign": "copysign", "fmod": "fmod", "greater": "gt", "greater_equal": "ge", "less": "lt",
                 "less_equal": "le", "equal": "eq", "not_equal": "ne"}
PREDICATES = {"isnan": "isnan", "isinf": "isinf", "isfinite": "isfinite"}
NUMPY_OWN = {"exp": "np_exp", "log": "np_log", "tanh": "np_tanh"}   # of float64 arrays: NumPy's kind of kernel, not math's

_IMPLEMENTATIONS: dict = {}     # NumPy function name -> implementation
_TABLE: dict | None = None      # NumPy callable -> implementation (built on first use)


def lookup(fn):
    global _TABLE
    if _TABLE is None:
        import numpy
        _TABLE = {}
        for name, impl in _IMPLEMENTATIONS.items():
            f = numpy
            for part in name.split("."):         # np.add.at: a method of a ufunc
                f = getattr(f, part, None)
            if f is not None:
                _TABLE.setdefault(f, impl)
    try:
        return _TABLE.get(fn)
    except TypeError:
        return None


def is_numpy_constant(obj) -> bool:
    """A NumPy function traced code knows, a NumPy scalar type or a dtype."""
    if "numpy" not in sys.modules:
        return False
    import numpy
    return lookup(obj) is not None or isinstance(obj, numpy.dtype) or (isinstance(obj, type)
                                                                     and issubclass(obj, numpy.generic))


# what these make is an array even when it is 0-d; every other function's 0-d result (a ufunc's,
# a reduction's) is a NumPy scalar
ARRAY_RESULTS = {"where", "transpose", "reshape", "broadcast_to", "zeros", "empty", "ones", "full",
                 "zeros_like", "ones_like", "empty_like", "full_like", "arange", "array", "asarray"}


def implementations() -> dict:
    """NumPy function name -> its implementation (docs/numpy_coverage.py lists them)."""
    return dict(_IMPLEMENTATIONS)


def implements(*names):
    def register(impl):
        @functools.wraps(impl)
        def call(tracer, *args, **kwargs):
            narrow = numpy_dtypes.narrow_dtype(args, kwargs)
            if complex_arrays.in_arguments(args, kwargs):                  # complex64, complex128 arrays
                result = complex_numpy.call(tracer, names[0], impl, list(args), kwargs,
                                            lambda name, a, k: call_function(tracer, name, a, k))
            elif narrow is not None and numpy_dtypes.handles(names[0]):     # int8 ... float16 arrays
                result = numpy_dtypes.call_on_narrow(tracer, names[0], impl, narrow, args, kwargs)
            else:
                result = impl(tracer, *args, **kwargs)
            if names[0] not in ARRAY_RESULTS:
                result = arrays.unwrap_0d(tracer, result)
            if is_traced(result) and not isinstance(result.type, ArrayType):
                tracer.numpy_scalars.add(result)      # an np.float64 / np.int64 (arrays.promote)
            return result
        for n in names:
            _IMPLEMENTATIONS[n] = call
        return impl
    return register


def call_function(tracer, name: str, args: list, kwargs: dict):
    """np.<name>(*args, **kwargs) (array methods come here too: x.sum() is np.sum(x))."""
    return _IMPLEMENTATIONS[name](tracer, *args, **kwargs)


def call_array_method(tracer, method: ArrayMethod, args: list, kwargs: dict):
    """`x.name(*args, **kwargs)` for an array method (tracer.frontend.arrays.METHODS): the shape
    methods take NumPy's extra spellings (`x.reshape(2, 3)`), the rest are NumPy functions."""
    x, name = method.array, method.name
    if isinstance(x, complex_arrays.ComplexArray):
        return complex_numpy.method(tracer, x, name, args, kwargs, lambda n, a, k: call_function(tracer, n, a, k))
    if name == "astype" and args and complex_arrays.is_complex_dtype(args[0]):
        return complex_numpy.as_complex(tracer, x, args[0])
    if name == "reshape":
        shape = args[0] if len(args) == 1 and type(args[0]) in (tuple, list) else tuple(args)
        return arrays.reshape(tracer, x, shape, **kwargs)
    if name == "transpose":
        axes = args[0] if len(args) == 1 and type(args[0]) in (tuple, list) else (tuple(args) or None)
        return arrays.transpose(tracer, x, axes, **kwargs)
    if name == "astype":
        return arrays.astype(tracer, x, *args, **kwargs)
    if name in ("ravel", "flatten"):
        return arrays.reshape(tracer, x, (-1,))
    if name == "copy":
        return wrap(tracer, tracer.builder.emit("copy", (x.value,)))
    if name == "sort":
        return numpy_sort.sort_in_place(tracer, x, *args, **kwargs)
    if name == "item" and not args and not kwargs:
        return arrays.number_of(tracer, x, "x.item()")
    return call_function(tracer, name, [x, *args], kwargs)


def _no_out(tracer, name, kwargs):
    for k in kwargs:
        raise tracer.error(f"np.{name}(..., {k}=...) is not supported yet")


def _is_array(x) -> bool:
    return isinstance(x, TracedArray)


# ---------------------------------------------------------------------------------- ufuncs
def _unary_ufunc(name, op):
    def impl(tracer, x, **kwargs):
        _no_out(tracer, name, kwargs)
        x = operand(tracer, x, f"np.{name}")
        if not is_traced(x):
            import numpy
            # a constant: NumPy itself (its warnings included), traced as the np.float64 it is
            return tracer.builder.const(float(getattr(numpy, name)(x)))
        dtype = F32 if kind(x) == F32 else F64
        if kind(x) in (I64, BOOL) and op in ("floor", "ceil", "trunc", "round_even"):
            return wrap(tracer, convert(tracer, x, F64))   # of ints: floats equal to them (whole already)
        own = NUMPY_OWN.get(op, op) if dtype == F64 and isinstance(x.type, ArrayType) else op
        return wrap(tracer, emit_elementwise(tracer, own, [x], dtype))
    return impl


for _name, _op in UNARY_UFUNCS.items():
    implements(_name)(_unary_ufunc(_name, _op))


def _binary_ufunc(name, op):
    def impl(tracer, a, b, **kwargs):
        _no_out(tracer, name, kwargs)
        x, y = operand(tracer, a, f"np.{name}"), operand(tracer, b, f"np.{name}")
        if not is_traced(x) and not is_traced(y):
            import numpy
            return tracer.builder.const(getattr(numpy, name)(x, y).item())    # constants: NumPy itself
        if op in arrays.ARITHMETIC or op in arrays.COMPARISONS:
            return arrays.binary(tracer, op, x, y)
        dtype = promote(tracer, x, y)
        if op not in ("maximum", "minimum") and dtype != F32:
            dtype = F64
        return wrap(tracer, emit_elementwise(tracer, op, [x, y], dtype))
    return impl


for _name, _op in BINARY_UFUNCS.items():
    implements(_name)(_binary_ufunc(_name, _op))


def _predicate(name, op):
    def impl(tracer, x, **kwargs):
        _no_out(tracer, name, kwargs)
        x = operand(tracer, x, f"np.{name}")
        if kind(x) not in (F64, F32):       # ints are never nan or inf
            return wrap(tracer, emit_elementwise(tracer, "ne" if name != "isfinite" else "eq", [x, x], kind(x)))
        return wrap(tracer, tracer.builder.emit(op, (tracer.builder.value(convert(tracer, x, F64)),)))
    return impl


for _name, _op in PREDICATES.items():
    implements(_name)(_predicate(_name, _op))


@implements("abs", "absolute")
def _abs(tracer, x, **kwargs):
    _no_out(tracer, "abs", kwargs)
    x = operand(tracer, x, "np.abs")
    if kind(x) == BOOL:
        return x
    return wrap(tracer, emit_elementwise(tracer, "abs", [x], kind(x)))


@implements("negative")
def _negative(tracer, x):
    return arrays.unary(tracer, "neg", x if _is_array(x) else operand(tracer, x))


@implements("square")
def _square(tracer, x):
    return arrays.binary(tracer, "mul", x, x) if _is_array(x) else tracer.builder.binary("mul", x, x)


@implements("sign")
def _sign(tracer, x):
    b = tracer.builder
    x = operand(tracer, x, "np.sign")
    if kind(x) == F32:                      # exact through float64
        return wrap(tracer, convert(tracer, operand(tracer, _sign(tracer, wrap(tracer, convert(tracer, x, F64)))), F32))
    t = kind(x)
    pos = emit_elementwise(tracer, "gt", [x, 0], t)
    neg = emit_elementwise(tracer, "lt", [x, 0], t)
    one, minus, zero = (b.const({F64: float, I64: int}[t](c)) for c in (1, -1, 0))
    # NaN stays NaN and a zero keeps its sign (x * 0.0), as np.sign does
    inner = b.emit("select", (neg, minus, emit_elementwise(tracer, "mul", [x, zero], t) if t == F64 else zero))
    return wrap(tracer, b.emit("select", (pos, one, inner)))


@implements("where")
def _where(tracer, cond, a=None, b=None):
    if a is None and b is None:
        return numpy_masks.nonzero(tracer, cond)         # the indices form: np.nonzero(cond)
    if a is None or b is None:
        raise ValueError("either both or neither of x and y should be given")
    c, x, y = (operand(tracer, v, "np.where") for v in (cond, a, b))
    c = convert(tracer, c, BOOL)
    dtype = promote(tracer, x, y)
    compute = compute_type(dtype)                 # narrow dtypes: selected in int64 or float64, cast back
    x, y = (convert(tracer, convert(tracer, v, dtype), compute) for v in (x, y))
    values = arrays.broadcast(tracer, [tracer.builder.value(v) for v in (c, x, y)])
    chosen = convert(tracer, tracer.builder.emit("select", tuple(values)), dtype)
    if not isinstance(chosen.type, ArrayType):                # of scalars: still an array, 0-d
        chosen = tracer.builder.emit("full", (chosen,), shape=())
    return wrap(tracer, chosen)


@implements("clip")
def _clip(tracer, x, lo, hi):
    """NumPy's loops: two bounds that are numbers keep x where it equals one (-0.0 clipped to
    [0.0, 1.0] stays -0.0) and give NaN where one is NaN; bounds that are arrays, or one bound,
    clip as np.minimum(np.maximum(x, lo), hi) does (where x equals a bound, the bound)."""
    if lo is None or hi is None or any(isinstance(v, TracedArray | list | tuple) for v in (lo, hi)):
        low = _binary_ufunc("maximum", "maximum")(tracer, x, lo) if lo is not None else x
        return _binary_ufunc("minimum", "minimum")(tracer, low, hi) if hi is not None else low
    b = tracer.builder
    x, lo, hi = (operand(tracer, v, "np.clip") for v in (x, lo, hi))
    dtype = promote(tracer, x, lo, hi)
    compute = F64 if dtype == F32 else dtype       # float32: compared as float64 (exact)
    result, lo, hi = (convert(tracer, convert(tracer, v, dtype), compute) for v in (x, lo, hi))
    for bound, beyond in ((lo, "lt"), (hi, "gt")):
        out = b.emit(beyond, (result, bound))
        if dtype in (F64, F32):
            out = b.emit("select", (out, out, b.emit("ne", (bound, bound))))      # or the bound is NaN
        result = b.emit("select", tuple(arrays.broadcast(tracer, [out, b.value(bound), result])))
    result = convert(tracer, result, dtype)
    return wrap(tracer, result)


@implements("logical_not")
def _logical_not(tracer, x):
    x = convert(tracer, operand(tracer, x), BOOL)
    return wrap(tracer, tracer.builder.emit("not", (tracer.builder.value(x),)))


# ---------------------------------------------------------------------------------- reductions
def _axes(tracer, rank: int, axis) -> tuple:
    if axis is None:
        return tuple(range(rank))
    raw = axis if type(axis) in (tuple, list) else (axis,)
    out = []
    for a in raw:
        if type(a) is not int:
            raise TypeError(f"'{type(a).__name__}' object cannot be interpreted as an integer")
        if not -rank <= a < rank:
            import numpy
            raise numpy.exceptions.AxisError(a, rank)
        out.append(a % rank)
    if len(set(out)) != len(out):
        raise ValueError("duplicate value in 'axis'")
    return tuple(sorted(out))


def _array_arg(tracer, x, what):
    if _is_array(x):
        return x.value
    v = operand(tracer, x, what)
    if is_traced(v) and isinstance(v.type, ArrayType):
        return v
    raise tracer.error(f"{what} of a scalar is not supported yet")


def _scalar_reduction(tracer, what, x, axis, keepdims):
    """np.sum(2.5) and the like: a number reduces to itself (None if x is an array)."""
    if _is_array(x) or not (is_traced(x) or is_number(x)) or (is_traced(x) and isinstance(x.type, ArrayType)):
        return None
    if axis not in (None, ()) or keepdims:
        raise tracer.error(f"{what} of a scalar with an axis or keepdims is not supported")
    return x


def reduce(tracer, kind_: str, x, axis=None, keepdims=False, dtype=None):
    what = f"np.{kind_}"
    scalar = _scalar_reduction(tracer, what, x, axis, keepdims)
    if scalar is not None:
        to = arrays.dtype_of(tracer, dtype) if dtype is not None else I64 if kind(scalar) == BOOL and \
            kind_ in ("sum", "prod") else kind(scalar)
        result = convert(tracer, scalar, to)      # traced: an np.float64, not a Python float
        return numpy_more.plus_zero(tracer, result) if kind_ == "sum" and is_traced(result) else \
            result + 0.0 if kind_ == "sum" and type(result) is float else result
    v = _array_arg(tracer, x, what)
    if dtype is not None:
        v = convert(tracer, v, arrays.dtype_of(tracer, dtype))
    axes = _axes(tracer, v.type.rank, axis)
    if not axes:
        v = numpy_more.plus_zero(tracer, v) if kind_ == "sum" else v
        if not keepdims:
            return wrap(tracer, v)
    r = tracer.builder.emit("reduce", (v,), kind=kind_, axes=axes, keepdims=bool(keepdims))   # (float32 in float32)
    return wrap(tracer, r)


@implements("sum")
def _sum(tracer, x, axis=None, dtype=None, keepdims=False):
    return reduce(tracer, "sum", x, axis, keepdims, dtype)


@implements("prod")
def _prod(tracer, x, axis=None, dtype=None, keepdims=False):
    return reduce(tracer, "prod", x, axis, keepdims, dtype)


@implements("max", "amax")
def _max(tracer, x, axis=None, keepdims=False):
    return reduce(tracer, "max", x, axis, keepdims)


@implements("min", "amin")
def _min(tracer, x, axis=None, keepdims=False):
    return reduce(tracer, "min", x, axis, keepdims)


@implements("mean")
def _mean(tracer, x, axis=None, keepdims=False):
    """NumPy's mean: the sum (float64 of ints and bools, float32 of float32) divided by the count
    (NaN, with a warning, when empty)."""
    b = tracer.builder
    scalar = _scalar_reduction(tracer, "np.mean", x, axis, keepdims)
    if scalar is not None:
        return convert(tracer, scalar, F64)
    source = _array_arg(tracer, x, "np.mean")
    t = F32 if source.type.dtype == F32 else F64
    axes = _axes(tracer, source.type.rank, axis)
    count = 1
    for a in axes:
        count = b.binary("mul", count, arrays.sizes_of(tracer, source)[a])
    if source.type.dtype == BOOL and axes:      # bools counted (their float64 sum is that count)
        total = convert(tracer, operand(tracer, reduce(tracer, "sum", wrap(tracer, source), axes, keepdims)), F64)
    else:
        v = convert(tracer, source, t)
        total = operand(tracer, reduce(tracer, "sum", wrap(tracer, v), axes, keepdims))
    return wrap(tracer, emit_elementwise(tracer, "div", [total, b.convert(b.value(count), F64)], t))


def _argreduce(kind_):
    def impl(tracer, x, axis=None, keepdims=False):
        v = _array_arg(tracer, x, f"np.{kind_}")
        if keepdims:
            raise tracer.error(f"np.{kind_}(..., keepdims=True) is not supported yet")
        if axis is not None:
            axis = _axes(tracer, v.type.rank, axis)[0]
            if v.type.rank == 1:
                axis = None
        return wrap(tracer, tracer.builder.emit("argreduce", (v,), kind=kind_, axis=axis))
    return impl


implements("argmax")(_argreduce("argmax"))
implements("argmin")(_argreduce("argmin"))


# ---------------------------------------------------------------------------------- linear algebra
@implements("matmul")
def _matmul(tracer, a, b):
    return arrays.matmul(tracer, a, b)


@implements("dot")
def _dot(tracer, a, b):
    """Of arrays: matmul; with a number: a product."""
    x, y = operand(tracer, a, "np.dot"), operand(tracer, b, "np.dot")
    arrays_given = [is_traced(v) and isinstance(v.type, ArrayType) for v in (x, y)]
    if all(arrays_given):
        product = arrays.matmul(tracer, x, y)
        if all(v.type.rank and v.type.dtype == F64 and all(n == 1 for n in v.type.shape) for v in (x, y)):
            # one element each: NumPy multiplies them (no sum from +0.0: -0.0 stays -0.0)
            b = tracer.builder
            first = [b.const(0)] * x.type.rank
            element = b.binary("mul", b.emit("load", (x, *first)), b.emit("load", (y, *[b.const(0)] * y.type.rank)))
            if not isinstance(product, TracedArray):
                return element
            return wrap(tracer, b.emit("full", (element, *(b.const(1) for _ in product.type.shape)),
                                       shape=product.type.shape))
        return product
    if any(arrays_given):
        return arrays.binary(tracer, "mul", x, y)
    return tracer.builder.binary("mul", x, y)


@implements("outer")
def _outer(tracer, a, b):
    x = arrays.reshape(tracer, wrap(tracer, _array_arg(tracer, a, "np.outer")), (-1, 1))
    y = arrays.reshape(tracer, wrap(tracer, _array_arg(tracer, b, "np.outer")), (1, -1))
    return arrays.binary(tracer, "mul", x, y)


@implements("transpose")
def _transpose(tracer, x, axes=None):
    return arrays.transpose(tracer, wrap(tracer, _array_arg(tracer, x, "np.transpose")), axes)


@implements("reshape")
def _reshape(tracer, x, shape, order="C"):
    return arrays.reshape(tracer, wrap(tracer, _array_arg(tracer, x, "np.reshape")), shape, order)


@implements("broadcast_to")
def _broadcast_to(tracer, x, shape):
    """A read-only view of x repeated to `shape` (its axes aligned on the right)."""
    b = tracer.builder
    array = wrap(tracer, _array_arg(tracer, x, "np.broadcast_to"))
    sizes = _shape_arg(tracer, shape)
    if len(sizes) < array.rank:
        raise ValueError("input operand has more dimensions than allowed by the axis remapping")
    dims = tuple(range(len(sizes) - array.rank, len(sizes)))
    static = tuple(n if type(n) is int else None for n in sizes)
    for n, d in zip(array.type.shape, dims):
        if n is not None and n != 1 and static[d] is not None and static[d] != n:
            raise ValueError(f"operands could not be broadcast together with remapped shapes "
                             f"[original->remapped]: {arrays.shape_text(array.type)} and requested shape {tuple(sizes)}")
    return arrays.make_view(tracer, array, "broadcast_in_dim", tuple(b.value(n) for n in sizes), shape=static,
                            dims=dims)


# ---------------------------------------------------------------------------------- creation
def _shape_arg(tracer, shape) -> tuple:
    sizes = tuple(shape) if type(shape) in (tuple, list) else (shape,)
    for n in sizes:
        if not (type(n) is int or (is_traced(n) and n.type == I64)):
            raise TypeError(f"'{type(n).__name__}' object cannot be interpreted as an integer")
        if type(n) is int and n < 0:
            raise ValueError("negative dimensions are not allowed")
    return sizes


def full(tracer, shape, fill, dtype=None):
    b = tracer.builder
    sizes = _shape_arg(tracer, shape)
    t = dtype if isinstance(dtype, ScalarType) else arrays.dtype_of(tracer, dtype) if dtype is not None else kind(fill)
    value = arrays.cast_stored(tracer, fill, t)      # np.full(n, 300, dtype=np.uint8): OverflowError
    static = tuple(n if type(n) is int else None for n in sizes)
    return wrap(tracer, b.emit("full", (value, *(b.value(n) for n in sizes)), shape=static))


@implements("zeros", "empty")
def _zeros(tracer, shape, dtype=float):
    return full(tracer, shape, 0.0, dtype)


@implements("ones")
def _ones(tracer, shape, dtype=float):
    return full(tracer, shape, 1.0, dtype)


@implements("full")
def _full(tracer, shape, fill_value, dtype=None):
    return full(tracer, shape, operand(tracer, fill_value, "np.full"), dtype)


def _like(fill):
    def impl(tracer, x, dtype=None):
        v = _array_arg(tracer, x, "np.*_like")
        t = arrays.dtype_of(tracer, dtype) if dtype is not None else v.type.dtype
        return full(tracer, tuple(arrays.sizes_of(tracer, v)), fill, t)
    return impl


implements("zeros_like", "empty_like")(_like(0))
implements("ones_like")(_like(1))


@implements("full_like")
def _full_like(tracer, x, fill_value, dtype=None):
    v = _array_arg(tracer, x, "np.full_like")
    t = arrays.dtype_of(tracer, dtype) if dtype is not None else v.type.dtype
    return full(tracer, tuple(arrays.sizes_of(tracer, v)), operand(tracer, fill_value), t)


@implements("arange")
def _arange(tracer, *args, dtype=None):
    b = tracer.builder
    if not 1 <= len(args) <= 3 or any(not (type(a) in (int, float) or (is_traced(a) and a.type in (I64, F64)))
                                      for a in args):
        raise tracer.error("np.arange is supported with int and float start, stop and step")
    start, stop, step = (0, args[0], 1) if len(args) == 1 else (args[0], args[1], args[2] if len(args) == 3 else 1)
    if any(type(a) is float or (is_traced(a) and a.type == F64) for a in (start, stop, step)):
        values = _float_arange(tracer, *(b.convert(a, F64) if is_traced(a) else float(a) for a in (start, stop, step)))
        if dtype is not None:
            values = convert(tracer, values, arrays.dtype_of(tracer, dtype))
        return wrap(tracer, values)
    if not is_traced(step) and step == 0:
        raise ZeroDivisionError("division by zero")
    # the count, as NumPy computes it: ceil((stop - start) / step) (iota makes a negative one 0)
    count = b.negate(b.binary("floordiv", b.binary("sub", start, stop), step))
    static = count if type(count) is int else None
    if dtype is not None and arrays.dtype_of(tracer, dtype) == BOOL and (static is None or static > 2):
        too_long = TypeError("arange() is only supported for booleans when the result has at most length 2.")
        if static is not None:
            raise too_long
        b.raise_if(b.value(b.compare("gt", count, 2)), too_long)
    n = b.value(count)
    values = b.emit("iota", (n,), shape=(max(static, 0) if static is not None else None,))
    if not (type(start) is int and start == 0 and type(step) is int and step == 1):
        values = emit_elementwise(tracer, "add", [emit_elementwise(tracer, "mul", [values, step], I64), start], I64)
    if dtype is not None:
        values = convert(tracer, values, arrays.dtype_of(tracer, dtype))
    return wrap(tracer, values)


def _float_arange(tracer, start, stop, step):
    """NumPy's float arange: ceil((stop - start) / step) values, start, start + step, then
    start + i * delta with delta = (start + step) - start (its DOUBLE_fill)."""
    b = tracer.builder
    if not is_traced(step) and step == 0.0:
        raise ZeroDivisionError("division by zero")
    length = b.emit("ceil", (b.value(b.binary("div", b.binary("sub", stop, start), step)),))
    static = None
    if length.op == "const" or not any(map(is_traced, (start, stop, step))):
        static = max(0, math.ceil((stop - start) / step))
    count = b.emit("to_i64", (length,))        # (NaN or inf: the Python function raises NumPy's error)
    i = convert(tracer, b.emit("iota", (count,), shape=(static,)), F64)
    second = b.binary("add", start, step)
    delta = b.binary("sub", second, start)
    first = emit_elementwise(tracer, "eq", [i, 0.0], F64)
    # (the product goes through a select: rounded, never fused with the add into an fma)
    product = select(tracer, first, 0.0, emit_elementwise(tracer, "mul", [i, delta], F64), F64)
    values = emit_elementwise(tracer, "add", [start, product], F64)
    values = select(tracer, emit_elementwise(tracer, "eq", [i, 1.0], F64), second, values, F64)
    return select(tracer, first, start, values, F64)


@implements("array")
def _array(tracer, obj, dtype=None, *, copy=True):
    """np.array: a new array (np.array(x) of an array copies it, unless copy=False or None)."""
    result = _asarray(tracer, obj, dtype)
    if copy and _is_array(obj) and result is obj:
        return wrap(tracer, tracer.builder.emit("copy", (obj.value,)))
    return result


@implements("asarray")
def _asarray(tracer, obj, dtype=None):
    if _is_array(obj):
        value = obj.value
        if dtype is not None:
            value = convert(tracer, value, arrays.dtype_of(tracer, dtype))
        return wrap(tracer, value) if value is not obj.value else obj
    if isinstance(obj, ExternalList) and not isinstance(obj, gathered.ListView):
        view = gathered.view_of(tracer, obj, always=True)
        obj = view if view is not None else type(obj.obj)(obj.items())     # (short, or not all one type)
    if isinstance(obj, gathered.ListView):         # an input list of numbers, read into an array
        value = tracer.builder.emit("copy", (obj.array.value,))
        if dtype is not None:
            value = convert(tracer, value, arrays.dtype_of(tracer, dtype))
        shape = (len(obj),) if obj.row_length is None else (len(obj), obj.row_length)
        return arrays.reshape(tracer, wrap(tracer, value), shape)      # (its length is guarded)
    if isinstance(obj, dynlists.DynList) and obj.item in (F64, I64, BOOL):    # a list of numbers made at run time
        value = dynlists.to_arrays(tracer, obj)[0].value
        return wrap(tracer, convert(tracer, value, arrays.dtype_of(tracer, dtype)) if dtype is not None else value)
    if type(obj) not in (list, tuple):
        if is_traced(obj) or is_number(obj):
            raise tracer.error("np.array of a single number (a 0-d array) is not supported yet")
        raise tracer.error(f"np.array of a {type(obj).__name__} is not supported")
    items = [x.value if _is_array(x) else x for x in obj]
    if any(is_traced(x) and isinstance(x.type, ArrayType) for x in items):
        raise tracer.error("np.array of a list of arrays is not supported yet (use np.stack when it is)")
    return wrap(tracer, arrays.array_from(tracer, obj, arrays.dtype_of(tracer, dtype) if dtype is not None else None))


@implements("float32")
def _float32(tracer, x=0.0):
    """np.float32(x): a float32 scalar (usable in array operations)."""
    x = operand(tracer, x, "np.float32")
    if is_traced(x) and isinstance(x.type, ArrayType):
        return wrap(tracer, convert(tracer, x, F32))
    return convert(tracer, x, F32)


def _scalar_type(name: str):
    t = DTYPES_BY_NAME[name]

    def impl(tracer, x=0):
        """np.uint8(x) and the like: a NumPy scalar of that dtype (of an array: x.astype)."""
        x = operand(tracer, x, f"np.{name}")
        if is_traced(x) and isinstance(x.type, ArrayType):
            return wrap(tracer, convert(tracer, x, t))
        if not is_traced(x):                      # NumPy's own value (and OverflowError) for a constant
            import numpy
            x = getattr(numpy, name)(x).item()
        return arrays.cast_stored(tracer, x, t)
    return impl


for _name in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16"):
    implements(_name)(_scalar_type(_name))


def _type_information(name: str):
    def impl(tracer, what, *args, **kwargs):
        """np.iinfo, np.finfo, np.dtype of what the trace knows the dtype of (a dtype, a scalar
        type, its name, an array or a traced number): NumPy's own object, made at trace time."""
        import numpy
        if isinstance(what, TracedArray) or is_traced(what):
            t = what.type.dtype if isinstance(what, TracedArray) else what.type
            what = numpy.dtype(NUMPY_DTYPE_NAMES[t])
        if any(is_traced(a) or isinstance(a, TracedArray) for a in (*args, *kwargs.values())):
            raise tracer.error(f"np.{name} of a value known only at run time is not supported")
        return getattr(numpy, name)(what, *args, **kwargs)
    return impl


for _name in ("iinfo", "finfo", "dtype"):
    implements(_name)(_type_information(_name))


@implements("logspace")
def _logspace(tracer, start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """NumPy's: base ** np.linspace(start, stop, num, endpoint), as np.power computes it."""
    exponents = numpy_more.linspace(tracer, start, stop, num, endpoint, axis=axis)
    result = _binary_ufunc("power", "pow")(tracer, base, exponents)
    return wrap(tracer, convert(tracer, operand(tracer, result), arrays.dtype_of(tracer, dtype))) if dtype else result


@implements("float64")
def _float64(tracer, x=0.0):
    x = operand(tracer, x, "np.float64")
    return tracer.builder.convert(x, F64) if is_traced(x) else float(x)


# ---------------------------------------------------------------------------------- more functions
# linspace, var, std, average, cumsum, ... (tracer/frontend/numpy_more.py), and the shape functions
# (tracer/frontend/numpy_shapes.py, which registers into numpy_more's tables)
ARRAY_RESULTS |= numpy_more.ARRAY_RESULTS
for _name, _impl in numpy_more.FUNCTIONS.items():
    implements(_name)(_impl)
arrays.METHODS |= numpy_more.METHODS
