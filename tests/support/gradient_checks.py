"""What the autodiff tests share: finite differences and their tolerances, hypothesis strategies that
keep each op's inputs in its smooth domain, and `CASES`, plain Python functions the tracer traces,
one (or a few) per differentiable op, with their compiled gradients and Hessian rows (cached:
compiling is the slow part, and one compiled gradient handles every float input).

The oracle for derivatives is central finite differences of the plain Python function, run by
CPython, on inputs kept away from kinks and jumps (each op gets its own domain).
"""
from __future__ import annotations

import functools
import math
import struct
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from hypothesis import settings
from hypothesis import strategies as st

from tracer import grad

FUSE = pytest.mark.parametrize("fuse_fma", [True, False], ids=["fma", "nofma"])
EXAMPLES = settings(max_examples=25, deadline=None)

# finite-difference steps (relative to max(1, |x|)) and tolerances: the FD error is about
# h**2 * f''' (truncation) plus eps * |f| / h (rounding), so the absolute part of the tolerance
# scales with the size of the function being differenced
FIRST = dict(h=1e-6, rel=1e-5, abs_=1e-6)
SECOND = dict(h=1e-5, rel=1e-4, abs_=1e-5)     # FD of a compiled derivative: looser


# ================================================================================ helpers
def bits(x: float) -> bytes:
    return struct.pack("<d", x)


def arity(fn) -> int:
    return fn.__code__.co_argcount


def central_difference(f, args: tuple, i: int, h: float):
    """(f(x + h e_i) - f(x - h e_i)) / (2h), with the step actually taken (x +- h is rounded)."""
    x = args[i]
    step = h * max(1.0, abs(x))
    up, down = list(args), list(args)
    up[i], down[i] = x + step, x - step
    return _difference(f(*up), f(*down), up[i] - down[i])


def _difference(hi, lo, width):
    if isinstance(hi, tuple):               # a tuple of gradients: one difference per entry
        return tuple(_difference(a, b, width) for a, b in zip(hi, lo))
    return (hi - lo) / width


def assert_close(actual: float, expected: float, *, rel: float, abs_: float, scale: float = 1.0,
                 what=""):
    tolerance = abs_ * max(1.0, scale) + rel * abs(expected)
    assert abs(actual - expected) <= tolerance, f"{what}: got {actual!r}, expected {expected!r}"


def as_tuple(x) -> tuple:
    return x if isinstance(x, tuple) else (x,)


def python_outcome(fn, *args):
    """("return", value) or ("raise", type, message): what calling `fn` does."""
    try:
        return ("return", fn(*args))
    except Exception as exc:
        return ("raise", type(exc), str(exc))


# ================================================================================ strategies
def interval(lo: float, hi: float):
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False)


def signed(lo: float, hi: float):
    """lo <= |x| <= hi, either sign (away from 0: abs, division, copysign...)."""
    return st.tuples(interval(lo, hi), st.sampled_from([-1.0, 1.0])).map(lambda t: t[0] * t[1])


FREE = interval(-10.0, 10.0)


def args(*strategies):
    return st.tuples(*strategies)


def apart(gap: float = 0.1):
    """(a, b) with |a - b| >= gap: min and max away from ties."""
    return st.tuples(FREE, signed(gap, 5.0)).map(lambda t: (t[0], t[0] + t[1]))


def off_integer(lo: float = 0.05, hi: float = 0.95):
    """k + t for an integer k and lo <= t <= hi: floor/ceil/trunc away from their jumps."""
    return st.tuples(st.integers(-5, 5), interval(lo, hi)).map(lambda t: t[0] + t[1])


OFF_HALF = st.one_of(off_integer(0.05, 0.45), off_integer(0.55, 0.95))   # round: jumps at k + 0.5


def quotient_pair():
    """(a, b) with a / b at least 0.05 away from an integer: % and fmod away from their jumps."""
    return st.tuples(signed(0.5, 5.0), off_integer()).map(lambda t: (t[0] * t[1], t[0]))


def one(strategy):
    return st.tuples(strategy)


POSITIVE = interval(0.1, 10.0)
POW_ARGS = args(POSITIVE, st.one_of(st.just(0.0), interval(-3.0, 3.0)))   # b == 0: see test_pow_mixed_...


# ================================================================================ 1. every op's rule
@dataclass(frozen=True)
class Case:
    fn: Callable
    args: st.SearchStrategy          # tuples of arguments, inside the op's smooth domain


