"""Python's `complex` in traced code: a `TracedComplex` is a pair of floats (traced f64 values or
constants), and its arithmetic is CPython's own (Objects/complexobject.c), step for step:

    a + b, a - b, -a    componentwise
    a * b               (ar*br - ai*bi, ar*bi + ai*br)
    a / b               Smith's method as _Py_c_quot writes it (ZeroDivisionError for 0j)
    a ** n              n an integral number with |n| <= 100: c_powu's square-and-multiply
                        (and 1 / that for n < 0); an infinite part is OverflowError("complex
                        exponentiation"), a zero to a negative power ZeroDivisionError
    abs(a)              the C library's hypot (inf if either part is inf); OverflowError if too large
    ==, !=, bool(), .real, .imag, .conjugate(), complex(re, im)

An int or float on the other side becomes complex(x, 0.0) first, as CPython's TO_COMPLEX does
(so 2.0 * z computes 0.0 * z.imag too). Complex arguments are read as their two parts (the
call goes through the loaded-inputs path), and a complex result is made again from its parts.
Other exponents, cmath, and comparisons other than == and != (TypeError in Python) are refused
or raise as CPython does.
"""
from __future__ import annotations

import math

from tracer.frontend.builder import is_number, is_traced
from tracer.ir import F64
from tracer.ir.scalar_ops import ieee_div


class TracedComplex:
    """A complex number of the trace: `real` and `imag` are floats or traced f64 values."""
    carried = True                  # merged by its parts at data-dependent branches and loops
    numpy_type = None               # a NumPy scalar's dtype name (complex_arrays.NumpyComplex)

    def __init__(self, real, imag):
        self.real, self.imag = real, imag

    def fields(self) -> tuple:
        return (self.real, self.imag)

    def __repr__(self):
        return f"TracedComplex({self.real!r}, {self.imag!r})"


def is_complex(x) -> bool:
    return isinstance(x, (TracedComplex, complex))


def involved(a, b=None) -> bool:
    """Whether an operator on these operands is complex arithmetic traced code does."""
    return isinstance(a, TracedComplex) or isinstance(b, TracedComplex) or (
        (type(a) is complex and is_traced(b)) or (type(b) is complex and is_traced(a)))


def as_complex(tracer, x) -> TracedComplex:
    """x as CPython's TO_COMPLEX makes it: an int or float is (x, 0.0)."""
    if isinstance(x, TracedComplex):
        return x
    if type(x) is complex:
        return TracedComplex(x.real, x.imag)
    if is_number(x) or is_traced(x):
        return TracedComplex(_float(tracer, x), 0.0)
    raise TypeError(f"unsupported operand type(s) for complex arithmetic: '{type(x).__name__}'")


def _float(tracer, x):
    if is_traced(x):
        return tracer.builder.convert(x, F64) if x.type != F64 else x
    return float(x)


class FloatOps:
    """IEEE float arithmetic on traced values and constants alike (C's, as CPython's complex
    code computes: a division by zero gives inf or nan). `op` is the one way a subclass computes
    (complex_arrays.Parts: NumPy's elementwise ops on part arrays)."""

    def __init__(self, tracer):
        self.b = tracer.builder

    def op(self, name, x, y):
        if not is_traced(x) and not is_traced(y):
            return {"add": lambda: x + y, "sub": lambda: x - y, "mul": lambda: x * y,
                    "div": lambda: ieee_div(x, y)}[name]()
        return self.b.emit(name if name != "div" else "fdiv", (self.b.value(x), self.b.value(y)))

    def add(self, x, y):
        return self.op("add", x, y)

    def sub(self, x, y):
        return self.op("sub", x, y)

    def mul(self, x, y):
        return self.op("mul", x, y)

    def div(self, x, y):
        return self.op("div", x, y)


def product(f: FloatOps, a: TracedComplex, b: TracedComplex) -> TracedComplex:
    return TracedComplex(f.sub(f.mul(a.real, b.real), f.mul(a.imag, b.imag)),
                         f.add(f.mul(a.real, b.imag), f.mul(a.imag, b.real)))


