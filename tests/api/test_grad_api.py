"""`grad`, `value_and_grad` and `vjp` (tracer.gradients): argument and output checks with Python's
errors, pullbacks and their cotangents, and the transforms composed with `trace` and each other.
"""
from __future__ import annotations

import math

import pytest
from gradient_checks import CASES, gradient_of

from tracer import grad, trace, value_and_grad, vjp
from tracer.transforms.autodiff import NotDifferentiable


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
