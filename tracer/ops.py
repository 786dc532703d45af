"""The IR's op set: for each op, its type rule, its meaning (a Python evaluator) and its failures.

This table is the one place that says what an op *is*. Every other stage keeps one table keyed by
op name (grep for the op's name): `codegen.lower` lowers it, passes use `evaluate` to fold it,
and autodiff (a later issue) adds its derivative rule here, next to its definition.

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
from dataclasses import dataclass, field
from typing import Callable

from .errors import OpFailure, Status
from .ir import BOOL, F64, I64, I64_MAX, I64_MIN, TupleType, Type, Value, type_of_constant

TypeRule = Callable[[tuple[Type, ...], dict], Type]


@dataclass(frozen=True)
class OpDef:
    name: str
    doc: str
    result_type: TypeRule
    evaluate: Callable | None        # (*operand values, **attrs) -> value; raises OpFailure
    statuses: tuple[Status, ...] = ()  # the failures the op can return (empty: it cannot fail)
    commutative: bool = False
    attrs: tuple[str, ...] = field(default=())

    def may_fail(self, v: Value) -> bool:
        """Whether this use of the op can fail at run time (dead failing ops must stay)."""
        if not self.statuses:
            return False
        if self.statuses == (Status.FALLBACK,) and v.type != I64:
            return False          # only i64 arithmetic can leave 64 bits; f64 never falls back
        # division and modulo by a nonzero constant cannot fail (an i64 // -1 still can)
        if self.name in ("div", "floordiv", "mod") and v.args[1].op == "const":
            d = v.args[1].attrs["value"]
            return d == 0 or (v.type == I64 and d == -1) or (self.name == "div" and v.args[0].type == I64)
        return True


OPS: dict[str, OpDef] = {}


def _define(name, doc, result_type, evaluate, statuses=(), commutative=False, attrs=()):
    OPS[name] = OpDef(name, doc, result_type, evaluate, tuple(statuses), commutative, tuple(attrs))


# ----------------------------------------------------------------------------- type rules
def _signature(*sigs: tuple[tuple[Type, ...], Type]) -> TypeRule:
    """A type rule from a list of (operand types, result type) overloads."""
    table = dict(sigs)

    def rule(arg_types, attrs):
        try:
            return table[tuple(arg_types)]
        except KeyError:
            raise TypeError("no overload for operand types (" + ", ".join(map(str, arg_types)) + ")") from None
    return rule


NUM_BINARY = _signature(((F64, F64), F64), ((I64, I64), I64))
NUM_UNARY = _signature(((F64,), F64), ((I64,), I64))
F64_UNARY = _signature(((F64,), F64))
F64_BINARY = _signature(((F64, F64), F64))
F64_PREDICATE = _signature(((F64,), BOOL))
COMPARE = _signature(*(((t, t), BOOL) for t in (F64, I64, BOOL)))


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


def _to_i64(x):
    if isinstance(x, bool):
        return int(x)
    try:
        return _checked_int(int(x))
    except OverflowError:
        raise OpFailure(Status.FLOAT_INFINITY_TO_INT) from None
    except ValueError:
        raise OpFailure(Status.FLOAT_NAN_TO_INT) from None


MATH_ERRORS = {ValueError: Status.MATH_DOMAIN, OverflowError: Status.MATH_RANGE}
MATH_FAILS = (Status.MATH_DOMAIN, Status.MATH_RANGE)

# ----------------------------------------------------------------------------- the op set
_define("param", "a function parameter (attrs: index)", lambda t, a: None, None, attrs=("index",))
_define("const", "a constant number (attrs: value)", lambda t, a: type_of_constant(a["value"]),
        lambda value: value, attrs=("value",))

_define("add", "a + b", NUM_BINARY, _python(lambda a, b: a + b, {}), [Status.FALLBACK], commutative=True)
_define("sub", "a - b", NUM_BINARY, _python(lambda a, b: a - b, {}), [Status.FALLBACK])
_define("mul", "a * b", NUM_BINARY, _python(lambda a, b: a * b, {}), [Status.FALLBACK], commutative=True)
_define("div", "a / b (true division; i64 / i64 gives f64)",
        _signature(((F64, F64), F64), ((I64, I64), F64)),
        lambda a, b: _int_true_div(a, b) if isinstance(a, int) else _by_type(Status.FLOAT_DIVISION_BY_ZERO, None, lambda x, y: x / y)(a, b),
        [Status.FLOAT_DIVISION_BY_ZERO, Status.INT_DIVISION_BY_ZERO, Status.FALLBACK])
_define("floordiv", "a // b (floor division, Python's rounding)", NUM_BINARY,
        _by_type(Status.FLOAT_FLOOR_DIVISION_BY_ZERO, Status.INT_FLOOR_DIVISION_BY_ZERO, lambda a, b: a // b),
        [Status.FLOAT_FLOOR_DIVISION_BY_ZERO, Status.INT_FLOOR_DIVISION_BY_ZERO, Status.FALLBACK])
_define("mod", "a % b (the result takes the sign of b, as in Python)", NUM_BINARY,
        _by_type(Status.FLOAT_MODULO_BY_ZERO, Status.INT_MODULO_BY_ZERO, lambda a, b: a % b),
        [Status.FLOAT_MODULO_BY_ZERO, Status.INT_MODULO_BY_ZERO])
_define("pow", "a ** b (Python's float and int power; a negative int exponent falls back)", NUM_BINARY, _pow,
        [Status.ZERO_TO_NEGATIVE_POWER, Status.POW_OVERFLOW, Status.FALLBACK])
_define("neg", "-a", NUM_UNARY, _python(lambda a: -a, {}), [Status.FALLBACK])
_define("abs", "abs(a)", NUM_UNARY, _python(abs, {}), [Status.FALLBACK])
_define("min", "min(a, b): b if b < a else a (so NaN handling follows Python's argument order)", NUM_BINARY,
        lambda a, b: b if b < a else a)
_define("max", "max(a, b): b if b > a else a", NUM_BINARY, lambda a, b: b if b > a else a)
_define("fma", "a * b + c with one rounding (made by the FMA fusion pass)",
        _signature(((F64, F64, F64), F64)), lambda a, b, c: _fma(a, b, c))

for _name, _py in [("lt", lambda a, b: a < b), ("le", lambda a, b: a <= b), ("gt", lambda a, b: a > b),
                   ("ge", lambda a, b: a >= b), ("eq", lambda a, b: a == b), ("ne", lambda a, b: a != b)]:
    _define(_name, f"comparison ({_name}); NaN compares unequal to everything", COMPARE, _py,
            commutative=_name in ("eq", "ne"))
_define("not", "not a", _signature(((BOOL,), BOOL)), lambda a: not a)
_define("select", "a if cond else b (both computed; no branch)",
        _signature(*(((BOOL, t, t), t) for t in (F64, I64, BOOL))), lambda cond, a, b: a if cond else b)

_define("to_f64", "float(a) for an i64 (round to nearest) or a bool",
        _signature(((I64,), F64), ((BOOL,), F64)), float)
_define("to_i64", "int(a): truncate an f64 toward zero, or a bool as 0/1",
        _signature(((F64,), I64), ((BOOL,), I64)), _to_i64,
        [Status.FLOAT_INFINITY_TO_INT, Status.FLOAT_NAN_TO_INT, Status.FALLBACK])
_define("to_bool", "bool(a): a != 0", _signature(((F64,), BOOL), ((I64,), BOOL)), bool)

# math functions with CPython's error rules: a NaN from a non-NaN input is a domain error, an
# infinity from a finite input is a range error for the functions that can overflow.
MATH_UNARY = ["sqrt", "exp", "log", "log2", "log10", "log1p", "expm1", "sin", "cos", "tan",
              "asin", "acos", "atan", "sinh", "cosh", "tanh"]
MATH_CAN_OVERFLOW = {"exp", "expm1", "sinh", "cosh"}
for _name in MATH_UNARY:
    _define(_name, f"math.{_name}(a)", F64_UNARY, _python(getattr(math, _name), MATH_ERRORS), MATH_FAILS)
_define("fabs", "math.fabs(a)", F64_UNARY, math.fabs)
for _name in ["atan2", "copysign", "fmod"]:
    _define(_name, f"math.{_name}(a, b)", F64_BINARY, _python(getattr(math, _name), MATH_ERRORS), MATH_FAILS)
_define("hypot", "math.hypot(a, b) (CPython's own algorithm, not libm's; never fails)", F64_BINARY, math.hypot)
_define("math_pow", "math.pow(a, b) (domain errors instead of ZeroDivisionError/complex)", F64_BINARY,
        _python(math.pow, MATH_ERRORS), MATH_FAILS)
_define("floor", "floor as f64 (math.floor is this then to_i64)", F64_UNARY, _zero_signed(math.floor))
_define("ceil", "ceil as f64", F64_UNARY, _zero_signed(math.ceil))
_define("trunc", "truncation toward zero as f64", F64_UNARY, _zero_signed(math.trunc))
_define("round_even", "round half to even as f64 (round(x) is this then to_i64)", F64_UNARY, _zero_signed(round))
for _name in ["isnan", "isinf", "isfinite"]:
    _define(_name, f"math.{_name}(a)", F64_PREDICATE, getattr(math, _name))

_define("tuple", "a tuple of its operands", lambda t, a: TupleType(tuple(t)), lambda *xs: tuple(xs))
_define("getitem", "element attrs['index'] of a tuple (a constant index)",
        lambda t, a: t[0].elements[a["index"]], lambda t, index: t[index], attrs=("index",))


def _fma(a: float, b: float, c: float) -> float:
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


def evaluate(v: Value, operands: list) -> object:
    """The value of `v` given the Python values of its operands; raises OpFailure."""
    return OPS[v.op].evaluate(*operands, **v.attrs)


def run(fn, args: list) -> object:
    """Interpret an IR function on Python values: the reference semantics for passes and codegen."""
    env = {p: a for p, a in zip(fn.params, args)}
    for v in fn.walk():
        env[v] = evaluate(v, [env[a] for a in v.args])
    return env[fn.result]
