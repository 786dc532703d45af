"""NumPy functions on complex arrays (tracer.frontend.complex_arrays), and the ones that exist for
complex numbers: np.real, np.imag, np.conj, np.angle, np.iscomplexobj.

`call` is what a NumPy function does when a complex array is among its arguments (or its
dtype= is complex): the ufuncs NumPy computes on complex numbers are written out on the parts
(`COMPLEX`); a function that only moves elements (reshape, concatenate, roll, where...) runs on
each part (`PARTWISE`); any other is refused clearly. Where NumPy's result would differ on
inputs at the edge of the float range (sqrt of parts near overflow, exp past e**709, a part
that is inf or nan), the compiled call fails for that input and the Python function gives
NumPy's answer.
"""
from __future__ import annotations

import math

from tracer.frontend import arrays
from tracer.frontend.arrays import convert, emit_elementwise, sizes_of, wrap
from tracer.frontend.builder import is_number, is_traced
from tracer.frontend.complex_arrays import (
    DOUBLE_MIN,
    ComplexArray,
    Parts,
    binary,
    both,
    complex_type_of,
    either,
    is_complex_dtype,
    make,
    matmul,
    part_type,
    parts,
    scalar,
)
from tracer.frontend.complexes import TracedComplex
from tracer.frontend.numpy_more import all_true, fallback_unless, numpy_function
from tracer.frontend.objects import TracedArray
from tracer.ir import ARRAY_DTYPE_NAMES, BOOL, F32, F64, PART_TYPE, ArrayType

DOUBLE_MAX = 1.7976931348623157e308
PARTWISE = {"reshape", "ravel", "transpose", "flip", "fliplr", "flipud", "roll", "concatenate", "stack", "hstack",
            "vstack", "column_stack", "squeeze", "expand_dims", "swapaxes", "moveaxis", "tile", "repeat",
            "atleast_1d", "atleast_2d", "atleast_3d", "diagonal", "diag", "tril", "triu", "broadcast_to", "copy",
            "cumsum", "diff", "split", "array_split", "hsplit", "vsplit", "take", "trace"}
OWN = {"real", "imag", "conj", "conjugate", "angle", "iscomplexobj", "isrealobj", "vdot"}     # registered below
BINARY = {"add": "add", "subtract": "sub", "multiply": "mul", "divide": "div", "true_divide": "div",
          "power": "pow", "equal": "eq", "not_equal": "ne", "matmul": "matmul"}


def call(tracer, name: str, impl, args: list, kwargs: dict, np_call):
    """np.<name>(*args, **kwargs) where a complex array takes part; `impl` is the real version,
    `np_call(name, args, kwargs)` calls another NumPy function as traced code does."""
    if name in COMPLEX:
        return COMPLEX[name](tracer, np_call, *args, **kwargs)
    if name in OWN:
        return impl(tracer, *args, **kwargs)
    if name in BINARY and len(args) == 2 and not kwargs:
        return binary(tracer, BINARY[name], *args)
    if name in PARTWISE:
        return _partwise(tracer, name, impl, args, kwargs)
    raise tracer.error(f"np.{name} of a complex array is not supported yet")


def _partwise(tracer, name, impl, args, kwargs):
    """The function on each part of its first argument (an array, or a sequence of them: a real
    array's imaginary part is zeros); its other arguments (sizes, axes, indices) as they are."""
    if not args or _complex_leaves(args[1:]) or _complex_leaves(kwargs.values()):
        raise tracer.error(f"np.{name} with a complex array other than its first argument is not supported yet")
    part = part_type(tracer, *_leaves(args[:1]))
    outs = [impl(tracer, *_select(tracer, args[:1], i, part), *args[1:], **kwargs) for i in (0, 1)]
    return _joined(tracer, name, *outs)


def _leaves(values):
    out = []
    for v in values:
        if type(v) in (list, tuple):
            out += _leaves(v)
        elif isinstance(v, (ComplexArray, TracedArray, TracedComplex, complex)):
            out.append(v)
    return out


def _complex_leaves(values):
    return [v for v in _leaves(values) if isinstance(v, (ComplexArray, TracedComplex, complex))]


