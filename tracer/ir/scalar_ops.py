"""The scalar ops: numbers (f64, f32, i64, bool) as Python computes them.

Semantics are Python's, made precise per type. The evaluator *is* the specification: it runs the
Python operation itself and maps Python's exception to the `Status` the compiled op returns, so a
compiled op and its evaluator agree by construction (tests check codegen against evaluators).

Integer ops work on i64 and never wrap: a result outside i64 returns `Status.FALLBACK`, and the
caller then runs the original Python function to get the exact (big int) answer. Bools are
separate from ints in the IR; the front end converts (`to_i64`) where Python would treat a bool
as an int (`True + 1`).
"""
from __future__ import annotations

import math
from collections.abc import Callable

from tracer.errors import OpFailure, Status
from tracer.ir.graph import Value
from tracer.ir.registry import OpDef, define, may_fail_by_status, signature
from tracer.ir.types import BOOL, F32, F64, I64, I64_MAX, I64_MIN, type_of_constant


def ieee_div(a: float, b: float) -> float:
    """IEEE-754 division: what C's `a / b` gives, where Python would raise ZeroDivisionError."""
    if b != 0.0:
        return a / b
    if a == 0.0 or math.isnan(a) or math.isnan(b):
        return math.nan
    return math.copysign(math.inf, a) * math.copysign(1.0, b)


def fused_multiply_add(a: float, b: float, c: float) -> float:
    """Fused multiply-add, one rounding, IEEE results for inf/nan/overflow (never raises)."""
    if math.isfinite(a) and math.isfinite(b) and not math.isfinite(c):
        return c                  # the exact product is finite, so c (inf or nan) decides
    if not (math.isfinite(a) and math.isfinite(b)):
        return a * b + c          # an infinite or nan product is exact: no rounding question
    from fractions import Fraction
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    if exact == 0:
        return a * b + c          # the sign of an exact zero follows IEEE rules for a*b + c
    try:
        return float(exact)       # Fraction -> float rounds correctly (half to even)
    except OverflowError:
        return math.inf if exact > 0 else -math.inf


# ----------------------------------------------------------------------------- derivative rules
# `vjp` holds one rule per operand: `rule(ct, out, *operands, **attrs)` gives that operand's share
# of the gradient, given `ct` (the gradient flowing into the op's result `out`). None means the
# operand gets no gradient: it is not a float, or the op is piecewise constant in it (floor,
# comparisons). An op with `vjp=None` has no rule at all; autodiff reports it if it meets one.
# The arguments are `tracer.transforms.autodiff.Sym`s: `+ - * /` and `x.cos()`, `c.select(a, b)`, `x.eq(y)`
# emit IR, with `/` and `**` as IEEE operations that never raise (an infinite or NaN gradient is
# what JAX gives where the derivative is undefined; the forward raised first if Python would).
# Choices at non-differentiable points, as PyTorch and JAX make them: sign(0) = 0, so
# abs'(0) = 0; min/max send the whole gradient to the operand Python returns (the first on a tie).
def _sign(x):
    """-1, 0 or 1 as f64 (NaN stays NaN, the sign of a zero is kept: x * 0.0)."""
    return (x > 0.0).select(1.0, (x < 0.0).select(-1.0, x * 0.0))


def _pow_base(ct, out, a, b):           # d(a ** b)/da = b * a ** (b - 1), and 0 at a == b == 0
    d = b * a ** (b - 1.0)                # (the select only at a == 0, so d/db of this stays 1/a at b == 0)
    return ct * a.eq(0.0).select(b.eq(0.0).select(0.0, d), d)


def _pow_exponent(ct, out, a, b):       # d(a ** b)/db = a ** b * log(a), and 0 when a == 0 (JAX's choice)
    return ct * out * a.eq(0.0).select(1.0, a).ieee_log()