def quotient(tracer, a: TracedComplex, b: TracedComplex, zero: BaseException) -> TracedComplex:
    """_Py_c_quot; `zero` is raised where it sets EDOM (b is 0j)."""
    f, bld = FloatOps(tracer), tracer.builder
    abs_r, abs_i = _abs(tracer, b.real), _abs(tracer, b.imag)
    first = bld.compare("ge", abs_r, abs_i)
    second = bld.compare("ge", abs_i, abs_r)
    is_zero = _and(bld, first, bld.compare("eq", abs_r, 0.0))
    if is_zero is True:
        raise zero
    if is_traced(is_zero):
        bld.raise_if(is_zero, zero)
    ratio = f.div(b.imag, b.real)
    denom = f.add(b.real, f.mul(b.imag, ratio))
    r1, i1 = f.div(f.add(a.real, f.mul(a.imag, ratio)), denom), f.div(f.sub(a.imag, f.mul(a.real, ratio)), denom)
    ratio = f.div(b.real, b.imag)
    denom = f.add(f.mul(b.real, ratio), b.imag)
    r2, i2 = f.div(f.add(f.mul(a.real, ratio), a.imag), denom), f.div(f.sub(f.mul(a.imag, ratio), a.real), denom)
    pick = lambda c, x, y: _select(tracer, c, x, y)
    return TracedComplex(pick(first, r1, pick(second, r2, math.nan)), pick(first, i1, pick(second, i2, math.nan)))


def _and(b, x, y):
    if not is_traced(x) and not is_traced(y):
        return bool(x and y)
    return b.emit("select", (b.value(x), b.value(y), b.const(False)))


def _or(b, x, y):
    if not is_traced(x) and not is_traced(y):
        return bool(x or y)
    return b.emit("select", (b.value(x), b.const(True), b.value(y)))


def _abs(tracer, x):
    return abs(x) if not is_traced(x) else tracer.builder.emit("fabs", (x,))


def _select(tracer, cond, x, y):
    if not is_traced(cond):
        return x if cond else y
    b = tracer.builder
    return b.emit("select", (cond, b.value(x), b.value(y)))


def power(tracer, a: TracedComplex, n) -> TracedComplex:
    """complex_pow for an integral exponent |n| <= 100 known when the function is compiled."""
    if isinstance(n, TracedComplex) or is_traced(n) or type(n) is complex and n.imag != 0.0:
        raise tracer.error("a complex number to a power the trace does not know (or not an integer) is "
                           "not supported yet")
    e = n.real if type(n) is complex else n
    if e != math.floor(e) or abs(e) > 100:
        raise tracer.error("a complex number to a power that is not an integer of size at most 100 is not "
                           "supported yet")
    f, k = FloatOps(tracer), int(e)
    r, p, mask, m = TracedComplex(1.0, 0.0), a, 1, abs(k)
    while mask > 0 and m >= mask:            # c_powu
        if m & mask:
            r = product(f, r, p)
        mask <<= 1
        p = product(f, p, p)
    if k < 0:
        r = quotient(tracer, TracedComplex(1.0, 0.0), r, ZeroDivisionError("0.0 to a negative or complex power"))
    overflow = OverflowError("complex exponentiation")
    infinite = [tracer.builder.emit("isinf", (x,)) if is_traced(x) else math.isinf(x) for x in (r.real, r.imag)]
    if any(x is True for x in infinite):
        raise overflow
    for x in infinite:
        if is_traced(x):
            tracer.builder.raise_if(x, overflow)
    return r