def _select(tracer, values, which: int, part):
    """The arguments with each complex array replaced by its part `which` (0 real, 1 imaginary);
    a real array's imaginary part is zeros."""
    out = []
    for v in values:
        if type(v) in (list, tuple):
            out.append(type(v)(_select(tracer, v, which, part)))
        elif isinstance(v, ComplexArray):
            out.append(wrap(tracer, convert(tracer, (v.real, v.imag)[which].value, part)))
        elif isinstance(v, TracedArray):
            value = convert(tracer, v.value, part)
            out.append(wrap(tracer, value if which == 0 else _zeros_like(tracer, value)))
        elif isinstance(v, (TracedComplex, complex)):
            out.append(convert(tracer, (v.real, v.imag)[which], part))
        else:
            out.append(v)
    return out


def _zeros_like(tracer, v):
    b = tracer.builder
    return b.emit("full", (b.value(convert(tracer, 0.0, v.type.dtype)), *map(b.value, sizes_of(tracer, v))),
                  shape=v.type.shape)


def _joined(tracer, name, re, im):
    if type(re) in (list, tuple):
        return type(re)(_joined(tracer, name, r, i) for r, i in zip(re, im))
    if isinstance(re, TracedArray):
        return ComplexArray(re, im)
    if is_traced(re) or is_number(re):
        return scalar(tracer, re, im)
    raise tracer.error(f"np.{name} of a complex array is not supported yet")


def _f64(tracer, x):
    return convert(tracer, x, F64) if is_traced(x) else float(x)


# ------------------------------------------------------------------------------ complex ufuncs
def _absolute(tracer, np, z, **kwargs):
    _no_kwargs(tracer, "abs", kwargs)
    return absolute(tracer, z)


def absolute(tracer, z):
    """np.abs(z). Of an array, NumPy's SIMD loop: larger * sqrt(fma(r, r, 1)) with r = smaller /
    larger of the parts' magnitudes (an inf part makes inf, a NaN one NaN). Of an np.complex128,
    the C library's hypot (npy_cabs); if that overflows, the call runs Python (NumPy warns)."""
    f = Parts(tracer, part_type(tracer, z))
    re, im = parts(tracer, z, f.part)
    if not isinstance(z, ComplexArray):
        r = f.op("c_hypot", re, im)
        if is_traced(r):
            _ordinary(tracer, either(tracer, f.op("not", f.op("isinf", r)), f.op("isinf", re), f.op("isinf", im)))
        return r
    re, im = f.op("fabs", re), f.op("fabs", im)
    im = f.where(f.op("isinf", re), math.inf, im)
    re = f.where(f.op("isinf", im), math.inf, re)
    im = f.where(f.op("isnan", re), math.nan, im)
    re = f.where(f.op("isnan", im), math.nan, re)
    larger, smaller = f.op("maximum", re, im), f.op("minimum", re, im)
    divide = f.op("not", either(tracer, f.op("isinf", larger), f.op("eq", larger, 0.0)))
    ratio = f.where(divide, f.div(smaller, f.where(divide, larger, 1.0)), 0.0)
    return wrap(tracer, f.mul(f.op("sqrt", f.op("fma", ratio, ratio, 1.0)), larger))


def _negative(tracer, np, z):
    f = Parts(tracer, part_type(tracer, z))
    re, im = parts(tracer, z, f.part)
    return make(tracer, f.op("neg", re), f.op("neg", im))


def _conj(tracer, np, z, **kwargs):
    _no_kwargs(tracer, "conj", kwargs)
    if not _is_complex(z):
        return _real_copy(tracer, z)
    f = Parts(tracer, part_type(tracer, z))
    re, im = parts(tracer, z, f.part)
    return make(tracer, _copy(tracer, re), f.op("neg", im))


def _copy(tracer, v):
    if is_traced(v) and isinstance(v.type, ArrayType):
        return tracer.builder.emit("copy", (v,))
    return v


def _real_copy(tracer, x):
    x = arrays.operand(tracer, x, "np.conj")
    return wrap(tracer, _copy(tracer, x))


def _square(tracer, np, z):
    return binary(tracer, "mul", z, z)


def _angle(tracer, np, z, deg=False):
    if _is_complex(z):
        part = part_type(tracer, z)
        re, im = parts(tracer, z, part)
    else:
        x = arrays.operand(tracer, z, "np.angle")
        part = F32 if arrays.kind(x) == F32 else F64
        re, im = convert(tracer, x, part), 0.0
    angle = emit_elementwise(tracer, "atan2", [im, re], part)
    if deg:
        angle = emit_elementwise(tracer, "mul", [angle, 180.0 / math.pi], part)
    return wrap(tracer, angle)


