"""More NumPy functions inside a trace: `np.linspace`, statistics (`np.var`, `np.std`,
`np.average`) and running sums (`np.cumsum`, `np.cumprod`), each as NumPy computes it.

The shape functions (`np.concatenate`, `np.roll`, `np.diag`, ...) are in `numpy_shapes`. Both
register into `FUNCTIONS` (NumPy function name -> implementation), `ARRAY_RESULTS` (what gives an
array even when it is 0-d) and `METHODS` (the array methods that are these functions:
`x.var()`, `x.cumsum()`); `tracer.frontend.numpy_api` hooks them into its lookup.

Where NumPy's algorithm is a plain sequence of IEEE operations the same sequence is emitted, so
results agree to the last bit (linspace, cumsum, cumprod); sums over an axis run in order where
NumPy adds in pairs, so var, std and average agree to the last few bits. A division by zero
(var of an empty array, ddof >= the count, weights that sum to 0) fails the compiled call, and
the Python function runs: NumPy's own result, warning or error.
"""
from __future__ import annotations

import math

from tracer.frontend import arrays
from tracer.frontend.arrays import convert, emit_elementwise, kind, promote, sizes_of, wrap
from tracer.frontend.builder import is_number, is_traced
from tracer.frontend.objects import TracedArray
from tracer.ir import BOOL, F32, F64, I64, ArrayType

FUNCTIONS: dict = {}
ARRAY_RESULTS: set = set()
METHODS = {"var", "std", "cumsum", "cumprod"}


def numpy_function(*names, array_result=False):
    """Register the decorated implementation as np.<name> for each of `names`."""
    def register(impl):
        for n in names:
            FUNCTIONS[n] = impl
        if array_result:
            ARRAY_RESULTS.update(names)
        return impl
    return register


# ------------------------------------------------------------------------------- helpers
def as_array(tracer, x, what: str) -> TracedArray:
    """`x` as an array (np.asanyarray): a number is a 0-d array, a list is packed."""
    b = tracer.builder
    if isinstance(x, TracedArray):
        return x
    if type(x) in (list, tuple):
        return wrap(tracer, arrays.array_from(tracer, x))
    if is_number(x) or (is_traced(x) and not isinstance(x.type, ArrayType)):
        return wrap(tracer, b.emit("full", (b.value(convert(tracer, x, kind(x))),), shape=()))
    if is_traced(x):
        return wrap(tracer, x)
    raise tracer.error(f"{what} of a {type(x).__name__} is not supported")


def index_arg(tracer, n, what: str) -> int:
    """An int the trace must know (operator.index): a traced int is pinned by a guard."""
    if type(n) in (int, bool):
        return int(n)
    if is_traced(n) and n.type in (I64, BOOL):
        return int(tracer.builder.concretize(n, what))
    raise TypeError(f"'{type(n).__name__}' object cannot be interpreted as an integer")


def axis_index(tracer, axis, rank: int) -> int:
    """NumPy's normalize_axis_index: an int axis in range (negative counts from the end)."""
    axis = index_arg(tracer, axis, "an axis")
    if not -rank <= axis < rank:
        import numpy
        raise numpy.exceptions.AxisError(axis, rank)
    return axis % rank


def axis_tuple(tracer, axis, rank: int) -> tuple:
    """NumPy's normalize_axis_tuple (None: every axis), in the order given."""
    if axis is None:
        return tuple(range(rank))
    axes = tuple(axis_index(tracer, a, rank) for a in (axis if type(axis) in (tuple, list) else (axis,)))
    if len(set(axes)) != len(axes):
        raise ValueError("repeated axis")
    return axes


def count_of(tracer, v, axes) -> object:
    """The number of elements over `axes` of array value `v` (an int or a traced i64)."""
    count = 1
    for a in axes:
        count = tracer.builder.binary("mul", count, sizes_of(tracer, v)[a])
    return count


def sum_of(tracer, v, axes, keepdims=False):
    """The sum over `axes` (np.add.reduce): float32 in float32 arithmetic, bool as int."""
    b = tracer.builder
    axes = tuple(sorted(axes))
    if not axes:
        return convert(tracer, v, I64) if v.type.dtype == BOOL else plus_zero(tracer, v)
    return b.emit("reduce", (v,), kind="sum", axes=axes, keepdims=bool(keepdims))