def binary(tracer, op: str, a, b):
    """a <op> b with a complex operand (op: add sub mul div pow)."""
    if op == "pow":
        return power(tracer, as_complex(tracer, a), b.real if isinstance(b, TracedComplex) and b.imag == 0.0
                     and not is_traced(b.real) else b)
    if op in ("floordiv", "mod"):
        raise TypeError(f"unsupported operand type(s) for {'//' if op == 'floordiv' else '%'}: 'complex' and "
                        f"'{type(b).__name__ if not isinstance(b, TracedComplex) else 'complex'}'")
    x, y, f = as_complex(tracer, a), as_complex(tracer, b), FloatOps(tracer)
    if op == "add":
        return TracedComplex(f.add(x.real, y.real), f.add(x.imag, y.imag))
    if op == "sub":
        return TracedComplex(f.sub(x.real, y.real), f.sub(x.imag, y.imag))
    if op == "mul":
        return product(f, x, y)
    if op == "div":
        return quotient(tracer, x, y, ZeroDivisionError("complex division by zero"))
    raise tracer.error(f"the operator {op} on complex numbers is not supported yet")


def compare(tracer, op: str, a, b):
    """== and != (other comparisons of complex numbers are CPython's TypeError)."""
    if op not in ("eq", "ne"):
        symbol = {"lt": "<", "le": "<=", "gt": ">", "ge": ">="}[op]
        raise TypeError(f"'{symbol}' not supported between instances of '{_name(a)}' and '{_name(b)}'")
    bld = tracer.builder
    if not isinstance(b, (TracedComplex, complex)):
        a, b = b, a
    x, y = (a if isinstance(a, TracedComplex) else None), as_complex(tracer, b)
    if x is None:           # a real number against a complex one: its value, and a zero imaginary part
        equal = _and(bld, bld.compare("eq", a, y.real), bld.compare("eq", y.imag, 0.0))
    else:
        equal = _and(bld, bld.compare("eq", x.real, y.real), bld.compare("eq", x.imag, y.imag))
    return equal if op == "eq" else bld.logical_not(equal)


def _name(x) -> str:
    return "complex" if is_complex(x) else type(x).__name__ if not is_traced(x) else {F64: "float"}.get(x.type, "int")


def negative(tracer, a: TracedComplex) -> TracedComplex:
    b = tracer.builder
    return TracedComplex(*(b.negate(x) for x in (a.real, a.imag)))


def absolute(tracer, a: TracedComplex):
    """abs(a): _Py_c_abs, the C library's hypot (inf if a part is inf, even with a NaN), and
    OverflowError where finite parts give inf."""
    b = tracer.builder
    if not is_traced(a.real) and not is_traced(a.imag):
        return abs(complex(a.real, a.imag))
    r = b.emit("c_hypot", (b.value(a.real), b.value(a.imag)))
    finite = _and(b, b.emit("isfinite", (b.value(a.real),)), b.emit("isfinite", (b.value(a.imag),)))
    b.raise_if(_and(b, finite, b.emit("isinf", (r,))), OverflowError("absolute value too large"))
    return r


def truth(tracer, a: TracedComplex):
    b = tracer.builder
    return _or(b, b.compare("ne", a.real, 0.0), b.compare("ne", a.imag, 0.0))


def attribute(tracer, a: TracedComplex, name: str):
    if name in ("real", "imag"):
        return getattr(a, name)
    if name == "conjugate":
        return ConjugateMethod(a)
    raise AttributeError(f"'complex' object has no attribute '{name}'")


class ConjugateMethod:
    """z.conjugate, called with no arguments."""

    def __init__(self, z: TracedComplex):
        self.z = z

    def call(self, tracer):
        return TracedComplex(self.z.real, tracer.builder.negate(self.z.imag))


def make(tracer, real=0.0, imag=0.0):
    """complex(real, imag) of numbers (traced or not; a complex part is CPython's rule too)."""
    if isinstance(real, TracedComplex) or isinstance(imag, TracedComplex) or type(real) is complex \
            or type(imag) is complex:
        re, im = as_complex(tracer, real), as_complex(tracer, imag)
        f = FloatOps(tracer)
        return TracedComplex(f.sub(re.real, im.imag), f.add(re.imag, im.real))
    return TracedComplex(_float(tracer, real), _float(tracer, imag))
