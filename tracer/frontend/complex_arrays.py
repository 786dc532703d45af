"""NumPy's complex arrays in traced code: a `ComplexArray` is its two parts, float arrays of one
shape (float64 for complex128, float32 for complex64), and its arithmetic is NumPy's complex
loops written out on the parts, step for step (numpy/_core/src/umath/loops.c.src):

    a + b, a - b, -a        componentwise
    a * b                   (ar*br - ai*bi, ar*bi + ai*br)
    a / b                   Smith's method as NumPy's complex divide writes it
    a ** n                  n an integer |n| < 100: NumPy's nc_pow (square-and-multiply)
    abs(a)                  hypot(ar, ai);  np.angle: arctan2(ai, ar)
    np.exp(a)               glibc's cexp (NumPy calls it): exp(ar) * (cos(ai), sin(ai))
    sum, mean               the parts' sums; mean divides by the count as a complex number

A real operand takes part as complex(x, 0.0) and a Python number is weak (NEP 50: complex64
stays complex64), as NumPy converts them before its complex loop runs. A complex argument is
seen through `complex_parts` (a view: writes go to the caller's array), and a complex result
leaves as `complex_from_parts` of its parts stacked. An op NumPy would warn about (an overflow,
a division by zero) fails the call as for float arrays, and the Python function runs and gives
NumPy's answer and warning. Functions that move elements without computing (reshape, slicing,
concatenate, roll...) run on each part. The sums follow the parts' pairwise order, which is
not NumPy's complex one: equal to rounding. Elements and whole-array sums are
np.complex128 and np.complex64 scalars (`NumpyComplex`: NumPy's arithmetic), returned as such.
"""
from __future__ import annotations

from tracer.frontend import numpy_shapes
from tracer.frontend.arrays import (
    assign,
    broadcast,
    broadcast_shape,
    convert,
    emit_elementwise,
    kind,
    make_view,
    sizes_of,
    transpose,
    wrap,
)
from tracer.frontend.arrays import attribute as real_attribute
from tracer.frontend.arrays import matmul as real_matmul
from tracer.frontend.builder import is_number, is_traced
from tracer.frontend.complexes import FloatOps, TracedComplex
from tracer.frontend.numpy_more import select
from tracer.frontend.objects import ArrayMethod, TracedArray
from tracer.ir import ARRAY_DTYPE_NAMES, C64, C128, COMPLEX, F32, F64, ArrayType

DOUBLE_MIN = 2.2250738585072014e-308


class ComplexArray:
    """A complex array of the trace: `real` and `imag` are TracedArrays of one float dtype and shape."""
    carried = True              # merged by its parts at data-dependent branches

    def __init__(self, real: TracedArray, imag: TracedArray):
        self.real, self.imag = real, imag

    def fields(self) -> tuple:
        return (self.real, self.imag)

    @property
    def part(self):
        return self.real.type.dtype

    @property
    def dtype(self):
        return C128 if self.part == F64 else C64

    @property
    def rank(self) -> int:
        return self.real.rank

    def __repr__(self):
        return f"<complex array {self.real.type}>"


class NumpyComplex(TracedComplex):
    """An np.complex128 scalar (an element or a sum of a complex array): its arithmetic is NumPy's
    (complex_arrays.binary), not Python's complex arithmetic."""
    part, numpy_type = F64, "complex128"


class NumpyComplex64(NumpyComplex):
    """An np.complex64 scalar: its parts are float32 values held as the float64 numbers they are
    (CPython and cmath see them so), and NumPy's arithmetic on it rounds to float32."""
    part, numpy_type = F32, "complex64"


def is_numpy_complex(obj) -> bool:
    """Whether `obj` is exactly an np.complex128 or np.complex64 scalar."""
    return type(obj).__name__ in ("complex128", "complex64") and type(obj).__module__ == "numpy"


def is_complex_dtype(dtype) -> bool:
    """Whether a dtype= argument names a complex dtype (complex, np.complex128, 'complex64'...)."""
    if dtype is complex:
        return True
    import numpy
    try:
        return numpy.dtype(dtype).kind == "c"
    except TypeError:
        return False