POW_RULES = (_pow_base, _pow_exponent)
# d(a/b)/db = -out/b: written as -(ct/b)*out so that CSE shares the one division with d/da
DIV_RULES = (lambda ct, out, a, b: ct / b, lambda ct, out, a, b: -(ct / b) * out)


# ----------------------------------------------------------------------------- type rules
NUM_BINARY = signature(((F64, F64), F64), ((I64, I64), I64))
NUM_UNARY = signature(((F64,), F64), ((I64,), I64))
F64_UNARY = signature(((F64,), F64))
F64_BINARY = signature(((F64, F64), F64))
F64_PREDICATE = signature(((F64,), BOOL))
COMPARE = signature(*(((t, t), BOOL) for t in (F64, I64, BOOL)))


# ----------------------------------------------------------------------------- evaluators
def _checked_int(r: int) -> int:
    if not I64_MIN <= r <= I64_MAX:
        raise OpFailure(Status.FALLBACK)
    return r


def _python(op: Callable, errors: dict[type, Status]) -> Callable:
    """Evaluate with Python's own operator, turning its exceptions into statuses."""
    def evaluate(*args, **attrs):
        try:
            r = op(*args)
        except tuple(errors) as exc:
            raise OpFailure(errors[type(exc)]) from None
        if isinstance(r, complex):          # e.g. (-8.0) ** (1/3): only Python can give that
            raise OpFailure(Status.FALLBACK)
        if isinstance(r, int) and not isinstance(r, bool):
            return _checked_int(r)
        return r
    return evaluate


def _by_type(float_status: Status, int_status: Status, op: Callable) -> Callable:
    """Division-like ops raise ZeroDivisionError with a message that depends on the operand type."""
    def evaluate(a, b):
        if b == 0:
            raise OpFailure(float_status if isinstance(a, float) else int_status)
        return _python(op, {})(a, b)
    return evaluate


def _int_true_div(a, b):
    if b == 0:
        raise OpFailure(Status.INT_DIVISION_BY_ZERO)
    if abs(a) > 2 ** 53 or abs(b) > 2 ** 53:   # beyond exact doubles Python divides big ints
        raise OpFailure(Status.FALLBACK)
    return a / b


def _pow(a, b):
    if isinstance(a, int) and (b < 0 or (abs(a) >= 2 and b >= 64)):
        raise OpFailure(Status.FALLBACK)      # a float in Python, or certainly past 64 bits
    if isinstance(a, float) and a < 0 and math.isfinite(a) and math.isfinite(b) and b != math.floor(b):
        raise OpFailure(Status.FALLBACK)      # a complex result (or complex overflow) in Python
    return _python(lambda x, y: x ** y, {ZeroDivisionError: Status.ZERO_TO_NEGATIVE_POWER,
                                         OverflowError: Status.POW_OVERFLOW})(a, b)


def _zero_signed(f: Callable) -> Callable:
    """floor/ceil/trunc/round as f64 -> f64 (kept float, like C's), with C's signed zeros."""
    def evaluate(x):
        if not math.isfinite(x):
            return x
        r = float(f(x))
        return math.copysign(r, x) if r == 0 else r
    return evaluate


def _float32(x) -> float:
    """x rounded to float32 (as a Python float, which holds it exactly)."""
    import numpy
    with numpy.errstate(over="ignore"):
        return float(numpy.float32(x))


def _to_i64(x):
    if isinstance(x, bool):
        return int(x)
    try:
        return _checked_int(int(x))
    except OverflowError:
        raise OpFailure(Status.FLOAT_INFINITY_TO_INT) from None
    except ValueError:
        raise OpFailure(Status.FLOAT_NAN_TO_INT) from None


def _libm_function(name: str, nargs: int):
    """The C library's `name` on doubles, called through ctypes: exactly what compiled code calls."""
    import ctypes
    import ctypes.util
    f = getattr(ctypes.CDLL(ctypes.util.find_library("m") or None), name)
    f.restype, f.argtypes = ctypes.c_double, [ctypes.c_double] * nargs
    return f