def _exp(tracer, np, z, **kwargs):
    """glibc's cexp on finite parts with a real part at most 709 (else the call runs Python):
    exp(x) * (cos(y), sin(y)), and y itself as the imaginary part where y is 0."""
    _no_kwargs(tracer, "exp", kwargs)
    f = Parts(tracer, part_type(tracer, z))
    x, y = parts(tracer, z, f.part)
    _ordinary(tracer, both(tracer, f.op("isfinite", y), f.op("le", x, 709.0)))
    e = f.op("exp", x)
    tiny = f.op("le", f.op("fabs", y), DOUBLE_MIN)
    sin, cos = f.where(tiny, y, f.op("sin", y)), f.where(tiny, 1.0, f.op("cos", y))
    im = f.where(f.op("eq", y, 0.0), y, f.mul(e, sin))
    return make(tracer, f.mul(e, cos), im)


def _log(tracer, np, z, **kwargs):
    """glibc's clog (NumPy calls it): log|z| with log1p where |z| is near 1 (x^2 + y^2 - 1 without
    cancellation: `_x2y2m1`), and atan2(y, x). Where glibc scales (parts past DBL_MAX / 2 or both
    subnormal), and for zero, inf and nan parts, the call runs Python (log(0) is NumPy's
    divide-by-zero warning)."""
    _no_kwargs(tracer, "log", kwargs)
    f = Parts(tracer, part_type(tracer, z))
    x, y = parts(tracer, z, f.part)
    eps = 2.220446049250313e-16 if f.part == F64 else 1.1920928955078125e-07
    big = (DOUBLE_MAX if f.part == F64 else 3.4028234663852886e38) / 2
    tiny = DOUBLE_MIN if f.part == F64 else 1.1754943508222875e-38
    ax, ay = f.op("fabs", x), f.op("fabs", y)
    swap = f.op("lt", ax, ay)
    ax, ay = f.where(swap, ay, ax), f.where(swap, ax, ay)           # ax >= ay
    ones = both(tracer, f.op("lt", ax, 1.0), f.op("ge", ax, 0.5))
    exact_needed = both(tracer, ones, f.op("ge", ay, eps / 2),
                            f.op("ge", f.add(f.mul(ax, ax), f.mul(ay, ay)), 0.5))
    _ordinary(tracer, both(tracer, f.op("isfinite", ax), f.op("gt", ax, 0.0), f.op("le", ax, big),
                                  either(tracer, f.op("ge", ax, tiny), f.op("ge", ay, tiny))))
    at_one = f.op("eq", ax, 1.0)
    above = both(tracer, f.op("gt", ax, 1.0), f.op("lt", ax, 2.0), f.op("lt", ay, 1.0))
    d2m1 = f.mul(f.sub(ax, 1.0), f.add(ax, 1.0))
    d2m1 = f.where(both(tracer, above, f.op("ge", ay, eps)), f.add(d2m1, f.mul(ay, ay)), d2m1)
    d2m1 = f.where(at_one, f.mul(ay, ay), d2m1)
    d2m1 = f.where(exact_needed, _x2y2m1(tracer, f, f.where(exact_needed, ax, 0.0), f.where(exact_needed, ay, 0.0)), d2m1)
    small_y = both(tracer, ones, f.op("lt", ay, eps / 2))
    near = either(tracer, at_one, above, small_y, exact_needed)
    safe = f.where(near, d2m1, 0.0)                                 # (log1p of the lanes it is not for: 0)
    far = f.where(near, 1.0, f.op("c_hypot", ax, ay))
    real = f.where(near, f.mul(f.op("log1p", safe), 0.5), f.op("log", far))
    return make(tracer, real, f.op("atan2", y, x))


