"""Tests for reverse-mode autodiff: `grad`, `value_and_grad` and `vjp` (tracer/gradients.py), the
IR -> IR transform (tracer/autodiff.py) and the derivative rules of the op table (the `vjp=` rules
in tracer/ops.py).

The oracle for derivatives is central finite differences of the plain Python function, run by
CPython, on inputs kept away from kinks and jumps (each op gets its own domain). The oracle for
errors is CPython too: where the forward raises, the gradient raises the same exception with the
same message. The choices at non-differentiable points (abs'(0) = 0, sqrt'(0) = inf, ...) are
the documented ones of tracer/ops.py (PyTorch's and JAX's).

Compiling is the slow part (tens of ms per function), and one compiled gradient handles every
float input, so each gradient object is made once per test (cached below) and the hypothesis
examples only call it.
"""
from __future__ import annotations

import functools
import math
import random
import re
import struct
from dataclasses import dataclass
from typing import Callable

import pytest
from hypothesis import given, settings, strategies as st

from ir_builder import Builder
from tracer import grad, ir, trace, value_and_grad, vjp
from tracer.ir import ops
from tracer.transforms.autodiff import NotDifferentiable, grad_function, vjp_functions
from tracer.dump import capture_trace
from tracer.gradients import NoFloatResult
from tracer.ir import F64
from tracer.transforms.passes import optimize

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


@FUSE
@pytest.mark.parametrize("name", CASES)
def test_first_derivative_matches_finite_differences(name, fuse_fma):
    case, gradient = CASES[name], gradient_of(name, fuse_fma)

    @EXAMPLES
    @given(case.args)
    def check(xs):
        grads = gradient(*xs)
        assert len(grads) == len(xs)
        scale = abs(case.fn(*xs))
        for i, g in enumerate(grads):
            fd = central_difference(case.fn, xs, i, FIRST["h"])
            assert_close(g, fd, rel=FIRST["rel"], abs_=FIRST["abs_"], scale=scale,
                         what=f"d {name} / d arg{i} at {xs}")
    check()
    assert len(gradient.specializations) == 1       # one compiled gradient served every example


@FUSE
@pytest.mark.parametrize("name", CASES)
def test_second_derivative_matches_finite_differences(name, fuse_fma):
    """grad(grad(f, i), j) against central differences of the compiled first derivative."""
    case, gradient, rows = CASES[name], gradient_of(name, fuse_fma), hessian_rows_of(name, fuse_fma)

    @EXAMPLES
    @given(case.args)
    def check(xs):
        hessian = [row(*xs) for row in rows]
        scale = max(abs(g) for g in gradient(*xs))
        for j in range(len(xs)):
            column = central_difference(gradient, xs, j, SECOND["h"])
            for i in range(len(xs)):
                assert_close(hessian[i][j], column[i], rel=SECOND["rel"], abs_=SECOND["abs_"], scale=scale,
                             what=f"d2 {name} / d arg{i} d arg{j} at {xs}")
    check()


def test_rounding_gives_an_exact_zero_gradient():
    for name in ["floor", "ceil", "trunc", "round", "floordiv"]:
        fn = CASES[name].fn
        grads = gradient_of(name, True)(*[2.3] * arity(fn))
        assert all(g == 0.0 for g in grads), (name, grads)


# --------------------------------------------------------------- the same, op by op on the IR
# Every op with a derivative rule, built by hand and run by the IR interpreter (`ops.run`): this
# reaches the ops Python code never produces directly (fdiv, ieee_pow and ieee_log, which autodiff
# itself emits, fma from the fusion pass, select, floor ...), with no compiling.
def _f64_arity(op) -> int | None:
    """The number of operands with which `op`'s type rule takes all-f64 operands to an f64."""
    for n in (1, 2, 3):
        try:
            if op.result_type((F64,) * n, {}) == F64:
                return n
        except Exception:       # no overload, or a structural op that needs attrs
            pass
    return None