def involved(a, b=None) -> bool:
    """Whether an operator on these operands is complex array arithmetic."""
    if isinstance(a, (ComplexArray, NumpyComplex)) or isinstance(b, (ComplexArray, NumpyComplex)):
        return True
    scalar = lambda x: isinstance(x, (TracedComplex, complex))
    array = lambda x: isinstance(x, TracedArray)
    return (scalar(a) and array(b)) or (scalar(b) and array(a))


def in_arguments(args, kwargs) -> bool:
    """Whether a NumPy call has a complex array or number (or makes one: dtype=complex)."""
    def has(x):
        return isinstance(x, (ComplexArray, TracedComplex, complex)) or (type(x) in (list, tuple) and any(map(has, x)))
    def names_complex(x):       # a dtype passed by position: np.zeros(3, complex)
        return (isinstance(x, type) or type(x).__name__.endswith("DType")) and is_complex_dtype(x)
    return any(map(has, args)) or any(map(has, kwargs.values())) or any(map(names_complex, args)) or \
        ("dtype" in kwargs and is_complex_dtype(kwargs["dtype"]))


# ------------------------------------------------------------------------------ inputs, results
def of_param(tracer, array: TracedArray) -> ComplexArray:
    """A complex argument array, seen as its parts (views of its memory)."""
    b = tracer.builder
    parts = make_view(tracer, array, "complex_parts", ())
    return ComplexArray(*(make_view(tracer, parts, "index", (b.value(i),)) for i in (0, 1)))


def complex_result(tracer, z: ComplexArray):
    """The IR value of a complex array the function returns (its parts stacked, viewed as complex)."""
    stacked = numpy_shapes.stack(tracer, [z.real, z.imag], axis=-1)
    return tracer.builder.emit("complex_from_parts", (stacked.value,))


def _dtype_of(x):
    """x's dtype for NumPy's promotion: a NumPy dtype, or a Python number standing for a weak one."""
    import numpy
    if isinstance(x, ComplexArray):
        return numpy.dtype(ARRAY_DTYPE_NAMES[x.dtype])
    if isinstance(x, TracedArray):
        return numpy.dtype(ARRAY_DTYPE_NAMES[x.type.dtype])
    if isinstance(x, NumpyComplex):
        return numpy.dtype(numpy.complex64 if x.part == F32 else numpy.complex128)
    if isinstance(x, (TracedComplex, complex)):
        return 1j
    if is_traced(x):
        return 1.0 if x.type in (F64, F32) else 1
    return x


def part_type(tracer, *operands):
    """The part dtype (f64 or f32) of NumPy's complex result type for these operands."""
    import numpy
    try:
        result = numpy.result_type(*map(_dtype_of, operands))
    except TypeError as e:
        raise tracer.error(f"complex arithmetic with these operands is not supported ({e})") from None
    if result.kind != "c":
        result = numpy.result_type(result, numpy.complex64)
    if result == numpy.complex64:
        return F32
    if result == numpy.complex128:
        return F64
    raise tracer.error(f"{result} arrays are not supported (complex64 and complex128 are)")


def parts(tracer, x, part):
    """(real, imaginary) of an operand, as values of the part dtype: a real operand is (x, 0.0)."""
    if isinstance(x, ComplexArray):
        return convert(tracer, x.real.value, part), convert(tracer, x.imag.value, part)
    if isinstance(x, (TracedComplex, complex)):
        return convert(tracer, x.real, part), convert(tracer, x.imag, part)
    if isinstance(x, TracedArray):
        x = x.value
    if not (is_number(x) or is_traced(x)):
        raise tracer.error(f"complex arithmetic with a {type(x).__name__} is not supported")
    return convert(tracer, x, part), convert(tracer, 0.0, part)


class Parts(FloatOps):
    """Elementwise arithmetic on part values (arrays or scalars) of one float dtype, as NumPy's
    ufuncs compute it; comparisons and predicates give bools."""

    def __init__(self, tracer, part):
        self.tracer, self.part = tracer, part

    def op(self, name, *xs):
        if name == "not":                      # of a bool (array)
            return self.tracer.builder.emit("not", xs)
        return emit_elementwise(self.tracer, name, list(xs), self.part)

    def where(self, cond, x, y):
        return select(self.tracer, cond, x, y, self.part)