def _x2y2m1(tracer, f: Parts, x, y):
    """x^2 + y^2 - 1 as glibc computes it for clog. float64: each square split exactly into a high
    and a low part (fma), the five terms sorted by magnitude and added with exact two-sums, re-sorting
    after each (__x2y2m1); float32 (__x2y2m1f): (x - 1)(x + 1) + y^2 in double, then rounded."""
    if f.part == F32:
        wide = Parts(tracer, F64)
        x, y = convert(tracer, x, F64), convert(tracer, y, F64)
        return convert(tracer, wide.add(wide.mul(wide.sub(x, 1.0), wide.add(x, 1.0)), wide.mul(y, y)), F32)
    xx, yy = f.mul(x, x), f.mul(y, y)
    terms = [f.op("fma", y, y, f.op("neg", yy)), yy, f.op("fma", x, x, f.op("neg", xx)), xx, -1.0]
    terms = _by_magnitude(f, [terms[i] for i in (2, 3, 0, 1, 4)])      # glibc's order: x lo, x hi, y lo, y hi, -1
    for i in range(4):
        a, b = terms[i + 1], terms[i]                                   # |a| >= |b|: a fast two-sum
        hi = f.add(a, b)
        terms[i + 1], terms[i] = hi, f.add(f.sub(a, hi), b)
        terms[i + 1:] = _by_magnitude(f, terms[i + 1:])
    total = terms[4]
    for t in reversed(terms[:4]):
        total = f.add(total, t)
    return total


def _by_magnitude(f: Parts, values: list) -> list:
    """The values sorted by absolute value, ascending (a stable bubble sort of selects)."""
    values = list(values)
    for end in range(len(values) - 1, 0, -1):
        for i in range(end):
            a, b = values[i], values[i + 1]
            swap = f.op("gt", f.op("fabs", a), f.op("fabs", b))
            values[i], values[i + 1] = f.where(swap, b, a), f.where(swap, a, b)
    return values


def _sqrt(tracer, np, z, **kwargs):
    """glibc's csqrt on parts that need no scaling (else the call runs Python)."""
    _no_kwargs(tracer, "sqrt", kwargs)
    f = Parts(tracer, part_type(tracer, z))
    x, y = parts(tracer, z, f.part)
    ax, ay = f.op("fabs", x), f.op("fabs", y)
    big = DOUBLE_MAX / 4 if f.part == F64 else 3.4028234663852886e38 / 4
    small = 2 * (DOUBLE_MIN if f.part == F64 else 1.1754943508222875e-38)
    _ordinary(tracer, both(tracer, f.op("isfinite", x), f.op("isfinite", y), f.op("le", ax, big),
                                  f.op("le", ay, big), either(tracer, f.op("ge", ax, small),
                                                                f.op("ge", ay, small))))
    d = f.op("c_hypot", x, y)
    positive = f.op("gt", x, 0.0)
    r_pos = f.op("sqrt", f.mul(0.5, f.add(d, f.where(positive, x, 0.0))))
    s_pos = f.mul(0.5, f.div(y, f.where(positive, r_pos, 1.0)))
    s_neg = f.op("sqrt", f.mul(0.5, f.sub(d, f.where(positive, 0.0, x))))
    r_neg = f.op("fabs", f.mul(0.5, f.div(y, f.where(positive, 1.0, s_neg))))
    r, s = f.where(positive, r_pos, r_neg), f.where(positive, s_pos, s_neg)
    # an imaginary part of zero: (sqrt(x), y) for x >= 0, (0, copysign(sqrt(-x), y)) for x < 0
    y_zero = f.op("eq", y, 0.0)
    root = f.op("sqrt", ax)
    negative = f.op("lt", x, 0.0)
    r = f.where(y_zero, f.where(negative, 0.0, root), r)
    s = f.where(y_zero, f.where(negative, root, 0.0), s)
    # a real part of zero: r = sqrt(|y| / 2) (|y| >= 4 * min), both parts r
    x_zero = both(tracer, f.op("eq", x, 0.0), f.op("not", y_zero))
    half = f.op("sqrt", f.mul(0.5, ay))
    r, s = f.where(x_zero, half, r), f.where(x_zero, half, s)
    return make(tracer, r, f.op("copysign", s, y))


def _where(tracer, np, cond, x, y):
    """np.where(cond, x, y) with a complex x or y: each part selected."""
    f = Parts(tracer, part_type(tracer, x, y))
    (xr, xi), (yr, yi) = parts(tracer, x, f.part), parts(tracer, y, f.part)
    c = arrays.operand(tracer, cond, "np.where")
    c = c if arrays.kind(c) == BOOL else emit_elementwise(tracer, "ne", [c, 0], arrays.kind(c))
    return make(tracer, f.where(c, xr, yr), f.where(c, xi, yi))


def _is_nan(tracer, np, z, **kwargs):
    return _predicate(tracer, z, "isnan", either, kwargs)