_c_pow, _c_log = _libm_function("pow", 2), _libm_function("log", 1)


MATH_ERRORS = {ValueError: Status.MATH_DOMAIN, OverflowError: Status.MATH_RANGE}
MATH_FAILS = (Status.MATH_DOMAIN, Status.MATH_RANGE)

# ----------------------------------------------------------------------------- the op set
define("param", "a function parameter (attrs: index)", lambda t, a: None, None, attrs=("index",))
define("const", "a constant number (attrs: value)", lambda t, a: type_of_constant(a["value"]),
        lambda value: value, attrs=("value",))

def _division_may_fail(op: OpDef, v: Value) -> bool:
    """Division and modulo by a nonzero constant cannot fail (an i64 // -1 still can, and an
    i64 / i64 can leave the f64 range of exact results)."""
    if v.args[1].op != "const":
        return may_fail_by_status(op, v)
    d = v.args[1].attrs["value"]
    return d == 0 or (v.type == I64 and d == -1) or (op.name == "div" and v.args[0].type == I64)


def _sum_may_fail(op: OpDef, v: Value) -> bool:
    """An add marked attrs['bounded'] cannot fail: a range loop's next index, index + step with
    step 1 or -1, made only while index is inside the range, so never past i64."""
    return not v.attrs.get("bounded") and may_fail_by_status(op, v)


define("add", "a + b (attrs['bounded']: known not to leave i64)", NUM_BINARY, _python(lambda a, b: a + b, {}),
        [Status.FALLBACK], commutative=True, vjp=(lambda ct, out, a, b: ct, lambda ct, out, a, b: ct),
        fails_when=_sum_may_fail)
define("sub", "a - b", NUM_BINARY, _python(lambda a, b: a - b, {}), [Status.FALLBACK],
        vjp=(lambda ct, out, a, b: ct, lambda ct, out, a, b: -ct))
define("mul", "a * b", NUM_BINARY, _python(lambda a, b: a * b, {}), [Status.FALLBACK], commutative=True,
        vjp=(lambda ct, out, a, b: ct * b, lambda ct, out, a, b: ct * a))
define("div", "a / b (true division; i64 / i64 gives f64)",
        signature(((F64, F64), F64), ((I64, I64), F64)),
        lambda a, b: _int_true_div(a, b) if isinstance(a, int) else _by_type(Status.FLOAT_DIVISION_BY_ZERO, None, lambda x, y: x / y)(a, b),
        [Status.FLOAT_DIVISION_BY_ZERO, Status.INT_DIVISION_BY_ZERO, Status.FALLBACK], vjp=DIV_RULES,
        fails_when=_division_may_fail)
define("fdiv", "a / b on f64 with IEEE results (x / 0.0 is an infinity or NaN; never raises; made by autodiff)",
        F64_BINARY, lambda a, b: ieee_div(a, b), vjp=DIV_RULES)