def both(tracer, *conds):
    """The elementwise `and` of bool values (arrays broadcast)."""
    b = tracer.builder
    out = conds[0]
    for c in conds[1:]:
        x, y = broadcast(tracer, [b.value(out), b.value(c)])
        out = b.emit("select", (x, y, b.const(False)))
    return out


def either(tracer, *conds):
    """The elementwise `or` of bool values (arrays broadcast)."""
    b = tracer.builder
    out = conds[0]
    for c in conds[1:]:
        x, y = broadcast(tracer, [b.value(out), b.value(c)])
        out = b.emit("select", (x, b.const(True), y))
    return out


def make(tracer, re, im):
    """A ComplexArray (or a NumPy complex scalar, where both parts are scalars) of two part values:
    a part of another shape is spread to the common one (a new array: the parts are written)."""
    b = tracer.builder
    arrays_ = [v for v in (re, im) if is_traced(v) and isinstance(v.type, ArrayType)]
    if not arrays_:
        return scalar(tracer, re, im)
    shape, sizes = broadcast_shape(tracer, [(v, v.type.shape) for v in arrays_])     # (the ops broadcast them)
    dims = [b.value(n) for n in sizes]

    def spread(v):
        v = b.value(v)
        if not isinstance(v.type, ArrayType):
            return b.emit("full", (v, *dims), shape=tuple(shape))
        if v.type.shape == tuple(shape):
            return v
        view = b.emit("broadcast_in_dim", (v, *dims), shape=tuple(shape),
                      dims=tuple(range(len(shape) - v.type.rank, len(shape))))
        return b.emit("copy", (view,))
    return ComplexArray(wrap(tracer, spread(re)), wrap(tracer, spread(im)))


# ------------------------------------------------------------------------------ arithmetic
def product(f: Parts, ar, ai, br, bi):
    return f.sub(f.mul(ar, br), f.mul(ai, bi)), f.add(f.mul(ar, bi), f.mul(ai, br))


def quotient(f: Parts, ar, ai, br, bi):
    """NumPy's complex divide (Smith's method). Each branch runs on inputs the other branch's
    lanes replace by harmless ones, so that no lane fails for a division NumPy does not make."""
    abs_r, abs_i = f.op("fabs", br), f.op("fabs", bi)
    first = f.op("ge", abs_r, abs_i)
    zero_r = f.op("eq", abs_r, 0.0)
    zero_both = both(f.tracer, first, zero_r)
    # first branch: |br| >= |bi| (and b not zero)
    use1 = both(f.tracer, first, f.op("not", zero_r))
    br1, bi1 = f.where(use1, br, 1.0), f.where(use1, bi, 0.0)
    ar1, ai1 = f.where(use1, ar, 0.0), f.where(use1, ai, 0.0)
    rat = f.div(bi1, br1)
    scl = f.div(1.0, f.add(br1, f.mul(bi1, rat)))
    r1, i1 = f.mul(f.add(ar1, f.mul(ai1, rat)), scl), f.mul(f.sub(ai1, f.mul(ar1, rat)), scl)
    # b zero: the parts divided by |br| (inf or nan, as NumPy gives and warns)
    d0 = f.where(zero_both, abs_r, 1.0)
    ar0, ai0 = f.where(zero_both, ar, 0.0), f.where(zero_both, ai, 0.0)
    r0, i0 = f.div(ar0, d0), f.div(ai0, d0)
    # second branch: |br| < |bi|
    br2, bi2 = f.where(first, 0.0, br), f.where(first, 1.0, bi)
    ar2, ai2 = f.where(first, 0.0, ar), f.where(first, 0.0, ai)
    rat = f.div(br2, bi2)
    scl = f.div(1.0, f.add(bi2, f.mul(br2, rat)))
    r2, i2 = f.mul(f.add(f.mul(ar2, rat), ai2), scl), f.mul(f.sub(f.mul(ai2, rat), ar2), scl)
    return (f.where(first, f.where(zero_both, r0, r1), r2), f.where(first, f.where(zero_both, i0, i1), i2))