def _is_inf(tracer, np, z, **kwargs):
    return _predicate(tracer, z, "isinf", either, kwargs)


def _is_finite(tracer, np, z, **kwargs):
    return _predicate(tracer, z, "isfinite", both, kwargs)


def _predicate(tracer, z, op, combine, kwargs):
    _no_kwargs(tracer, op, kwargs)
    f = Parts(tracer, part_type(tracer, z))
    re, im = parts(tracer, z, f.part)
    return wrap(tracer, combine(tracer, f.op(op, re), f.op(op, im)))


def _ordinary(tracer, cond) -> None:
    """The call runs the Python function unless `cond` holds for every element."""
    if is_traced(cond) and isinstance(cond.type, ArrayType):
        cond = all_true(tracer, cond)
    if is_traced(cond):
        fallback_unless(tracer, cond)


def _no_kwargs(tracer, name, kwargs):
    for k in kwargs:
        raise tracer.error(f"np.{name}(..., {k}=...) of a complex array is not supported yet")


def _is_complex(z) -> bool:
    return isinstance(z, (ComplexArray, TracedComplex, complex))


# ------------------------------------------------------------------------------ reductions, products
def _sum(tracer, np, z, axis=None, dtype=None, keepdims=False):
    if dtype is not None and not is_complex_dtype(dtype):
        raise tracer.error("np.sum of a complex array with a real dtype= is not supported")
    return _joined(tracer, "sum", *(np("sum", [p], {"axis": axis, "keepdims": keepdims})
                                    for p in _as_complex_array(tracer, z).fields()))


def _mean(tracer, np, z, axis=None, keepdims=False):
    """The sum divided by the count as a complex number (NumPy's complex true_divide)."""
    b = tracer.builder
    z = _as_complex_array(tracer, z)
    total = _sum(tracer, np, z, axis=axis, keepdims=keepdims)
    axes = range(z.rank) if axis is None else [a % z.rank for a in ((axis,) if type(axis) is int else axis)]
    count = 1
    for a in axes:
        count = b.binary("mul", count, sizes_of(tracer, z.real.value)[a])
    return binary(tracer, "div", total, b.convert(b.value(count), F64)) if isinstance(total, ComplexArray) \
        else _scalar_quotient(tracer, total, b.convert(b.value(count), F64), z.part)


def _scalar_quotient(tracer, total: TracedComplex, count, part):
    from tracer.frontend.complex_arrays import quotient
    f = Parts(tracer, part)
    re, im = quotient(f, convert(tracer, total.real, part), convert(tracer, total.imag, part),
                      convert(tracer, count, part), 0.0)
    return scalar(tracer, re, im)


def _as_complex_array(tracer, z) -> ComplexArray:
    if isinstance(z, ComplexArray):
        return z
    raise tracer.error(f"this NumPy function of a {type(z).__name__} is not supported with complex numbers yet")


def _dot(tracer, np, a, b):
    return matmul(tracer, a, b)


def _vdot(tracer, np, a, b):
    return vdot(tracer, a, b)


# ------------------------------------------------------------------------------ making complex arrays
def _full(tracer, np, shape, re, im, dtype):
    import numpy
    part = numpy.float64 if PART_TYPE[complex_type_of(dtype)] == F64 else numpy.float32
    return ComplexArray(*(np("full", [shape, v], {"dtype": part}) for v in (re, im)))


def _zeros(tracer, np, shape, dtype=float):
    return _full(tracer, np, shape, 0.0, 0.0, dtype)


def _ones(tracer, np, shape, dtype=float):
    return _full(tracer, np, shape, 1.0, 0.0, dtype)


def _like(fill):
    def impl(tracer, np, z, dtype=None):
        t = complex_type_of(dtype) if dtype is not None else (z.dtype if isinstance(z, ComplexArray) else None)
        if t is None:
            raise tracer.error("np.zeros_like of a complex array with a real dtype= is not supported yet")
        shape = tuple(sizes_of(tracer, (z.real if isinstance(z, ComplexArray) else z).value))
        return _full(tracer, np, shape, fill, 0.0, ARRAY_DTYPE_NAMES[t])
    return impl


def _array(tracer, np, obj, dtype=None, copy=True):
    if isinstance(obj, ComplexArray) and (dtype is None or complex_type_of(dtype) == obj.dtype):
        return ComplexArray(*(wrap(tracer, _copy(tracer, p.value)) for p in obj.fields()))
    raise tracer.error("np.array of this complex value is not supported yet")