STRUCTURAL = {"param", "const", "tuple", "getitem"}
OPS_F64_ARITY = {name: (F64,) * n for name, op in ops.OPS.items()
                 if name not in STRUCTURAL and (n := _f64_arity(op)) is not None}


# ops on arrays only: their rules are checked in tests/test_array_ops.py
ARRAY_ONLY_OPS = {"load", "index", "broadcast_in_dim", "transpose", "reduce", "argreduce", "matmul", "full",
                  "iota", "pack", "copy", "reshape", "store", "writeback", "slice"}


@dataclass(frozen=True)
class IRCase:
    args: st.SearchStrategy
    build: Callable | None = None    # (builder, *params) -> result; default: the op on the params


def _select_min(b, x, y):
    return b.op("select", b.op("lt", x, y), x, y)


IR_CASES = {
    "add": IRCase(args(FREE, FREE)),
    "sub": IRCase(args(FREE, FREE)),
    "mul": IRCase(args(FREE, FREE)),
    "div": IRCase(args(FREE, signed(0.5, 10.0))),
    "fdiv": IRCase(args(FREE, signed(0.5, 10.0))),
    "floordiv": IRCase(quotient_pair()),
    "mod": IRCase(quotient_pair()),
    "pow": IRCase(POW_ARGS),
    "ieee_pow": IRCase(POW_ARGS),
    "math_pow": IRCase(POW_ARGS),
    "neg": IRCase(one(FREE)),
    "abs": IRCase(one(signed(0.1, 10.0))),
    "fabs": IRCase(one(signed(0.1, 10.0))),
    "min": IRCase(apart()),
    "max": IRCase(apart()),
    "maximum": IRCase(apart()),
    "minimum": IRCase(apart()),
    "fma": IRCase(args(FREE, FREE, FREE)),
    "select": IRCase(apart(), _select_min),
    "sqrt": IRCase(one(POSITIVE)),
    "exp": IRCase(one(interval(-5.0, 5.0))),
    "log": IRCase(one(POSITIVE)),
    "ieee_log": IRCase(one(POSITIVE)),
    "log2": IRCase(one(POSITIVE)),
    "log10": IRCase(one(POSITIVE)),
    "log1p": IRCase(one(interval(-0.9, 10.0))),
    "expm1": IRCase(one(interval(-5.0, 5.0))),
    "sin": IRCase(one(FREE)),
    "cos": IRCase(one(FREE)),
    "tan": IRCase(one(interval(-1.2, 1.2))),
    "asin": IRCase(one(interval(-0.9, 0.9))),
    "acos": IRCase(one(interval(-0.9, 0.9))),
    "atan": IRCase(one(FREE)),
    "sinh": IRCase(one(interval(-5.0, 5.0))),
    "cosh": IRCase(one(interval(-5.0, 5.0))),
    "tanh": IRCase(one(interval(-3.0, 3.0))),
    "atan2": IRCase(args(signed(0.1, 10.0), FREE)),
    "copysign": IRCase(args(signed(0.1, 10.0), signed(0.1, 10.0))),
    "fmod": IRCase(quotient_pair()),
    "hypot": IRCase(args(signed(0.1, 10.0), FREE)),
    "floor": IRCase(one(off_integer())),
    "ceil": IRCase(one(off_integer())),
    "trunc": IRCase(one(off_integer())),
    "round_even": IRCase(one(OFF_HALF)),
}


def ir_function(name: str) -> ir.Function:
    """The op applied to f64 parameters (select: `x if x < y else y`)."""
    case = IR_CASES[name]
    n = 2 if name == "select" else len(OPS_F64_ARITY[name])
    b = Builder(*[F64] * n, name=name)
    build = case.build or (lambda builder, *ps: builder.op(name, *ps))
    return b.function(build(b, *b.params))


def interpreted(fn: ir.Function, fuse_fma: bool):
    """`fn` after the passes, as a Python callable through the IR interpreter."""
    optimized = ir.verify(optimize(fn, fuse_fma))
    return lambda *xs: ops.run(optimized, list(xs))