def plus_zero(tracer, v):
    """A sum over no axis: NumPy adds each element to its identity, +0.0 (-0.0 becomes 0.0)."""
    dtype = v.type.dtype if isinstance(v.type, ArrayType) else v.type
    if dtype not in (F64, F32):
        return v
    return arrays.emit_elementwise(tracer, "add", [v, 0.0], dtype)


def select(tracer, cond, x, y, dtype):
    """np.where(cond, x, y) of operands of `dtype` (float32 selected as float64: exact)."""
    b = tracer.builder
    compute = F64 if dtype == F32 else dtype
    x, y = (convert(tracer, convert(tracer, v, dtype), compute) for v in (x, y))
    values = arrays.broadcast(tracer, [b.value(v) for v in (cond, x, y)])
    return convert(tracer, b.emit("select", tuple(values)), dtype)


def fallback_unless(tracer, cond) -> None:
    """Where `cond` (a traced bool) is False at run time, fail the call so that the Python
    function runs (an int division by zero, kept by DCE because it may fail)."""
    b = tracer.builder
    b.binary("floordiv", 1, b.emit("to_i64", (b.value(cond),)))


def all_true(tracer, cond):
    """One traced bool: whether every element of the bool array value `cond` is true."""
    return tracer.builder.emit("reduce", (cond,), kind="min", axes=tuple(range(cond.type.rank)), keepdims=False)


def unsupported_arguments(tracer, what, **kwargs):
    """The clear error for an argument given that is not supported yet (None and False: not given)."""
    for k, v in kwargs.items():
        if v is not None and v is not False:
            raise tracer.error(f"{what}(..., {k}=...) is not supported yet")


# ------------------------------------------------------------------------------- linspace
@numpy_function("linspace", array_result=True)
def linspace(tracer, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, device=None):
    """NumPy's: step = (stop - start) / div, start + arange(num) * step (or arange / div * delta
    where the step is 0), the last element stop itself (endpoint)."""
    b = tracer.builder
    num = index_arg(tracer, num, "np.linspace's num")
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    for x in (start, stop):
        if isinstance(x, TracedArray) or not (is_number(x) or is_traced(x)) or isinstance(x.type if is_traced(x)
                                                                                           else None, ArrayType):
            raise tracer.error("np.linspace of arrays (start or stop not a number) is not supported yet")
    axis_index(tracer, axis, 1)
    div = num - 1 if endpoint else num
    dt = promote(tracer, start, stop)
    dt = F64 if dt in (I64, BOOL) else dt
    if dt == F32 and not all(is_traced(x) and x.type == F32 for x in (start, stop)):
        raise tracer.error("np.linspace of a float32 and a number of another type is not supported yet")
    delta = emit_elementwise(tracer, "sub", [stop, start], dt)
    y = convert(tracer, b.emit("iota", (b.const(num),), shape=(num,)), dt)
    if div > 0:
        step = emit_elementwise(tracer, "div", [delta, div], dt)
        scaled = emit_elementwise(tracer, "mul", [y, step], dt)
        by_delta = emit_elementwise(tracer, "mul", [emit_elementwise(tracer, "div", [y, div], dt), delta], dt)
        zero = b.emit("eq", (b.value(convert(tracer, step, F64)), b.const(0.0)))
        scaled = select(tracer, zero, by_delta, scaled, dt)
    else:
        step = math.nan
        scaled = emit_elementwise(tracer, "mul", [y, delta], dt)
    y = emit_elementwise(tracer, "add", [scaled, start], dt)
    if endpoint and num > 1:
        last = b.emit("eq", (b.emit("iota", (b.const(num),), shape=(num,)), b.const(num - 1)))
        y = select(tracer, last, stop, y, dt)
    if dtype is not None:
        to = arrays.dtype_of(tracer, dtype)
        if to == I64:
            y = emit_elementwise(tracer, "floor", [y], dt)
        y = convert(tracer, y, to)
    if retstep:
        if is_traced(step):
            tracer.numpy_scalars.add(step)
        return wrap(tracer, y), step
    return wrap(tracer, y)