# Python functions the tracer traces, one (or a few) per differentiable op
CASES = {
    "add": Case(lambda a, b: a + b, args(FREE, FREE)),
    "sub": Case(lambda a, b: a - b, args(FREE, FREE)),
    "mul": Case(lambda a, b: a * b, args(FREE, FREE)),
    "div": Case(lambda a, b: a / b, args(FREE, signed(0.5, 10.0))),
    "rdiv_const": Case(lambda x: 1.0 / x, one(signed(0.5, 10.0))),
    "neg": Case(lambda x: -x, one(FREE)),
    "pow": Case(lambda a, b: a ** b, POW_ARGS),
    "pow_float_const": Case(lambda x: x ** 1.5, one(POSITIVE)),
    "sqrt_as_pow": Case(lambda x: x ** 0.5, one(POSITIVE)),
    "square": Case(lambda x: x ** 2, one(FREE)),
    "cube": Case(lambda x: x ** 3, one(FREE)),
    "inverse_square": Case(lambda x: x ** -2, one(signed(0.5, 10.0))),
    "abs": Case(lambda x: abs(x), one(signed(0.1, 10.0))),
    "min": Case(lambda a, b: min(a, b), apart()),
    "max": Case(lambda a, b: max(a, b), apart()),
    "sqrt": Case(lambda x: math.sqrt(x), one(POSITIVE)),
    "exp": Case(lambda x: math.exp(x), one(interval(-5.0, 5.0))),
    "log": Case(lambda x: math.log(x), one(POSITIVE)),
    "log2": Case(lambda x: math.log2(x), one(POSITIVE)),
    "log10": Case(lambda x: math.log10(x), one(POSITIVE)),
    "log1p": Case(lambda x: math.log1p(x), one(interval(-0.9, 10.0))),
    "expm1": Case(lambda x: math.expm1(x), one(interval(-5.0, 5.0))),
    "sin": Case(lambda x: math.sin(x), one(FREE)),
    "cos": Case(lambda x: math.cos(x), one(FREE)),
    "tan": Case(lambda x: math.tan(x), one(interval(-1.2, 1.2))),
    "asin": Case(lambda x: math.asin(x), one(interval(-0.9, 0.9))),
    "acos": Case(lambda x: math.acos(x), one(interval(-0.9, 0.9))),
    "atan": Case(lambda x: math.atan(x), one(FREE)),
    "sinh": Case(lambda x: math.sinh(x), one(interval(-5.0, 5.0))),
    "cosh": Case(lambda x: math.cosh(x), one(interval(-5.0, 5.0))),
    "tanh": Case(lambda x: math.tanh(x), one(interval(-3.0, 3.0))),
    "fabs": Case(lambda x: math.fabs(x), one(signed(0.1, 10.0))),
    # atan2 jumps by 2 pi across y = 0 for x < 0: keep |y| >= 0.1 (which also avoids the origin)
    "atan2": Case(lambda y, x: math.atan2(y, x), args(signed(0.1, 10.0), FREE)),
    "copysign": Case(lambda a, b: math.copysign(a, b), args(signed(0.1, 10.0), signed(0.1, 10.0))),
    "fmod": Case(lambda a, b: math.fmod(a, b), quotient_pair()),
    "mod": Case(lambda a, b: a % b, quotient_pair()),
    "hypot": Case(lambda a, b: math.hypot(a, b), args(signed(0.1, 10.0), FREE)),
    "math_pow": Case(lambda a, b: math.pow(a, b), POW_ARGS),
    # rounding is piecewise constant: zero gradient away from the jumps
    "floor": Case(lambda x: math.floor(x) * 1.0, one(off_integer())),
    "ceil": Case(lambda x: math.ceil(x) + 0.5, one(off_integer())),
    "trunc": Case(lambda x: math.trunc(x) * 2.0, one(off_integer())),
    "round": Case(lambda x: round(x) * 1.0, one(OFF_HALF)),
    "floordiv": Case(lambda a, b: a // b, quotient_pair()),
    "floor_via_mod": Case(lambda x: x - x % 1.0, one(off_integer())),
    "floor_times_x": Case(lambda x: math.floor(x) * x, one(off_integer())),
    # compositions (no control flow): shared subexpressions, chains, several arguments
    "poly": Case(lambda x, y: 3.0 * x * x * y - 2.0 * y ** 3 + x / y, args(FREE, signed(0.5, 10.0))),
    "sigmoid": Case(lambda x: 1.0 / (1.0 + math.exp(-x)), one(interval(-8.0, 8.0))),
    "softplus": Case(lambda x: math.log1p(math.exp(x)), one(interval(-8.0, 8.0))),
    "logsumexp": Case(lambda x, y: math.log(math.exp(x) + math.exp(y)), args(interval(-5.0, 5.0),
                                                                              interval(-5.0, 5.0))),
    "gauss_wave": Case(lambda x, y: math.exp(-(x * x + y * y) / 2.0) * math.cos(x * y),
                       args(interval(-3.0, 3.0), interval(-3.0, 3.0))),
    "smooth_norm": Case(lambda x, y: math.sqrt(x * x + y * y + 1.0) * math.tanh(x - y),
                        args(interval(-3.0, 3.0), interval(-3.0, 3.0))),
    "chain": Case(lambda x: math.sin(math.cos(math.atan(x) * 1.3)), one(FREE)),
    "reuse": Case(lambda x: x * x * x * x - x * x, one(interval(-3.0, 3.0))),
    "three_args": Case(lambda x, y, z: x * y + y * z * math.sin(z) + z * x / (1.0 + y * y),
                       args(interval(-3.0, 3.0), interval(-3.0, 3.0), interval(-3.0, 3.0))),
    "polar": Case(lambda r, t: math.hypot(r * math.cos(t), r * math.sin(t)) + math.atan2(r, 2.0 + t * t),
                  args(interval(0.5, 5.0), FREE)),
}


@functools.cache
def gradient_of(name: str, fuse_fma: bool):
    """The compiled gradient of CASES[name] with respect to all its arguments (a tuple)."""
    fn = CASES[name].fn
    return grad(fn, tuple(range(arity(fn))), fuse_fma=fuse_fma)


@functools.cache
def hessian_rows_of(name: str, fuse_fma: bool):
    """Row i: grad(grad(f, i)) with respect to all arguments (so H[i][j] = d2 f / dx_i dx_j)."""
    fn = CASES[name].fn
    n = arity(fn)
    return [grad(grad(fn, i, fuse_fma=fuse_fma), tuple(range(n)), fuse_fma=fuse_fma) for i in range(n)]