@FUSE
@pytest.mark.parametrize("name", IR_CASES)
def test_op_rule_first_and_second_order_on_ir(name, fuse_fma):
    fn = ir_function(name)
    n = len(fn.params)
    forward = interpreted(fn, fuse_fma)
    first = interpreted(grad_function(fn, list(range(n)), as_tuple=True), fuse_fma)
    rows = [interpreted(grad_function(grad_function(fn, [i]), list(range(n)), as_tuple=True), fuse_fma)
            for i in range(n)]

    @EXAMPLES
    @given(IR_CASES[name].args)
    def check(xs):
        grads = first(*xs)
        for i in range(n):
            fd = central_difference(forward, xs, i, FIRST["h"])
            assert_close(grads[i], fd, rel=FIRST["rel"], abs_=FIRST["abs_"], scale=abs(forward(*xs)),
                         what=f"d {name} / d arg{i} at {xs}")
        scale = max(abs(g) for g in grads)
        for j in range(n):
            column = central_difference(first, xs, j, SECOND["h"])
            for i in range(n):
                assert_close(rows[i](*xs)[j], column[i], rel=SECOND["rel"], abs_=SECOND["abs_"],
                             scale=scale, what=f"d2 {name} / d arg{i} d arg{j} at {xs}")
    check()


# ================================================================================ 2. rule coverage
def test_every_f64_op_has_a_derivative_rule():
    """An op that maps f64 operands to an f64 is differentiable in principle, so it needs a
    `vjp` entry (one rule per operand; None for a piecewise-constant operand). A new op without
    one fails here rather than at the first grad() that meets it."""
    assert {"add", "sin", "fma", "floor", "hypot"} <= set(OPS_F64_ARITY)      # the probe works
    missing = [name for name in OPS_F64_ARITY if ops.OPS[name].vjp is None]
    assert not missing, f"ops without a vjp rule: {missing}"
    wrong_arity = [name for name, types in OPS_F64_ARITY.items() if len(ops.OPS[name].vjp) != len(types)]
    assert not wrong_arity, f"ops whose vjp has not one rule per operand: {wrong_arity}"


def test_every_op_with_a_rule_is_checked_against_finite_differences():
    """... and the rule is checked: every op with a vjp has an entry in IR_CASES above."""
    with_rules = {name for name, op in ops.OPS.items() if op.vjp is not None and name not in ARRAY_ONLY_OPS}
    assert with_rules - set(IR_CASES) == set(), "add these ops to IR_CASES"
    assert set(OPS_F64_ARITY) <= set(IR_CASES)


# ================================================================================ 3. kinks
def test_abs_and_fabs_have_zero_gradient_at_zero():
    assert grad(lambda x: abs(x))(0.0) == 0.0
    assert grad(lambda x: math.fabs(x))(0.0) == 0.0
    # sign(x) keeps the sign of a zero (x * 0.0), so the gradient at -0.0 is -0.0
    assert bits(grad(lambda x: abs(x))(-0.0)) == bits(-0.0)


def test_min_max_gradient_follows_the_operand_python_returns():
    # Python's max/min return the first argument on a tie; the gradient goes to that operand
    for op in (max, min):
        assert grad(lambda x: op(0.0, x))(0.0) == 0.0
        assert grad(lambda x: op(x, 0.0))(0.0) == 1.0
        assert grad(lambda x, y: op(x, y), (0, 1))(1.5, 1.5) == (1.0, 0.0)


def test_sqrt_and_half_power_have_infinite_slope_at_zero():
    assert grad(lambda x: math.sqrt(x))(0.0) == math.inf
    assert grad(lambda x: x ** 0.5)(0.0) == math.inf


def test_gradient_of_zero_to_a_power_with_respect_to_the_exponent_is_zero():
    # d(a ** b)/db = a ** b * log(a): 0 * -inf is NaN, JAX defines it as 0
    for power in (lambda a, b: a ** b, lambda a, b: math.pow(a, b)):
        for b in (2.0, 0.5, 0.0):
            assert grad(power, 1)(0.0, b) == 0.0
    assert grad(lambda x: x ** 0)(0.0) == 0.0           # x ** 0 is the constant 1
    assert grad(lambda x: x ** 2)(0.0) == 0.0
    assert grad(lambda x: x ** 1.0)(0.0) == 1.0


