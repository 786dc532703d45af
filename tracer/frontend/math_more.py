"""More of `math` inside a trace, and the int/float methods and `pow(a, e, m)`: the number theory
of ints (gcd, lcm, factorial, comb, perm, isqrt), exact and checked sums and products (fsum,
prod), comparisons and decompositions of floats (isclose, ulp, modf, frexp, ldexp) and dist.

Like tracer.frontend.library (which merges FUNCTIONS into its table): trace-time constants call
the real function; traced values emit IR. Python's errors come first and as Python raises them:
a TypeError of an argument's type at trace time (types are fixed per specialization), and each
ValueError with its message where the value is traced (`check`: a `raise` if the condition holds
at run time). An int result past 64 bits falls back to Python, as i64 arithmetic does.
"""
from __future__ import annotations

import math
import operator

from tracer.frontend import mixed_numbers
from tracer.frontend.builder import is_number, is_traced
from tracer.frontend.dtypes import CAST_NARROW, widen
from tracer.frontend.mixed_numbers import MixedNumber
from tracer.frontend.objects import BoundMethod, ExternalList, ExternalObject
from tracer.frontend.opcodes.containers import materialize, proxy, type_name
from tracer.ir import BOOL, F64, I64

FUNCTIONS: dict = {}


def implements(*functions):
    def register(impl):
        for f in functions:
            FUNCTIONS[f] = impl
        return impl
    return register


# ------------------------------------------------------------------------- arguments
def all_constant(args) -> bool:
    return not any(is_traced(a) or isinstance(a, (ExternalList, ExternalObject, BoundMethod, MixedNumber))
                   for a in args)


def number(tracer, x, what: str):
    """A number argument; a NumPy scalar of a narrow dtype (np.uint8...) as the int or float it
    holds (math functions, int() and float() take them so); a number whose type is known only
    at run time as int(), float() or bool() makes it (tracer.frontend.mixed_numbers)."""
    if isinstance(x, MixedNumber):
        return mixed_numbers.converted(tracer, x, what)
    if is_traced(x) and x.type in CAST_NARROW:
        return widen(tracer, x)
    if is_traced(x) or is_number(x):
        return x
    raise tracer.error(f"{what} of a {type_name(x)} is not supported")


def as_float(tracer, x, what):
    """CPython's float conversion for math functions' arguments."""
    x = number(tracer, x, what)
    return tracer.builder.convert(x, F64) if is_traced(x) else float(x)


def python_type_errors(real, *args) -> None:
    """Raise the TypeError `real` raises for arguments of these types (each traced one stands
    for a zero of its type): 'float' object cannot be interpreted as an integer, and so on."""
    try:
        real(*(proxy(a) for a in args))
    except TypeError:
        raise
    except Exception:   # only the type check is wanted here; values are checked later
        return


def as_int(tracer, x, what: str):
    """An int argument (a bool is one) as an i64 value or an int; another type raises CPython's
    TypeError ('float' object cannot be interpreted as an integer)."""
    python_type_errors(operator.index, x)
    x = number(tracer, x, what)
    return tracer.builder.convert(x, I64) if is_traced(x) else int(x)


def check(tracer, cond, exc: BaseException) -> None:
    """raise exc if cond: now for a Python bool, at run time for a traced one."""
    if is_traced(cond):
        tracer.builder.raise_if(cond, exc)
    elif cond:
        raise exc


def _emit(tracer, op: str, *args):
    b = tracer.builder
    return b.emit(op, tuple(b.value(a) for a in args))


def _select(tracer, cond, a, b):
    if not is_traced(cond):
        return a if cond else b
    return _emit(tracer, "select", cond, a, b)


def _both(tracer, a, b):
    return _select(tracer, a, b, False)


def _either(tracer, a, b):
    return _select(tracer, a, True, b)


# ------------------------------------------------------------------------- int methods, pow(a, e, m)
@implements(int.bit_length)
def _bit_length(tracer, x):
    if all_constant([x]):
        return int.bit_length(x)
    python_type_errors(int.bit_length, x)
    return _emit(tracer, "bit_length", tracer.builder.convert(x, I64))


@implements(int.bit_count)
def _bit_count(tracer, x):
    if all_constant([x]):
        return int.bit_count(x)
    python_type_errors(int.bit_count, x)
    return _emit(tracer, "bit_count", tracer.builder.convert(x, I64))


@implements(float.is_integer)
def _is_integer(tracer, x):
    if all_constant([x]):
        return float.is_integer(x)
    python_type_errors(float.is_integer, x)
    return _both(tracer, _emit(tracer, "isfinite", x), _emit(tracer, "eq", _emit(tracer, "floor", x), x))


