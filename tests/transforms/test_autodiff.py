"""Reverse-mode autodiff, the IR -> IR transform (tracer.transforms.autodiff): gradients at kinks,
errors where CPython raises, a closed-form seed expression, and the joint function through the
passes (tracer.transforms.passes).

The oracle for derivatives is central finite differences of the plain Python function, run by
CPython, on inputs kept away from kinks and jumps. The oracle for errors is CPython too: where
the forward raises, the gradient raises the same exception with the same message.
"""
from __future__ import annotations

import math
import random
import re

import pytest
from gradient_checks import CASES, FIRST, FUSE, arity, assert_close, bits, central_difference, python_outcome
from ir_builder import Builder

from tracer import grad, ir, value_and_grad, vjp
from tracer.dump import capture_trace
from tracer.gradients import NoFloatResult
from tracer.ir import F64, ops
from tracer.transforms.autodiff import grad_function, vjp_functions
from tracer.transforms.passes import optimize


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


def seed_points(count=300, seed=20240611):
    """Points in [-4, 4]**3 away from the poles a = 0, b = 0, a + c = 0."""
    rng = random.Random(seed)
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