@pytest.mark.parametrize("power", [lambda a, b: a ** b, lambda a, b: math.pow(a, b)], ids=["**", "math.pow"])
def test_pow_mixed_second_derivative_at_zero_exponent(power):
    # the base rule selects 0 only where a == b == 0, so it stays differentiable in b at b == 0;
    # a ** b is smooth at b = 0 for a > 0: d/db (b * a ** (b - 1)) = a ** (b - 1) * (1 + b log a) = 1/a
    assert grad(grad(power, 1), 0)(2.0, 0.0) == 0.5
    assert grad(grad(power, 0), 1)(2.0, 0.0) == 0.5


def test_atan2_gradient_for_tiny_and_huge_arguments():
    g = grad(lambda y, x: math.atan2(y, x), (0, 1))
    for y, x in [(1e-200, 1e-200), (1e-160, 2e-160), (1e200, 1e200)]:
        r = math.hypot(x, y)
        assert g(y, x) == pytest.approx((x / r / r, -y / r / r), rel=1e-12), (y, x)


def test_unused_argument_and_constant_function_have_zero_gradient():
    assert grad(lambda x, y: x * 2.0, 1)(1.0, 2.0) == 0.0
    assert grad(lambda x: 2.0)(1.0) == 0.0
    assert grad(lambda x: x)(3.0) == 1.0
    assert grad(lambda x, y: x * y, (0, 0))(2.0, 3.0) == (3.0, 3.0)     # repeated argnums


# ================================================================================ 4. errors like CPython
def _log(x):
    return math.log(x)


def _dead_log(x):
    return x + 0.0 * math.log(x)      # the log is unused by the gradient, but CPython runs it


