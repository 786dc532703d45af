"""`grad(f)` (tracer.gradients) called inside a `@trace`d function is differentiated while tracing (as `jax.grad`
inside `jax.jit`): the caller's native code computes the gradient. Oracle: the same gradient
computed outside any trace, which tests/ir/test_derivative_rules.py checks against finite differences."""
import math

import pytest

from tracer import TracerError, grad, trace, value_and_grad


def rosenbrock(x, y):
    return (1.0 - x) ** 2 + 100.0 * (y - x * x) ** 2


def test_a_gradient_step_compiles_to_one_native_function():
    @trace(fuse_fma=False)
    def step(x, y, lr):
        gx, gy = grad(rosenbrock, (0, 1))(x, y)
        return x - lr * gx, y - lr * gy

    gx, gy = grad(rosenbrock, (0, 1), fuse_fma=False)(-1.2, 1.0)
    assert step(-1.2, 1.0, 1e-3) == (-1.2 - 1e-3 * gx, 1.0 - 1e-3 * gy)
    (spec,) = step.specializations
    assert spec.fast                                     # no Python runs per call
    assert "fdiv" not in str(spec.optimized) and " mul " in str(spec.optimized)


def test_value_and_grad_and_second_derivatives_inside_a_trace():
    @trace
    def f(x):
        v, g = value_and_grad(lambda a: a * a * a)(x)
        return v + g + grad(grad(math.sin))(x)          # a builtin, twice differentiated

    assert f(2.0) == pytest.approx(8.0 + 12.0 - math.sin(2.0), rel=1e-15)


def test_grad_of_a_function_that_calls_grad():
    def slope(x, y):
        return grad(rosenbrock, 1)(x, y) * x             # d/dy, then used in a new function

    expected = 200.0 * (3.0 - 1.5 * 1.5) * 1.5
    assert slope(1.5, 3.0) == pytest.approx(expected)
    # d/dx of 200 (y - x^2) x = 200 y - 600 x^2
    assert grad(slope)(1.5, 3.0) == pytest.approx(200.0 * 3.0 - 600.0 * 1.5 * 1.5)
    assert trace(slope)(1.5, 3.0) == pytest.approx(expected)


def test_repeated_argnums_and_constant_arguments():
    @trace
    def f(x):
        return grad(lambda a, b: a * b, (0, 0, 1))(x, 2.0)

    assert f(3.0) == (2.0, 2.0, 3.0) == grad(lambda a, b: a * b, (0, 0, 1))(3.0, 2.0)


def test_an_argument_passed_twice_gets_each_use_its_own_gradient():
    @trace
    def f(x):
        return grad(lambda a, b: a * a * b, (0, 1))(x, x)

    assert f(3.0) == (18.0, 9.0)


def test_differentiating_an_int_inside_a_trace_is_a_type_error():
    @trace
    def f(x, n):
        return grad(lambda a, m: a * m, 1)(x, n)

    with pytest.raises(TypeError, match="'m'.* int"):
        f(1.0, 2)


def test_a_tuple_result_inside_a_trace_is_a_type_error():
    @trace
    def f(x):
        return grad(lambda a: (a, a))(x)

    with pytest.raises(TypeError, match="return a float"):
        f(1.0)


def test_argnums_must_be_constants():
    @trace(fullgraph=True)
    def f(x, k):
        return grad(lambda a, b: a * b, k)(x, x)

    with pytest.raises(TracerError):
        f(1.0, 2.5)


def test_grad_called_inside_a_plain_python_run_gives_the_gradient():
    """A compiled function that falls back to Python runs its body plainly; a `grad` called
    there must still compile and give the gradient (not run the function for its value)."""
    import math

    from tracer import grad
    from tracer.frontend.capture import run_plain
    assert run_plain(lambda x: grad(math.sin)(x), 1.0) == math.cos(1.0)