def power(tracer, f: Parts, z, n):
    """z ** n for an integer n known when the function is compiled, |n| < 100 (NumPy's nc_pow)."""
    ar, ai = z
    if type(n) is complex and n.imag == 0.0:
        n = n.real
    if is_traced(n) or isinstance(n, (TracedComplex, complex, ComplexArray, TracedArray)) or \
            not is_number(n) or n != int(n) or abs(n) >= 100:
        raise tracer.error("a complex array to a power other than an integer constant of size below 100 is not "
                           "supported yet")
    k = int(n)
    if k == 0:
        return _ones(tracer, f, ar)
    if k == 1:
        return ar, ai
    if k == 2:
        return product(f, ar, ai, ar, ai)
    if k == 3:
        return product(f, *product(f, ar, ai, ar, ai), ar, ai)
    m, mask, r, p = abs(k), 1, (1.0, 0.0), (ar, ai)
    while True:
        if m & mask:
            r = product(f, *r, *p)
        mask <<= 1
        if m < mask:
            break
        p = product(f, *p, *p)
    return quotient(f, 1.0, 0.0, *r) if k < 0 else r


def _ones(tracer, f: Parts, like):
    """1+0j in each element of `like`'s shape (x ** 0: NumPy gives it for any x)."""
    b = tracer.builder
    if not (is_traced(like) and isinstance(like.type, ArrayType)):
        return 1.0, 0.0
    sizes = [b.value(s) for s in sizes_of(tracer, like)]
    return tuple(convert(tracer, b.emit("full", (b.value(v), *sizes), shape=like.type.shape), f.part)
                 for v in (1.0, 0.0))


def binary(tracer, op: str, a, b):
    """a <op> b with a complex array, or a complex number and an array."""
    if op == "matmul":
        return matmul(tracer, a, b)
    part = part_type(tracer, a, b)
    f = Parts(tracer, part)
    x = parts(tracer, a, part)
    if op == "pow":
        return make(tracer, *power(tracer, f, x, b.real if isinstance(b, TracedComplex) and not is_traced(b.real)
                                          and b.imag == 0.0 else b))
    y = parts(tracer, b, part)
    if op == "add":
        return make(tracer, f.add(x[0], y[0]), f.add(x[1], y[1]))
    if op == "sub":
        return make(tracer, f.sub(x[0], y[0]), f.sub(x[1], y[1]))
    if op == "mul":
        return make(tracer, *product(f, *x, *y))
    if op == "div":
        return make(tracer, *quotient(f, *x, *y))
    if op in ("eq", "ne"):
        equal = both(f.tracer, f.op("eq", x[0], y[0]), f.op("eq", x[1], y[1]))
        return wrap(tracer, equal if op == "eq" else f.op("not", equal))
    if op in ("floordiv", "mod"):
        raise TypeError(f"ufunc '{'floor_divide' if op == 'floordiv' else 'remainder'}' not supported for the "
                        f"input types, and the inputs could not be safely coerced to any supported types "
                        f"according to the casting rule ''safe''")
    raise tracer.error(f"the operator {op} on complex arrays is not supported yet")


def negative(tracer, z: ComplexArray):
    f = Parts(tracer, z.part)
    return make(tracer, f.op("neg", z.real.value), f.op("neg", z.imag.value))


def matmul(tracer, a, b):
    """a @ b of complex (or real and complex) arrays: (ar@br - ai@bi, ar@bi + ai@br), the parts'
    products (NumPy's BLAS sums in another order: equal to rounding)."""
    part = part_type(tracer, a, b)
    f = Parts(tracer, part)
    x, y = parts(tracer, _array(tracer, a), part), parts(tracer, _array(tracer, b), part)
    mm = lambda p, q: real_matmul(tracer, wrap(tracer, p), wrap(tracer, q))
    if not (is_traced(x[1]) and isinstance(x[1].type, ArrayType)):       # a real matrix on the left
        return make(tracer, _value(mm(x[0], y[0])), _value(mm(x[0], y[1])))
    if not (is_traced(y[1]) and isinstance(y[1].type, ArrayType)):
        return make(tracer, _value(mm(x[0], y[0])), _value(mm(x[1], y[0])))
    re = f.sub(_value(mm(x[0], y[0])), _value(mm(x[1], y[1])))
    im = f.add(_value(mm(x[0], y[1])), _value(mm(x[1], y[0])))
    return make(tracer, re, im)