RAISING = {                                     # label: (function, arguments at which it raises)
    "1/x at 0": (lambda x: 1.0 / x, (0.0,)),
    "log at 0": (_log, (0.0,)),
    "log at -1": (_log, (-1.0,)),
    "sqrt at -1": (lambda x: math.sqrt(x), (-1.0,)),
    "unused log at -1": (_dead_log, (-1.0,)),
    "asin at 2": (lambda x: math.asin(x), (2.0,)),
    "exp overflow": (lambda x: math.exp(x), (1000.0,)),
    "cosh overflow": (lambda x: math.cosh(x) * x, (800.0,)),
    "** overflow": (lambda x: x ** 2.0, (1e200,)),
    "0 ** -1": (lambda x: x ** -1.0, (0.0,)),
    "% 0": (lambda x, y: x % y, (1.0, 0.0)),
    "// 0": (lambda x, y: x // y, (1.0, 0.0)),
    "fmod by 0": (lambda x, y: math.fmod(x, y), (1.0, 0.0)),
}


@pytest.mark.parametrize("label", RAISING)
def test_gradient_raises_what_python_raises(label):
    fn, xs = RAISING[label]
    expected = python_outcome(fn, *xs)          # ("raise", type, message)
    assert expected[0] == "raise"
    n = arity(fn)
    for transformed in (grad(fn), grad(fn, tuple(range(n))), value_and_grad(fn), grad(grad(fn))):
        assert python_outcome(transformed, *xs) == expected
    assert python_outcome(lambda: vjp(fn, *xs)) == expected


def test_complex_power_has_no_float_gradient():
    # CPython gives a complex number; there is no float derivative to give
    f = lambda x: x ** (1.0 / 3.0)
    assert isinstance(f(-8.0), complex)
    with pytest.raises(NoFloatResult):
        grad(f)(-8.0)
    assert issubclass(NoFloatResult, ArithmeticError)


# ================================================================================ 5. seed expression
def seed(a, b, c):
    return -a * b + (c - a / b) * (a + b) * c - (b * c - a) / (a + c) + b * b * c / a


def seed_partials(a, b, c):
    """By hand, term by term (u = c - a/b, v = a + b, N = b c - a, D = a + c):
         -a b               -> (-b, -a, 0)
         u v c              -> (-v c / b + u c,  (a / b**2) v c + u c,  v c + u v)
         -N / D             -> ((D + N) / D**2 = c (1 + b) / D**2,  -c / D,  -(b D - N) / D**2 = -a (1 + b) / D**2)
         b b c / a          -> (-b b c / a**2,  2 b c / a,  b b / a)
    Returns the partials and, for each, the sum of its terms' magnitudes (the scale of its
    rounding error: a sum with cancellation is only accurate relative to its terms)."""
    u, v, d2 = c - a / b, a + b, (a + c) ** 2
    da = [-b, -v * c / b, u * c, c * (1 + b) / d2, -b * b * c / (a * a)]
    db = [-a, a / (b * b) * v * c, u * c, -c / (a + c), 2 * b * c / a]
    dc = [v * c, u * v, -a * (1 + b) / d2, b * b / a]
    return tuple((sum(t), sum(abs(x) for x in t)) for t in (da, db, dc))


def seed_points(count=300, rng=random.Random(20240611)):
    """Points in [-4, 4]**3 away from the poles a = 0, b = 0, a + c = 0."""
    points = []
    while len(points) < count:
        a, b, c = (rng.uniform(-4.0, 4.0) for _ in range(3))
        if min(abs(a), abs(b), abs(a + c)) > 0.3:
            points.append((a, b, c))
    return points


SEED_POINTS = seed_points()


def test_seed_partials_by_hand_agree_with_finite_differences():
    """Checks the closed form itself, independently of the compiler."""
    for point in SEED_POINTS[:60]:
        partials = seed_partials(*point)
        for i, (partial, _) in enumerate(partials):
            fd = central_difference(seed, point, i, FIRST["h"])
            assert_close(partial, fd, rel=FIRST["rel"], abs_=FIRST["abs_"], scale=abs(seed(*point)),
                         what=f"closed-form d seed / d arg{i} at {point}")


@FUSE
def test_seed_value_and_gradient_match_the_closed_form(fuse_fma):
    value_and_gradient = value_and_grad(seed, (0, 1, 2), fuse_fma=fuse_fma)
    for a, b, c in SEED_POINTS:
        value, grads = value_and_gradient(a, b, c)
        expected = seed(a, b, c)
        if fuse_fma:
            magnitude = abs(a * b) + abs((c - a / b) * (a + b) * c) + abs((b * c - a) / (a + c)) + abs(b * b * c / a)
            assert abs(value - expected) <= 1e-12 * magnitude, (a, b, c)
        else:
            assert bits(value) == bits(expected), (a, b, c, value, expected)   # CPython's rounding
        for i, (g, (partial, magnitude)) in enumerate(zip(grads, seed_partials(a, b, c))):
            assert abs(g - partial) <= 1e-9 * magnitude, (i, a, b, c, g, partial)


# ================================================================================ 6. API errors
def test_grad_with_respect_to_int_or_bool_argument_is_a_type_error():
    with pytest.raises(TypeError, match="'count'"):
        grad(lambda x, count: x * count, 1)(2.0, 3)
    with pytest.raises(TypeError, match="'flag'"):
        grad(lambda x, flag: x * flag, 1)(2.0, True)
    # an int argument that is not differentiated is fine (constant for the derivative)
    assert grad(lambda x, count: x * count)(2.0, 3) == 3.0


def test_grad_of_a_tuple_output_is_not_differentiable():
    assert issubclass(NotDifferentiable, TypeError)
    with pytest.raises(NotDifferentiable, match="vjp"):
        grad(lambda x: (x, x * x))(2.0)


def test_grad_of_an_int_output_is_a_type_error():
    with pytest.raises(TypeError, match="int"):
        grad(lambda x, n: n * 2)(2.0, 3)
    with pytest.raises(TypeError, match="bool"):
        grad(lambda x: x > 1.0)(2.0)


def test_argnums_out_of_range_is_a_value_error():
    f = lambda x, y: x * y
    for argnums in (2, -3, (0, 2), 1.0, ()):
        with pytest.raises(ValueError):
            grad(f, argnums)
    assert grad(f, -1)(2.0, 3.0) == 2.0      # negative argnums count from the end, like JAX


def test_vjp_with_an_int_argument_is_a_type_error():
    with pytest.raises(TypeError, match="'n'"):
        vjp(lambda x, n: x * n, 2.0, 3)
    with pytest.raises(TypeError, match="closure"):      # vjp has no argnums to leave n out of
        vjp(lambda x, n: x * n, 2.0, 3)


def test_pullback_checks_the_cotangent_shape():
    _, pullback = vjp(lambda x, y: x * y, 2.0, 3.0)
    assert pullback(1.0) == (3.0, 2.0)
    for wrong in (1, True, (1.0,), None):
        with pytest.raises(TypeError):
            pullback(wrong)
    _, pullback = vjp(lambda x, y: (x * y, math.sin(x)), 2.0, 3.0)
    for wrong in (1.0, (1.0,), (1.0, 2.0, 3.0), [1.0, 2.0], (1.0, 2)):
        with pytest.raises(TypeError):
            pullback(wrong)


def test_vjp_of_a_tuple_output():
    x, y = 2.0, 3.0
    value, pullback = vjp(lambda x, y: (x * y, math.sin(x), 7), x, y)
    assert value == (x * y, math.sin(x), 7)
    gx, gy = pullback((2.0, 3.0, 0))          # the int leaf's cotangent is ignored
    assert math.isclose(gx, 2.0 * y + 3.0 * math.cos(x), rel_tol=1e-15)
    assert gy == 2.0 * x
    assert pullback((1.0, 0.0, 5)) == (y, x)


@pytest.mark.parametrize("name", CASES)
def test_vjp_pullback_matches_grad(name):
    """The split forward/backward (vjp_functions) computes the joint function's gradient: with
    fusion off the passes are exact, so they agree bit for bit."""
    case, gradient = CASES[name], gradient_of(name, False)
    unfused = trace(case.fn, fuse_fma=False)          # vjp takes fuse_fma from the function

    @settings(max_examples=10, deadline=None)
    @given(case.args, interval(-3.0, 3.0))
    def check(xs, ct):
        value, pullback = vjp(unfused, *xs)
        assert bits(value) == bits(case.fn(*xs))
        expected = gradient(*xs)
        assert [bits(g) for g in pullback(1.0)] == [bits(g) for g in expected]
        for g, e in zip(pullback(ct), expected):       # linear in the cotangent
            assert_close(g, ct * e, rel=1e-12, abs_=1e-10, scale=max(abs(x) for x in expected))
    check()


def test_pullbacks_keep_their_own_residuals():
    f = lambda x: math.sin(x) * x
    _, first = vjp(f, 1.0)
    _, second = vjp(f, 2.0)
    assert first(1.0) == pytest.approx((math.cos(1.0) + math.sin(1.0),), rel=1e-15)
    assert second(1.0) == pytest.approx((2.0 * math.cos(2.0) + math.sin(2.0),), rel=1e-15)


def test_vjp_of_an_int_output_is_not_differentiable():
    with pytest.raises(NotDifferentiable):
        vjp(lambda x: int(x), 2.5)


def test_vjp_matches_grad():
    f = CASES["three_args"].fn
    xs = (0.7, -1.3, 2.1)
    value, pullback = vjp(f, *xs)
    assert value == pytest.approx(f(*xs), rel=1e-14)
    assert pullback(1.0) == pytest.approx(gradient_of("three_args", True)(*xs), rel=1e-14)
    scaled = pullback(-2.5)
    assert scaled == pytest.approx(tuple(-2.5 * g for g in pullback(1.0)), rel=1e-14)


def test_transforms_compose_with_trace():
    f = lambda x, y: x * math.sin(y) + y / x
    expected = grad(f, (0, 1))(2.0, 1.0)
    assert trace(grad(f, (0, 1)))(2.0, 1.0) == expected
    assert grad(trace(f), (0, 1))(2.0, 1.0) == expected
    assert expected == pytest.approx((math.sin(1.0) - 1.0 / 4.0, 2.0 * math.cos(1.0) + 0.5), rel=1e-15)
    assert grad(trace(f, fuse_fma=False)).fuse_fma is False       # the wrapped function's setting


def test_grad_of_value_and_grad_is_not_differentiable():
    with pytest.raises(NotDifferentiable):
        grad(value_and_grad(lambda x: x * x))(2.0)


def test_third_derivative():
    third = grad(grad(grad(lambda x: x ** 4)))
    for x in (-2.5, -1.0, 0.0, 0.3, 2.0, 7.0):
        assert math.isclose(third(x), 24.0 * x, rel_tol=1e-14, abs_tol=1e-14)


# ================================================================================ 7. through the passes
def fused_example(x, y, z):
    return math.sin(x * y + z)


def ops_in_dump(text: str) -> list[str]:
    """The op column of `dump(stage="opt")` (not the source column, which quotes the code)."""
    return [m.group(1) for m in re.finditer(r"^\s+%\d+\s+(\w+)\s", text, re.MULTILINE)]


def test_gradient_is_optimized_with_fma_fusion():
    fused = ops_in_dump(grad(fused_example).dump(2.0, 3.0, 1.0, stage="opt"))
    unfused = ops_in_dump(grad(fused_example, fuse_fma=False).dump(2.0, 3.0, 1.0, stage="opt"))
    assert "fma" in fused and "cos" in fused
    assert "fma" not in unfused and "mul" in unfused
    assert grad(fused_example)(2.0, 3.0, 1.0) == pytest.approx(3.0 * math.cos(7.0), rel=1e-15)


def test_joint_function_ir_verifies_and_matches_the_compiled_gradient():
    xs = (0.7, -1.3, 2.1)
    fn = capture_trace(CASES["three_args"].fn, xs).function
    joint = ir.verify(grad_function(fn, [0, 1, 2], with_value=True, as_tuple=True))
    assert [v.op for v in joint.body.values][:len(fn.body.values)] == [v.op for v in fn.body.values]
    for fuse_fma in (True, False):
        ir.verify(optimize(joint, fuse_fma))
    # fusion off, the passes are exact: interpreter and native code agree bit for bit
    compiled = value_and_grad(CASES["three_args"].fn, (0, 1, 2), fuse_fma=False)(*xs)
    interpreted_result = ops.run(joint, list(xs))
    assert [bits(v) for v in (compiled[0], *compiled[1])] == \
           [bits(v) for v in (interpreted_result[0], *interpreted_result[1])]
    forward, backward = vjp_functions(fn, [0, 1, 2])
    ir.verify(forward), ir.verify(backward)


def test_grad_function_on_hand_built_ir():
    b = Builder(F64, F64)
    x, y = b.params
    fn = b.function(b.op("mul", b.op("sin", x), y))            # sin(x) * y
    for with_value in (False, True):
        g = ir.verify(grad_function(fn, [0, 1], with_value=with_value, as_tuple=True))
        result = ops.run(g, [0.5, 3.0])
        grads = result[1] if with_value else result
        assert grads == (math.cos(0.5) * 3.0, math.sin(0.5))
        if with_value:
            assert result[0] == math.sin(0.5) * 3.0
    single = ir.verify(grad_function(fn, [1]))
    assert single.result_type == F64 and ops.run(single, [0.5, 3.0]) == math.sin(0.5)


def test_a_quotient_costs_one_division_in_the_backward():
    """d(a/b)/db is written -(ct/b) * (a/b), so CSE shares ct/b with d(a/b)/da: seed 004's `d`
    (three quotients) has its three forward divisions and three more, not six."""
    dump = value_and_grad(seed, (0, 1, 2)).dump(1.5, 2.0, 3.0, stage="opt")
    divisions = [op for op in ops_in_dump(dump) if op in ("div", "fdiv")]
    assert divisions.count("div") == 3 and divisions.count("fdiv") == 3