# ------------------------------------------------------------------------------- statistics
def mean_of(tracer, v, axes, keepdims):
    """a.mean(axes): the sum (of float64 for ints and bools) divided by the count. Bools are
    counted as int64 (their float64 sum in any order is that count, exactly)."""
    t = F64 if v.type.dtype in (I64, BOOL) else v.type.dtype
    if v.type.dtype == BOOL and axes:
        total = convert(tracer, sum_of(tracer, v, axes, keepdims), F64)
    else:
        total = sum_of(tracer, convert(tracer, v, t), axes, keepdims)
    return emit_elementwise(tracer, "div", [total, count_of(tracer, v, axes)], t)


def variance(tracer, what, a, axis, dtype, out, ddof, keepdims, where, mean, correction):
    """NumPy's _var: the mean (keepdims), then the sum of squared deviations over the count less
    ddof (at least 0)."""
    b = tracer.builder
    unsupported_arguments(tracer, what, dtype=dtype, out=out, mean=mean)
    if where is not None and where is not True:
        raise tracer.error(f"{what}(..., where=...) is not supported yet")
    if correction is not None:
        if ddof != 0:
            raise ValueError("ddof and correction can't be provided simultaneously.")
        ddof = correction
    if not (is_number(ddof) or (is_traced(ddof) and not isinstance(ddof.type, ArrayType))):
        raise tracer.error(f"{what} with a ddof of type {type(ddof).__name__} is not supported")
    v = as_array(tracer, a, what).value
    axes = axis_tuple(tracer, axis, v.type.rank)
    t = F64 if v.type.dtype in (I64, BOOL) else v.type.dtype
    x = convert(tracer, v, t)
    deviation = emit_elementwise(tracer, "sub", [x, mean_of(tracer, x, axes, True)], t)
    total = sum_of(tracer, emit_elementwise(tracer, "mul", [deviation, deviation], t), axes, keepdims)
    count = b.binary("sub", count_of(tracer, v, axes), ddof)
    if is_traced(count):
        count = b.emit("select", (b.value(b.compare("lt", count, 0)), b.value(convert(tracer, 0, count.type)), count))
    else:
        count = max(count, 0)
    return emit_elementwise(tracer, "div", [total, count], t), t


@numpy_function("var")
def var(tracer, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None,
        correction=None):
    return wrap(tracer, variance(tracer, "np.var", a, axis, dtype, out, ddof, keepdims, where, mean, correction)[0])


@numpy_function("std")
def std(tracer, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None,
        correction=None):
    v, t = variance(tracer, "np.std", a, axis, dtype, out, ddof, keepdims, where, mean, correction)
    return wrap(tracer, emit_elementwise(tracer, "sqrt", [v], t))


@numpy_function("average")
def average(tracer, a, axis=None, weights=None, returned=False, *, keepdims=None):
    """NumPy's: the mean, or sum(a * w) / sum(w) in their result type (float64 for ints)."""
    b = tracer.builder
    x = as_array(tracer, a, "np.average")
    v, rank = x.value, x.rank
    axes = None if axis is None else axis_tuple(tracer, axis, rank)
    over = tuple(range(rank)) if axes is None else axes
    kd = bool(keepdims) if keepdims is not None else False
    if weights is None:
        avg = mean_of(tracer, v, over, kd)
        if returned:
            t = kind(avg)
            size = count_of(tracer, v, range(rank))
            avg_size = count_of(tracer, avg, range(avg.type.rank)) if isinstance(avg.type, ArrayType) else 1
            scl = convert(tracer, b.binary("div", size, avg_size), t)
            if isinstance(avg.type, ArrayType):
                scl = b.emit("full", (b.value(scl), *(b.value(n) for n in sizes_of(tracer, avg))),
                             shape=avg.type.shape)
            return wrap(tracer, avg), wrap(tracer, scl)
        return wrap(tracer, avg)
    w = as_array(tracer, weights, "np.average's weights").value
    t = promote(tracer, v, w)
    if v.type.dtype in (I64, BOOL) or t in (I64, BOOL):
        t = F64
    w = _weights_like(tracer, v, w, axes)
    scl = sum_of(tracer, convert(tracer, w, t), over, kd)
    product = emit_elementwise(tracer, "mul", [v, w], t)
    avg = emit_elementwise(tracer, "div", [sum_of(tracer, product, over, kd), scl], t)
    if returned:
        if isinstance(avg.type, ArrayType) and (not isinstance(scl.type, ArrayType) or scl.type.shape != avg.type.shape):
            scl = arrays.broadcast(tracer, [b.value(scl), avg])[0]
            scl = b.emit("copy", (scl,)) if isinstance(scl.type, ArrayType) else \
                b.emit("full", (scl, *(b.value(n) for n in sizes_of(tracer, avg))), shape=avg.type.shape)
        return wrap(tracer, avg), wrap(tracer, scl)
    return wrap(tracer, avg)