define("floordiv", "a // b (floor division, Python's rounding)", NUM_BINARY,
        _by_type(Status.FLOAT_FLOOR_DIVISION_BY_ZERO, Status.INT_FLOOR_DIVISION_BY_ZERO, lambda a, b: a // b),
        [Status.FLOAT_FLOOR_DIVISION_BY_ZERO, Status.INT_FLOOR_DIVISION_BY_ZERO, Status.FALLBACK], vjp=(None, None),
        fails_when=_division_may_fail)
define("mod", "a % b (the result takes the sign of b, as in Python)", NUM_BINARY,
        _by_type(Status.FLOAT_MODULO_BY_ZERO, Status.INT_MODULO_BY_ZERO, lambda a, b: a % b),
        [Status.FLOAT_MODULO_BY_ZERO, Status.INT_MODULO_BY_ZERO],
        vjp=(lambda ct, out, a, b: ct, lambda ct, out, a, b: -ct * (a / b).floor()),   # a - floor(a/b)*b
        fails_when=_division_may_fail)
define("pow", "a ** b (Python's float and int power; a negative int exponent falls back)", NUM_BINARY, _pow,
        [Status.ZERO_TO_NEGATIVE_POWER, Status.POW_OVERFLOW, Status.FALLBACK], vjp=POW_RULES)
define("ieee_pow", "C's pow(a, b) on f64 (0 ** -1 is inf, (-8) ** 0.5 is NaN; never raises; made by autodiff)",
        F64_BINARY, _c_pow, vjp=POW_RULES)
define("neg", "-a", NUM_UNARY, _python(lambda a: -a, {}), [Status.FALLBACK], vjp=(lambda ct, out, a: -ct,))
define("abs", "abs(a)", NUM_UNARY, _python(abs, {}), [Status.FALLBACK], vjp=(lambda ct, out, a: ct * _sign(a),))
define("min", "min(a, b): b if b < a else a (so NaN handling follows Python's argument order)", NUM_BINARY,
        lambda a, b: b if b < a else a,
        vjp=(lambda ct, out, a, b: (b < a).select(0.0, ct), lambda ct, out, a, b: (b < a).select(ct, 0.0)))
define("max", "max(a, b): b if b > a else a", NUM_BINARY, lambda a, b: b if b > a else a,
        vjp=(lambda ct, out, a, b: (b > a).select(0.0, ct), lambda ct, out, a, b: (b > a).select(ct, 0.0)))
define("fma", "a * b + c with one rounding (made by the FMA fusion pass)",
        signature(((F64, F64, F64), F64)), fused_multiply_add,
        vjp=(lambda ct, out, a, b, c: ct * b, lambda ct, out, a, b, c: ct * a, lambda ct, out, a, b, c: ct))

for _name, _py in [("lt", lambda a, b: a < b), ("le", lambda a, b: a <= b), ("gt", lambda a, b: a > b),
                   ("ge", lambda a, b: a >= b), ("eq", lambda a, b: a == b), ("ne", lambda a, b: a != b)]:
    define(_name, f"comparison ({_name}); NaN compares unequal to everything", COMPARE, _py,
            commutative=_name in ("eq", "ne"))
define("not", "not a", signature(((BOOL,), BOOL)), lambda a: not a)
define("select", "a if cond else b (both computed; no branch)",
        signature(*(((BOOL, t, t), t) for t in (F64, I64, BOOL))), lambda cond, a, b: a if cond else b,
        vjp=(None, lambda ct, out, c, a, b: c.select(ct, 0.0), lambda ct, out, c, a, b: c.select(0.0, ct)))

define("to_f64", "float(a) for an i64 (round to nearest), a bool or an f32 (exact)",
        signature(((I64,), F64), ((BOOL,), F64), ((F32,), F64)), float)
define("to_f32", "a as float32 (NumPy's cast: rounded to nearest, an f64 past the f32 range becomes inf)",
        signature(((F64,), F32), ((I64,), F32), ((BOOL,), F32)), lambda a: _float32(a))
define("to_i64", "int(a): truncate an f64 toward zero, or a bool as 0/1",
        signature(((F64,), I64), ((BOOL,), I64)), _to_i64,
        [Status.FLOAT_INFINITY_TO_INT, Status.FLOAT_NAN_TO_INT, Status.FALLBACK])
define("to_bool", "bool(a): a != 0", signature(((F64,), BOOL), ((I64,), BOOL)), bool)

# math functions with CPython's error rules: a NaN from a non-NaN input is a domain error, an
# infinity from a finite input is a range error for the functions that can overflow.
MATH_UNARY = ["sqrt", "exp", "log", "log2", "log10", "log1p", "expm1", "sin", "cos", "tan",
              "asin", "acos", "atan", "sinh", "cosh", "tanh", "cbrt", "exp2", "erf", "erfc"]
MATH_CAN_OVERFLOW = {"exp", "expm1", "sinh", "cosh", "exp2"}
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
MATH_UNARY_RULES = {        # d/dx, times ct; `out` is the function's value
    "sqrt": lambda ct, out, x: ct * 0.5 / out,            # inf at 0, as in JAX
    "exp": lambda ct, out, x: ct * out,
    "log": lambda ct, out, x: ct / x,
    "log2": lambda ct, out, x: ct / (x * math.log(2.0)),
    "log10": lambda ct, out, x: ct / (x * math.log(10.0)),
    "log1p": lambda ct, out, x: ct / (x + 1.0),
    "expm1": lambda ct, out, x: ct * (out + 1.0),
    "sin": lambda ct, out, x: ct * x.cos(),
    "cos": lambda ct, out, x: -ct * x.sin(),
    "tan": lambda ct, out, x: ct * (out * out + 1.0),
    "asin": lambda ct, out, x: ct / (1.0 - x * x).sqrt(),
    "acos": lambda ct, out, x: -ct / (1.0 - x * x).sqrt(),
    "atan": lambda ct, out, x: ct / (x * x + 1.0),
    "sinh": lambda ct, out, x: ct * x.cosh(),
    "cosh": lambda ct, out, x: ct * x.sinh(),
    "tanh": lambda ct, out, x: ct * (1.0 - out * out),
    "cbrt": lambda ct, out, x: ct / (3.0 * out * out),    # inf at 0, as sqrt's
    "exp2": lambda ct, out, x: ct * out * math.log(2.0),
    "erf": lambda ct, out, x: ct * _TWO_OVER_SQRT_PI * (-(x * x)).exp(),
    "erfc": lambda ct, out, x: -ct * _TWO_OVER_SQRT_PI * (-(x * x)).exp(),
}
for _name in MATH_UNARY:
    define(_name, f"math.{_name}(a)", F64_UNARY, _python(getattr(math, _name), MATH_ERRORS), MATH_FAILS,
            vjp=(MATH_UNARY_RULES[_name],))
define("ieee_log", "C's log(a) (log(0.0) is -inf, log(-1.0) is NaN; never raises; made by autodiff)",
        F64_UNARY, _c_log, vjp=(lambda ct, out, x: ct / x,))
define("fabs", "math.fabs(a)", F64_UNARY, math.fabs, vjp=(lambda ct, out, x: ct * _sign(x),))
MATH_BINARY_RULES = {
    # x / (x*x + y*y), divided twice by hypot(x, y) so that tiny or huge x, y do not under/overflow
    "atan2": (lambda ct, out, y, x: ct * (x / y.hypot(x)) / y.hypot(x),
              lambda ct, out, y, x: -ct * (y / y.hypot(x)) / y.hypot(x)),
    "copysign": (lambda ct, out, a, b: ct * (_sign(a) * _sign(out)), None),   # sign(a) * sign(b), 0 at a == 0
    "fmod": (lambda ct, out, a, b: ct, lambda ct, out, a, b: -ct * (a / b).trunc()),   # a - trunc(a/b)*b
    "remainder": (lambda ct, out, a, b: ct, lambda ct, out, a, b: -ct * (a / b).round_even()),
}
for _name in ["atan2", "copysign", "fmod", "remainder"]:
    define(_name, f"math.{_name}(a, b)", F64_BINARY, _python(getattr(math, _name), MATH_ERRORS), MATH_FAILS,
            vjp=MATH_BINARY_RULES[_name])
define("hypot", "math.hypot(a, b) (CPython's own algorithm, not libm's; never fails)", F64_BINARY, math.hypot,
        vjp=(lambda ct, out, a, b: ct * a / out, lambda ct, out, a, b: ct * b / out))
define("math_pow", "math.pow(a, b) (domain errors instead of ZeroDivisionError/complex)", F64_BINARY,
        _python(math.pow, MATH_ERRORS), MATH_FAILS, vjp=POW_RULES)
# rounding is piecewise constant: zero gradient (also at the jumps)
define("floor", "floor as f64 (math.floor is this then to_i64)", F64_UNARY, _zero_signed(math.floor), vjp=(None,))
define("ceil", "ceil as f64", F64_UNARY, _zero_signed(math.ceil), vjp=(None,))
define("trunc", "truncation toward zero as f64", F64_UNARY, _zero_signed(math.trunc), vjp=(None,))
define("round_even", "round half to even as f64 (round(x) is this then to_i64)", F64_UNARY, _zero_signed(round),
        vjp=(None,))
for _name in ["isnan", "isinf", "isfinite"]:
    define(_name, f"math.{_name}(a)", F64_PREDICATE, getattr(math, _name))


def _round_digits(x: float, n: int) -> float:
    """round(x, n) of a float where 0 <= n <= 22 and x * 10**n stays below 2**52 (exact in the
    compiled op, codegen.cpython_math); elsewhere the op falls back to Python."""
    if not 0 <= n <= 22:
        raise OpFailure(Status.FALLBACK)
    if not math.isfinite(x) or abs(x) >= 2.0 ** 52:
        return x                     # (an integer already, an infinity or NaN: round gives it back)
    if not abs(x * float(10 ** n)) < 2.0 ** 52:
        raise OpFailure(Status.FALLBACK)
    return round(x, n)


define("round_digits", "round(a, n) of a float: to n decimal places, CPython's correctly rounded result",
        signature(((F64, I64), F64)), _round_digits, [Status.FALLBACK], vjp=(None, None),
        fails_when=lambda op, v: True)   # (an f64 op that can fall back)


# ----------------------------------------------------------------------------- int bits
# On i64, as Python computes them. A shift by a negative count raises ValueError in Python: the
# front end raises it before the shift (tracer.frontend.opcodes.numbers), and the op itself then
# falls back (never reached); a left shift past 64 bits falls back (Python's exact big int).
# Their results are ints: no gradient (tracer.transforms.autodiff.NOT_DIFFERENTIABLE says so).
INT_BINARY = signature(((I64, I64), I64))
INT_UNARY = signature(((I64,), I64))
BITWISE = signature(((I64, I64), I64), ((BOOL, BOOL), BOOL))   # & | ^ of two bools is a bool


def _shift(op: Callable) -> Callable:
    def evaluate(a, n):
        if n < 0:
            raise OpFailure(Status.FALLBACK)
        if op is _lshift and a != 0 and n >= 64:
            raise OpFailure(Status.FALLBACK)     # certainly past 64 bits (don't build the big int)
        return _checked_int(op(a, min(n, 64)))
    return evaluate


def _count_may_be_negative(op: OpDef, v: Value) -> bool:
    """A right shift fails only for a negative count: by a constant count >= 0 it cannot."""
    n = v.args[1]
    return not (n.op == "const" and n.attrs["value"] >= 0)


def _lshift(a, n):
    return a << n


def _bitwise(op: Callable) -> Callable:
    def evaluate(a, b):
        r = op(a, b)
        return bool(r) if isinstance(a, bool) else r
    return evaluate


def _int_math(f: Callable, fails: Callable = lambda *args: False) -> Callable:
    """A math/builtin function on i64 arguments; FALLBACK where `fails` (the front end raised
    Python's ValueError first) or where the result leaves i64."""
    def evaluate(*args):
        if fails(*args):
            raise OpFailure(Status.FALLBACK)
        return _checked_int(f(*args))
    return evaluate


def _modular_inverse_missing(a, e, m):
    return m == 0 or (e < 0 and math.gcd(a, m) != 1)


def _factorial_too_big(n):
    return n < 0 or n > 20


define("bit_and", "a & b (i64, or bool & bool)", BITWISE, _bitwise(lambda a, b: a & b), commutative=True)
define("bit_or", "a | b (i64, or bool | bool)", BITWISE, _bitwise(lambda a, b: a | b), commutative=True)
define("bit_xor", "a ^ b (i64, or bool ^ bool)", BITWISE, _bitwise(lambda a, b: a ^ b), commutative=True)
define("invert", "~a on i64 (-a - 1: never overflows)", INT_UNARY, lambda a: ~a)
define("lshift", "a << n on i64 (n >= 0; a result past 64 bits falls back)", INT_BINARY, _shift(_lshift),
        [Status.FALLBACK])
define("rshift", "a >> n on i64: the floor of a / 2**n (n >= 0; 0 or -1 once n >= 64)", INT_BINARY,
        _shift(lambda a, n: a >> n), [Status.FALLBACK], fails_when=_count_may_be_negative)
define("bit_length", "int.bit_length(a) on i64 (64 for -2**63)", INT_UNARY, lambda a: a.bit_length())
define("bit_count", "int.bit_count(a) on i64: the ones in |a| (1 for -2**63)", INT_UNARY, lambda a: bin(a).count("1"))
define("powmod", "pow(a, e, m) on i64 (e < 0: the modular inverse's power; the result has m's sign; "
        "m == 0 or no inverse falls back, after the front end raised Python's ValueError)",
        signature(((I64, I64, I64), I64)), _int_math(pow, _modular_inverse_missing), [Status.FALLBACK])
define("gcd", "math.gcd(a, b) on i64 (2**63 falls back)", INT_BINARY, _int_math(math.gcd), [Status.FALLBACK],
        commutative=True)
define("isqrt", "math.isqrt(n) on i64 (n < 0 falls back, after the front end raised)", INT_UNARY,
        _int_math(math.isqrt, lambda n: n < 0), [Status.FALLBACK])
define("factorial", "math.factorial(n) on i64 (n > 20 or n < 0 falls back)", INT_UNARY,
        _int_math(math.factorial, _factorial_too_big), [Status.FALLBACK])
def _choose_fails(n, k, most: int) -> bool:
    """Negative n or k; or k <= n with more than `most` factors, so that the result is certainly
    past 64 bits (C(n, k) >= C(140, 70) and P(n, k) >= 65!), not worth computing exactly here."""
    return n < 0 or k < 0 or (k <= n and min(k, n - k if most == 70 else k) > most)


define("comb", "math.comb(n, k) on i64 (negative n or k, or a result past 64 bits, falls back)", INT_BINARY,
        _int_math(math.comb, lambda n, k: _choose_fails(n, k, 70)), [Status.FALLBACK])
define("perm", "math.perm(n, k) on i64 (negative n or k, or a result past 64 bits, falls back)", INT_BINARY,
        _int_math(math.perm, lambda n, k: _choose_fails(n, k, 64)), [Status.FALLBACK])


# ----------------------------------------------------------------------------- more of math
def _fsum_type(arg_types, attrs):
    if any(t != F64 for t in arg_types):
        raise TypeError("fsum takes f64 operands")
    return F64


def _fsum(*xs):
    """math.fsum; its ValueError (inf - inf) and OverflowError (an intermediate sum past the f64
    range) fall back: CPython raises them when it runs the function."""
    try:
        return math.fsum(xs)
    except (ValueError, OverflowError):
        raise OpFailure(Status.FALLBACK) from None


def _frexp_part(index: int) -> Callable:
    return lambda x: math.frexp(x)[index]


def _ldexp(x, i):
    try:
        return math.ldexp(x, i)
    except OverflowError:
        raise OpFailure(Status.MATH_RANGE) from None


def _digamma(x):
    """psi(x) = gamma'(x) / gamma(x) as IR (for gamma's and lgamma's rules; accurate to ~1e-12
    relative): the recurrence up to z + 6 >= 6.5, the asymptotic series there, and the
    reflection psi(x) = psi(1 - x) - pi / tan(pi * x) below 0.5. Its own derivative (for second
    order) is this expression's."""
    small = x < 0.5
    z = small.select(1.0 - x, x)
    y = z + 6.0
    r = 1.0 / (y * y)
    series = y.ieee_log() - 0.5 / y - r * (1.0 / 12 - r * (1.0 / 120 - r * (1.0 / 252 - r * (1.0 / 240 - r * (1.0 / 132)))))
    psi = series - (1.0 / z + 1.0 / (z + 1.0) + 1.0 / (z + 2.0) + 1.0 / (z + 3.0) + 1.0 / (z + 4.0) + 1.0 / (z + 5.0))
    return small.select(psi - math.pi / (x * math.pi).tan(), psi)


define("gamma", "math.gamma(a) (CPython's own Lanczos algorithm, not libm's tgamma)", F64_UNARY,
        _python(math.gamma, MATH_ERRORS), MATH_FAILS, vjp=(lambda ct, out, x: ct * out * _digamma(x),))
define("lgamma", "math.lgamma(a) (CPython's own Lanczos algorithm, not libm's)", F64_UNARY,
        _python(math.lgamma, MATH_ERRORS), MATH_FAILS, vjp=(lambda ct, out, x: ct * _digamma(x),))
define("nextafter", "math.nextafter(a, b) (C's nextafter; never fails)", F64_BINARY, math.nextafter,
        vjp=(lambda ct, out, a, b: ct, None))
define("ldexp", "math.ldexp(x, i): x * 2**i (an overflow is a range error)", signature(((F64, I64), F64)), _ldexp,
        [Status.MATH_RANGE], vjp=(lambda ct, out, x, i: ct.ldexp(i), None))
define("frexp_mantissa", "math.frexp(a)[0]: m with a == m * 2**e, 0.5 <= |m| < 1 (a itself if 0, inf or NaN)",
        F64_UNARY, _frexp_part(0), vjp=(lambda ct, out, x: ct * x.eq(0.0).select(1.0, out / x),))   # 2**-e
define("frexp_exponent", "math.frexp(a)[1]: e with a == m * 2**e (0 if a is 0, inf or NaN)",
        signature(((F64,), I64)), _frexp_part(1))
define("fsum", "math.fsum of the operands (CPython's exact summation, Shewchuk's partials; its errors fall back)",
        _fsum_type, _fsum, [Status.FALLBACK], fails_when=lambda op, v: True)   # (an f64 op that can fall back)


# ops whose result is not finite where an operand is not (inf + x, inf * 0, nan * x): a chain of them
# needs one NumPy scalar check, at its end (tracer.transforms.passes.numpy_checks)
KEEPS_NONFINITE = ("add", "sub", "mul")
MAX_CHAIN = 8       # the most links one check stands for (codegen.fpflags looks that far back)


def _numpy_scalar_check(result, a, b):
    """NumPy warns where its scalar arithmetic overflows (an infinity from finite operands) or
    makes a NaN (from operands that are not NaN)."""
    values = [float(x) for x in (result, a, b)]
    if (math.isinf(values[0]) and all(map(math.isfinite, values[1:]))
            or math.isnan(values[0]) and not any(map(math.isnan, values[1:]))):
        raise OpFailure(Status.FALLBACK)
    return result


define("numpy_scalar_check", "result, checked: the float `result` of NumPy scalars' arithmetic on a and b (f64; "
        "a float32 result is float32 arithmetic done in f64 and rounded), where "
        "NumPy warns (overflow: an infinity from finite a and b; invalid: a NaN from a and b not NaN) FALLBACK (the "
        "Python function runs and NumPy warns; compiled code notes it and fails at the next place that cannot run "
        "it again, codegen.fpflags)",
        signature(((F64, F64, F64), F64), ((F32, F64, F64), F32)), _numpy_scalar_check, [Status.FALLBACK],
        vjp=(lambda ct, out, result, a, b: ct, None, None),
        fails_when=lambda op, v: True)      # (a dead check stays: NumPy warns of a result never used)