def as_complex(tracer, x: TracedArray, dtype) -> ComplexArray:
    """x.astype(complex): the real array's values and zero imaginary parts."""
    part = PART_TYPE[complex_type_of(dtype)]
    re = convert(tracer, x.value, part)
    return ComplexArray(wrap(tracer, _copy(tracer, re)), wrap(tracer, _zeros_like(tracer, re)))


def astype(tracer, z: ComplexArray, dtype, copy=True):
    t = complex_type_of(dtype) if dtype is not complex else complex_type_of(complex)
    if t is None:
        raise tracer.error("a complex array as a real dtype (NumPy's ComplexWarning: the imaginary part is "
                           "dropped) is not supported; use z.real")
    return ComplexArray(*(wrap(tracer, _copy(tracer, convert(tracer, p.value, PART_TYPE[t]))) for p in z.fields()))


def method(tracer, z: ComplexArray, name: str, args: list, kwargs: dict, np_call):
    """z.<name>(...) for a complex array."""
    if name == "astype":
        return astype(tracer, z, *args, **kwargs)
    if name == "item" and not args and not kwargs:
        return _joined(tracer, "item", *(arrays.number_of(tracer, p, "z.item()") for p in z.fields()))
    if name == "copy" and not args and not kwargs:
        return ComplexArray(*(wrap(tracer, _copy(tracer, p.value)) for p in z.fields()))
    if name in ("reshape", "transpose") and args and not (len(args) == 1 and type(args[0]) in (tuple, list)):
        args = [tuple(args)]
    if name == "flatten":
        name = "ravel"
    return np_call(name, [z, *args], kwargs)


COMPLEX = {"abs": _absolute, "absolute": _absolute, "negative": _negative, "conj": _conj, "conjugate": _conj,
           "square": _square, "exp": _exp, "log": _log, "sqrt": _sqrt, "isnan": _is_nan, "isinf": _is_inf, "isfinite": _is_finite,
           "sum": _sum, "mean": _mean, "dot": _dot, "vdot": _vdot, "zeros": _zeros, "empty": _zeros, "ones": _ones,
           "zeros_like": _like(0.0), "empty_like": _like(0.0), "ones_like": _like(1.0), "array": _array,
           "asarray": _array, "angle": _angle, "where": _where}


# ------------------------------------------------------------------------------ functions of any array
@numpy_function("real")
def real(tracer, z):
    if _is_complex(z):
        return z.real if isinstance(z, ComplexArray) else _f64(tracer, z.real)
    return arrays.operand(tracer, z, "np.real") if not isinstance(z, TracedArray) else z


@numpy_function("imag")
def imag(tracer, z):
    if _is_complex(z):
        return z.imag if isinstance(z, ComplexArray) else _f64(tracer, z.imag)
    x = arrays.operand(tracer, z, "np.imag")
    if is_traced(x) and isinstance(x.type, ArrayType):
        return wrap(tracer, _zeros_like(tracer, x))
    return 0.0 if arrays.kind(x) == F64 or not is_traced(x) else convert(tracer, 0.0, arrays.kind(x))


@numpy_function("conj", "conjugate")
def conj(tracer, z, **kwargs):
    return _conj(tracer, None, z, **kwargs)


@numpy_function("angle")
def angle(tracer, z, deg=False):
    return _angle(tracer, None, z, deg)


@numpy_function("vdot")
def vdot(tracer, a, b):
    """np.vdot: the dot product of the flattened arrays, the first conjugated."""
    flat = [_flat(tracer, x) for x in (_conj(tracer, None, a), b)]
    return matmul(tracer, *flat) if any(map(_is_complex, flat)) else arrays.matmul(tracer, *flat)


def _flat(tracer, x):
    if isinstance(x, ComplexArray):
        return ComplexArray(*(arrays.reshape(tracer, p, (-1,)) for p in x.fields()))
    return arrays.reshape(tracer, x if isinstance(x, TracedArray) else wrap(tracer, arrays.operand(tracer, x)), (-1,))


@numpy_function("iscomplexobj")
def iscomplexobj(tracer, x):
    return isinstance(x, (ComplexArray, TracedComplex, complex))


@numpy_function("isrealobj")
def isrealobj(tracer, x):
    return not isinstance(x, (ComplexArray, TracedComplex, complex))