def _array(tracer, x):
    if isinstance(x, (ComplexArray, TracedArray)):
        return x
    raise tracer.error(f"@ of a complex array and a {type(x).__name__} is not supported yet")


def _value(x):
    return x.value if isinstance(x, TracedArray) else x


# ------------------------------------------------------------------------------ elements, attributes
def subscript(tracer, z: ComplexArray, index, basic_subscript):
    """z[index]: an element (a complex number) or a ComplexArray of the parts' views."""
    re, im = basic_subscript(tracer, z.real, index), basic_subscript(tracer, z.imag, index)
    if isinstance(re, TracedArray):
        return ComplexArray(re, im)
    return scalar(tracer, re, im)


def numpy_complex(tracer, re, im) -> NumpyComplex:
    """The NumPy complex scalar of two part values (an argument's)."""
    return scalar(tracer, re, im)


def scalar(tracer, re, im) -> NumpyComplex:
    """The np.complex128 scalar of two f64 parts, or the np.complex64 one of two f32 parts."""
    made = NumpyComplex64 if kind(re) == F32 or kind(im) == F32 else NumpyComplex
    return made(convert(tracer, re, F64), convert(tracer, im, F64))


def store_item(tracer, z: ComplexArray, index, value, store) -> None:
    """z[index] = value: each part of the value into that part of z."""
    if isinstance(value, TracedArray) and value.type.dtype in COMPLEX:
        raise tracer.error("storing this array into a complex array is not supported yet")
    re, im = parts(tracer, value, z.part)
    store(tracer, z.real, index, re)
    store(tracer, z.imag, index, im)


def inplace(tracer, op: str, z, other):
    """`z <op>= other` in place: z's parts get the new parts (both computed before either is
    written). A real array cannot hold the complex result: NumPy's casting error."""
    new = binary(tracer, op, z, other)
    if not isinstance(z, ComplexArray):
        import numpy
        ufunc = {"add": "add", "sub": "subtract", "mul": "multiply", "div": "divide", "pow": "power"}.get(op, op)
        raise TypeError(f"Cannot cast ufunc '{ufunc}' output from dtype('{ARRAY_DTYPE_NAMES[_complex_dtype(new)]}') "
                        f"to dtype('{numpy.dtype(ARRAY_DTYPE_NAMES[z.type.dtype])}') with casting rule 'same_kind'")
    re, im = parts(tracer, new, z.part)
    assign(tracer, z.real, re)
    assign(tracer, z.imag, im)
    return z


def _complex_dtype(x):
    return x.dtype if isinstance(x, ComplexArray) else C128


METHODS = {"sum", "mean", "conj", "conjugate", "copy", "reshape", "ravel", "flatten", "transpose", "astype",
           "dot", "item", "squeeze", "swapaxes", "cumsum"}


def attribute(tracer, z: ComplexArray, name: str):
    import numpy
    if name == "real":
        return z.real
    if name == "imag":
        return z.imag
    if name in ("shape", "ndim", "size"):
        return real_attribute(tracer, z.real, name)
    if name == "dtype":
        return numpy.dtype(ARRAY_DTYPE_NAMES[z.dtype])
    if name == "T":
        return ComplexArray(*(transpose(tracer, p) for p in (z.real, z.imag)))
    if name in METHODS:
        return ArrayMethod(z, name)
    raise tracer.error(f"the attribute .{name} of a complex array is not supported yet")


def to_part_dtype(tracer, z: ComplexArray, part) -> ComplexArray:
    if part == z.part:
        return z
    return ComplexArray(*(wrap(tracer, convert(tracer, p.value, part)) for p in (z.real, z.imag)))


def complex_type_of(dtype):
    """The IR complex dtype a dtype= argument names, or None for a real one."""
    import numpy
    if dtype is complex:
        return C128
    d = numpy.dtype(dtype)
    return {numpy.dtype("complex128"): C128, numpy.dtype("complex64"): C64}.get(d) if d.kind == "c" else None

