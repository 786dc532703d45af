"""Gradients through compiled loops: the tape (tracer.transforms.autodiff._backpropagate_loop).

A loop that stays a loop under `grad` (a `while` on floats, a range longer than
branches.AUTODIFF_UNROLL_LIMIT, a range with a traced bound) saves each iteration's carried
values on a tape and runs a backward loop over it. Each function here is checked against central
finite differences; the IR checks make sure the loop was not unrolled.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from oracle import central_difference, close, outcome, same_outcome

from tracer import grad, trace, value_and_grad
from tracer.dump import capture_trace
from tracer.errors import UnsupportedError
from tracer.ir import ops
from tracer.transforms.autodiff import grad_function


def newton_sqrt(x):
    r = x if x > 1.0 else 1.0
    while abs(r * r - x) > 1e-14 * x:
        r = 0.5 * (r + x / r)
    return r


def long_range(x):
    s = 0.0
    for i in range(5000):
        s = s + math.sin(x * s + i * 1e-3) * 1e-3
    return s


def traced_bound(x, n):
    acc = x
    for _ in range(n):
        acc = acc * 0.9 + math.cos(acc) * x
    return acc


def nested_loops(x, y):
    total = 0.0
    for i in range(100):             # longer than the unroll limit: a loop with a tape
        t = x
        while t > y:                 # an inner loop: its own tape, inside the backward loop
            t = t * 0.5 + 0.001 * i
        total = total + t * t
    return total


def loop_in_branch(x):
    if x > 0.0:
        while x > 0.01:
            x = x * x * 0.5 + x * 0.1
        return x
    return x * 3.0


def int_and_bool_carried(x):
    steps = 0
    flip = False
    while x < 100.0:
        x = x * 1.5 + (1.0 if flip else 2.0)
        flip = not flip
        steps += 1
    return x * steps


def free_values_read(x, y):
    r = 1.0
    while r < 1000.0:
        r = r * x + y * y        # x and y are read by every iteration: their gradients add up
    return r


def raises_midway(x):
    s = 1.0
    for _ in range(200):
        s = s * x
        if s > 1e6:
            raise ValueError("too big")
    return s


CASES = [
    (newton_sqrt, [(2.0,), (0.3,), (1e4,)], (0,)),
    (long_range, [(0.5,), (-1.25,)], (0,)),
    (traced_bound, [(0.4, 30), (0.7, 200)], (0,)),
    (nested_loops, [(3.0, 1.0), (5.0, 0.7)], (0, 1)),
    (loop_in_branch, [(0.9,), (1.5,), (-2.0,)], (0,)),
    (int_and_bool_carried, [(1.0,), (3.3,)], (0,)),
    (free_values_read, [(1.5, 0.5), (2.0, 1.25)], (0, 1)),
]


@pytest.mark.parametrize("fn, points, argnums", CASES, ids=[c[0].__name__ for c in CASES])
def test_gradient_matches_finite_differences(fn, points, argnums):
    g = grad(fn, argnums)
    for args in points:
        got = g(*args)
        for i, gi in zip(argnums, got):
            expected = central_difference(fn, args, i)
            assert close(gi, expected, 1e-5, 1e-7), (fn.__name__, args, i, gi, expected)


@pytest.mark.parametrize("fn, points, argnums", CASES, ids=[c[0].__name__ for c in CASES])
def test_value_is_exact_and_the_ir_interpreter_agrees(fn, points, argnums):
    """value_and_grad's value is CPython's bit for bit (fusion off), and running the joint IR
    (tape ops included) in `tracer.ir.ops.run` gives the compiled gradient."""
    vg = value_and_grad(fn, argnums, fuse_fma=False)
    for args in points:
        value, gradient = vg(*args)
        assert value == fn(*args)
        joint = grad_function(capture_trace(fn, args).function, list(argnums), with_value=True, as_tuple=True)
        assert len(joint.params) == len(args)
        assert ops.run(joint, list(args)) == (value, gradient)


def test_the_loop_is_not_unrolled():
    joint = grad_function(capture_trace(long_range, (0.5,)).function, [0])
    assert sum(1 for _ in joint.walk()) < 150
    assert {"loop", "tape_push", "tape_get", "tape_free"} <= {v.op for v in joint.walk()}


def test_a_raise_after_some_iterations_is_cpythons():
    g = grad(raises_midway)
    assert same_outcome(outcome(g, (1.5,)), outcome(raises_midway, (1.5,)))
    assert close(g(1.01), central_difference(raises_midway, (1.01,), 0), 1e-5, 1e-7)


def test_many_calls_reuse_no_memory_growth_of_python_objects():
    g = grad(long_range)
    first = g(0.5)
    for _ in range(200):
        assert g(0.5) == first


def test_grad_inside_trace_uses_the_tape():
    @trace
    def step(x):
        return x - 0.1 * grad(newton_sqrt)(x)
    for x in (2.0, 9.0):
        assert close(step(x), x - 0.1 * central_difference(newton_sqrt, (x,), 0), 1e-6, 1e-9)


def test_second_order_through_a_compiled_loop_is_a_clear_error():
    gg = grad(grad(newton_sqrt))
    with pytest.raises(UnsupportedError, match="second-order gradients through a compiled loop"):
        gg(2.0)


# ------------------------------------------------------------------ arrays read inside loops
def pair_energy(x, k):
    """Nested loops reading x[i] and x[j], a branch on the elements, a negative index."""
    e = 0.0
    for i in range(len(x)):
        for j in range(i + 1, len(x)):
            d = x[j] - x[i]
            e += k * d * d if d > 0.0 else math.exp(d)
    return e + x[-1] * x[0]


def diagonal(A):
    t = 0.0
    for i in range(A.shape[0]):
        t += A[i, i] * A[i, 0]
    return t


def _numeric_gradient(f, x, *rest, eps=1e-6):
    g = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[index] = eps
        g[index] = (f(x + e, *rest) - f(x - e, *rest)) / (2 * eps)
    return g


def test_arrays_read_element_by_element_in_loops():
    """The gradient of an array read as x[i] inside (nested) loops and branches is added into
    one buffer as the backward loops run: against finite differences, and buffers made outside
    every loop."""
    rng = np.random.default_rng(3)
    x, A = rng.standard_normal(7), rng.standard_normal((4, 4))
    for f, arg, rest in [(pair_energy, x, (0.7,)), (diagonal, A, ())]:
        g = trace(grad(f))(arg, *rest)
        np.testing.assert_allclose(g, _numeric_gradient(f, arg, *rest), rtol=1e-6, atol=1e-8)
        fn = grad_function(capture_trace(f, (arg, *rest)).function, [0])
        fills = [v for v in fn.walk() if v.op == "full"]
        # buffers made outside every loop, not one per iteration (reads after the loops may get
        # a buffer of their own)
        assert 1 <= len(fills) <= 2 and all(f in fn.body.values for f in fills)


def whole_array_in_loop(x, n):
    s = 0.0
    for i in range(n):
        s += np.sum(x) * i
    return s


def test_an_array_used_whole_inside_a_loop_is_a_clear_error():
    with pytest.raises(UnsupportedError, match="array used whole inside a loop"):
        trace(grad(whole_array_in_loop))(np.ones(3), 100)