def _weights_like(tracer, v, w, axes):
    """NumPy's _weights_are_valid: w of a's shape, or of a's sizes along `axes` (set up to
    broadcast along them). Sizes only the run time knows are checked there (else the call runs
    the Python function, which raises NumPy's error)."""
    b = tracer.builder
    a_sizes, w_sizes = sizes_of(tracer, v), sizes_of(tracer, w)
    if w.type.rank == v.type.rank and all(_may_equal(m, n) for m, n in zip(v.type.shape, w.type.shape)):
        for m, n in zip(a_sizes, w_sizes):
            if is_traced(m) or is_traced(n):
                fallback_unless(tracer, b.compare("eq", m, n))
        return w
    if axes is None:
        raise TypeError("Axis must be specified when shapes of a and weights differ.")
    if w.type.rank != len(axes) or not all(_may_equal(v.type.shape[ax], n) for ax, n in zip(axes, w.type.shape)):
        raise ValueError("Shape of weights must be consistent with shape of a along specified axis.")
    for ax, n in zip(axes, w_sizes):
        if is_traced(a_sizes[ax]) or is_traced(n):
            fallback_unless(tracer, b.compare("eq", a_sizes[ax], n))
    order = sorted(range(len(axes)), key=lambda i: axes[i])     # np.argsort(axis)
    if order != list(range(len(axes))):
        w = b.emit("transpose", (w,), perm=tuple(order))
    dims = tuple(sorted(axes))
    shape = tuple(w.type.shape[dims.index(d)] if d in dims else 1 for d in range(v.type.rank))
    sizes = tuple(b.value(w_sizes[order[dims.index(d)]] if d in dims else 1) for d in range(v.type.rank))
    return b.emit("broadcast_in_dim", (w, *sizes), shape=shape, dims=dims)


def _may_equal(m, n) -> bool:
    return m is None or n is None or m == n


# ------------------------------------------------------------------------------- running sums
def cumulative(tracer, kind_, a, axis, dtype, out):
    """np.cumsum / np.cumprod: a `scan` along the axis (None: of the flattened array), in order
    as NumPy's accumulate; ints and bools as int64, float32 in float32."""
    unsupported_arguments(tracer, f"np.cum{kind_}", out=out)
    x = as_array(tracer, a, f"np.cum{kind_}")
    if axis is None:
        x, axis = arrays.reshape(tracer, x, (-1,)), 0
    else:
        axis = axis_index(tracer, axis, x.rank)
    t = arrays.dtype_of(tracer, dtype) if dtype is not None else I64 if x.type.dtype == BOOL else x.type.dtype
    if t == BOOL:
        raise tracer.error(f"np.cum{kind_}(..., dtype=bool) is not supported yet")
    v = convert(tracer, x.value, t)
    return wrap(tracer, tracer.builder.emit("scan", (v,), kind=kind_, axis=axis))


@numpy_function("cumsum", array_result=True)
def cumsum(tracer, a, axis=None, dtype=None, out=None):
    return cumulative(tracer, "sum", a, axis, dtype, out)


@numpy_function("cumprod", array_result=True)
def cumprod(tracer, a, axis=None, dtype=None, out=None):
    return cumulative(tracer, "prod", a, axis, dtype, out)