NUMBER_METHODS = {(int, "bit_length"): int.bit_length, (bool, "bit_length"): int.bit_length,
                  (int, "bit_count"): int.bit_count, (bool, "bit_count"): int.bit_count,
                  (float, "is_integer"): float.is_integer}


def number_method(x, name: str):
    """`x.name` for a traced number, as a bound method traced code can call (None: not one of
    NUMBER_METHODS)."""
    python_type = {F64: float, I64: int, BOOL: bool}.get(x.type)
    method = NUMBER_METHODS.get((python_type, name))
    return None if method is None else BoundMethod(method, x)


def pow_mod(tracer, base, exp, mod):
    """pow(base, exp, mod) of ints: CPython's errors (in its order), then the `powmod` op."""
    if all_constant([base, exp, mod]):
        return pow(base, exp, mod)
    if any(tracer.builder.kind(number(tracer, x, "pow()")) == F64 for x in (base, exp, mod)):
        raise TypeError("pow() 3rd argument not allowed unless all arguments are integers")
    b = tracer.builder
    base, exp, mod = (b.convert(x, I64) if is_traced(x) else int(x) for x in (base, exp, mod))
    check(tracer, b.compare("eq", mod, 0), ValueError("pow() 3rd argument cannot be 0"))
    missing = _both(tracer, b.compare("lt", exp, 0), b.compare("ne", _gcd2(tracer, base, mod), 1))
    check(tracer, missing, ValueError("base is not invertible for the given modulus"))
    return _emit(tracer, "powmod", base, exp, mod)


# ------------------------------------------------------------------------- number theory
def _gcd2(tracer, a, b):
    if all_constant([a, b]):
        return math.gcd(a, b)
    return _emit(tracer, "gcd", a, b)


def _lcm2(tracer, a, b):
    """CPython's long_lcm: 0 if either is 0, else |a // gcd(a, b) * b|."""
    if all_constant([a, b]):
        return math.lcm(a, b)
    bld = tracer.builder
    g = _gcd2(tracer, a, b)
    divisor = _select(tracer, bld.compare("eq", g, 0), 1, g)
    result = bld.absolute(bld.binary("mul", bld.binary("floordiv", a, divisor), b))
    return _select(tracer, _either(tracer, bld.compare("eq", a, 0), bld.compare("eq", b, 0)), 0, result)


@implements(math.gcd)
def _gcd(tracer, *args):
    if all_constant(args):
        return math.gcd(*args)
    args = [as_int(tracer, a, "math.gcd()") for a in args]
    result = 0
    for a in args:
        result = _gcd2(tracer, result, a)
    return result


@implements(math.lcm)
def _lcm(tracer, *args):
    if all_constant(args):
        return math.lcm(*args)
    args = [as_int(tracer, a, "math.lcm()") for a in args]
    if len(args) == 1:
        return tracer.builder.absolute(args[0])
    result = args[0]
    for a in args[1:]:
        result = _lcm2(tracer, result, a)
    return result


@implements(math.factorial)
def _factorial(tracer, n):
    if all_constant([n]):
        return math.factorial(n)
    n = as_int(tracer, n, "math.factorial()")
    check(tracer, tracer.builder.compare("lt", n, 0), ValueError("factorial() not defined for negative values"))
    return _emit(tracer, "factorial", n)


def _choose(op: str, real):
    def impl(tracer, n, k=None):
        if all_constant([n, k]):
            return real(n, k) if k is not None or op == "comb" else real(n)
        if k is None and op == "perm":
            return _factorial(tracer, n)
        python_type_errors(real, n, k)
        n, k = (as_int(tracer, x, f"math.{op}()") for x in (n, k))
        b = tracer.builder
        check(tracer, b.compare("lt", n, 0), ValueError("n must be a non-negative integer"))
        check(tracer, b.compare("lt", k, 0), ValueError("k must be a non-negative integer"))
        return _emit(tracer, op, n, k)
    return impl


FUNCTIONS[math.comb] = _choose("comb", math.comb)
FUNCTIONS[math.perm] = _choose("perm", math.perm)


@implements(math.isqrt)
def _isqrt(tracer, n):
    if all_constant([n]):
        return math.isqrt(n)
    n = as_int(tracer, n, "math.isqrt()")
    check(tracer, tracer.builder.compare("lt", n, 0), ValueError("isqrt() argument must be nonnegative"))
    return _emit(tracer, "isqrt", n)


# ------------------------------------------------------------------------- sums, products, distances
@implements(math.prod)
def _prod(tracer, iterable, *, start=1):
    """math.prod: the product in order, from start (ints exact or falling back past 64 bits;
    CPython's float fast path multiplies the same doubles in the same order)."""
    items = materialize(tracer, iterable)
    if all_constant([start, *items]):
        return math.prod(items, start=start)
    result = start
    for x in items:
        result = tracer.builder.binary("mul", number(tracer, result, "math.prod()"), number(tracer, x, "math.prod()"))
    return result


@implements(math.fsum)
def _fsum(tracer, iterable):
    items = materialize(tracer, iterable)
    if all_constant(items):
        return math.fsum(items)
    return _emit(tracer, "fsum", *(as_float(tracer, x, "math.fsum()") for x in items))


@implements(math.dist)
def _dist(tracer, p, q):
    p, q = materialize(tracer, p), materialize(tracer, q)
    if all_constant([*p, *q]):
        return math.dist(p, q)
    if len(p) != len(q):
        raise ValueError("both points must have the same number of dimensions")
    diffs = [tracer.builder.binary("sub", as_float(tracer, x, "math.dist()"), as_float(tracer, y, "math.dist()"))
             for x, y in zip(p, q)]
    if not diffs:
        return 0.0
    if len(diffs) == 1:
        return _emit(tracer, "fabs", diffs[0])
    if len(diffs) == 2:
        return _emit(tracer, "hypot", *diffs)
    raise tracer.error("math.dist() of traced points of more than 2 dimensions is not supported yet")


@implements(math.isclose)
def _isclose(tracer, a, b, *, rel_tol=1e-09, abs_tol=0.0):
    """CPython's math_isclose_impl, comparison by comparison."""
    if all_constant([a, b, rel_tol, abs_tol]):
        return math.isclose(a, b, rel_tol=rel_tol, abs_tol=abs_tol)
    a, b, rel_tol, abs_tol = (as_float(tracer, x, "math.isclose()") for x in (a, b, rel_tol, abs_tol))
    bld = tracer.builder
    negative = _either(tracer, bld.compare("lt", rel_tol, 0.0), bld.compare("lt", abs_tol, 0.0))
    check(tracer, negative, ValueError("tolerances must be non-negative"))
    diff = _emit(tracer, "fabs", bld.binary("sub", b, a))
    close = _either(tracer, _either(tracer, bld.compare("le", diff, _emit(tracer, "fabs", bld.binary("mul", rel_tol, b))),
                                    bld.compare("le", diff, _emit(tracer, "fabs", bld.binary("mul", rel_tol, a)))),
                    bld.compare("le", diff, abs_tol))
    infinite = _either(tracer, _emit(tracer, "isinf", a), _emit(tracer, "isinf", b))
    return _select(tracer, bld.compare("eq", a, b), True, _select(tracer, infinite, False, close))


# ------------------------------------------------------------------------- float decompositions
@implements(math.ulp)
def _ulp(tracer, x):
    """CPython's math_ulp: the gap from |x| up to the next float (down, at the largest one)."""
    if all_constant([x]):
        return math.ulp(x)
    x = as_float(tracer, x, "math.ulp()")
    bld = tracer.builder
    a = _emit(tracer, "fabs", x)
    up = _emit(tracer, "nextafter", a, math.inf)
    gap = _select(tracer, _emit(tracer, "isinf", up), bld.binary("sub", a, _emit(tracer, "nextafter", a, -math.inf)),
                  bld.binary("sub", up, a))
    return _select(tracer, _emit(tracer, "isfinite", x), gap, a)     # NaN and inf: |x| itself


@implements(math.modf)
def _modf(tracer, x):
    """C's modf (the fraction keeps x's sign), and (±0.0, x) for an infinite x."""
    if all_constant([x]):
        return math.modf(x)
    x = as_float(tracer, x, "math.modf()")
    infinite = _emit(tracer, "isinf", x)
    finite_x = _select(tracer, infinite, 0.0, x)          # (inf - inf would be a NaN: a domain error)
    whole = _emit(tracer, "trunc", finite_x)
    fraction = _emit(tracer, "copysign", tracer.builder.binary("sub", finite_x, whole), finite_x)
    return (_select(tracer, infinite, _emit(tracer, "copysign", 0.0, x), fraction),
            _select(tracer, infinite, x, whole))


@implements(math.frexp)
def _frexp(tracer, x):
    if all_constant([x]):
        return math.frexp(x)
    x = as_float(tracer, x, "math.frexp()")
    return _emit(tracer, "frexp_mantissa", x), _emit(tracer, "frexp_exponent", x)


@implements(math.ldexp)
def _ldexp(tracer, x, i):
    if all_constant([x, i]):
        return math.ldexp(x, i)
    if not is_traced(i) and type(i) is int and not -2 ** 63 <= i < 2 ** 63:
        i = max(min(i, 2 ** 31), -2 ** 31 - 1)    # past C's int the result is an infinity or a zero anyway
    if tracer.builder.kind(number(tracer, i, "math.ldexp()")) == F64:
        raise TypeError("Expected an int as second argument to ldexp.")
    x = as_float(tracer, x, "math.ldexp()")
    return _emit(tracer, "ldexp", x, tracer.builder.convert(i, I64))
