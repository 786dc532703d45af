"""Argument arrays updated in place by the compiled code (tracer.transforms.passes.inplace): `W -= lr * g`
writes W's memory in one pass, with Python's results, and a failure still changes nothing."""
import os
import sys

import numpy as np
import pytest

from tracer import trace
from tracer.transforms.passes import count_in_place

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
from train_step import step


def weights(seed=0, n_in=30, hidden=12, n_out=5):
    rng = np.random.default_rng(seed)
    return [rng.normal(0.0, 0.2, (n_in, hidden)), np.zeros(hidden), rng.normal(0.0, 0.2, (hidden, n_out)), np.zeros(n_out)]


def numpy_step(W1, b1, W2, b2, x, y, lr):
    """The same train step with its backward written by hand, in NumPy."""
    a = x @ W1 + b1
    h = np.maximum(a, 0.0)
    o = h @ W2 + b2
    e = np.exp(o - o.max())
    do = e / e.sum()
    do[y] -= 1.0
    da = (W2 @ do) * (a > 0.0)
    W1 -= lr * np.outer(x, da)
    b1 -= lr * da
    W2 -= lr * np.outer(h, do)
    b2 -= lr * do


def test_the_train_step_updates_its_weights_in_place_with_pythons_results():
    rng = np.random.default_rng(1)
    X, Y = rng.random((100, 30)), rng.integers(0, 5, 100)
    fast, plain = weights(), weights()
    compiled = trace(step.py_func)
    for i in range(100):                       # the fast path against a hand-written NumPy step
        compiled(*fast, X[i], int(Y[i]), 0.05)
        numpy_step(*plain, X[i], int(Y[i]), 0.05)
    spec = compiled.specializations[0]
    assert count_in_place(spec.optimized) == 4
    assert not any(v.op == "writeback" for v in spec.optimized.walk())
    for a, b in zip(fast, plain):
        assert np.allclose(a, b, rtol=0, atol=1e-12)


def test_exact_without_fma_fusion():
    def sgd(w, g, lr):
        w -= lr * g
    w, g = np.linspace(-1.0, 1.0, 24).reshape(4, 6), np.cos(np.arange(24.0)).reshape(4, 6)
    expected = w - 0.1 * g
    compiled = trace(sgd, fuse_fma=False)
    data = w.ctypes.data
    compiled(w, g, 0.1)
    assert np.array_equal(w, expected) and w.ctypes.data == data
    assert count_in_place(compiled.specializations[0].optimized) == 1


def test_overlapping_arguments_run_python():
    """x is a view of W1's memory: updating W1 in place would change x while it is read."""
    W1, b1, W2, b2 = weights()
    x = W1[:, 0]                             # 30 values, inside W1
    plain = [a.copy() for a in (W1, b1, W2, b2)]
    trace(step.py_func)(*plain, plain[0][:, 0], 2, 0.1)    # overlapping: Python runs it
    compiled = trace(step.py_func)
    compiled(*weights(), np.ones(30), 2, 0.1)           # compiles (no overlap)
    compiled(W1, b1, W2, b2, x, 2, 0.1)                 # the same specialization, overlapping
    for a, b in zip((W1, b1, W2, b2), plain):
        assert np.array_equal(a, b)
    numpy = [a.copy() for a in weights()]
    numpy_step(*numpy, numpy[0][:, 0], 2, 0.1)
    for a, b in zip(plain, numpy):
        assert np.allclose(a, b, rtol=0, atol=1e-12)


def test_a_failing_call_changes_nothing_and_raises_numpys_error():
    def sgd(w, g):
        w -= g
    compiled = trace(sgd)
    w = np.ones((3, 4))
    compiled(w, np.full(4, 0.5))                        # broadcasts: compiled, in place
    assert np.array_equal(w, np.full((3, 4), 0.5))
    with pytest.raises(ValueError):
        compiled(w, np.ones(5))
    assert np.array_equal(w, np.full((3, 4), 0.5))


def test_a_failure_after_the_update_keeps_pythons_order():
    def update_then_divide(w, g, d):
        w -= g
        return 1.0 / d
    compiled = trace(update_then_divide)
    w = np.ones(3)
    assert compiled(w, np.ones(3), 2.0) == 0.5
    with pytest.raises(ZeroDivisionError):
        compiled(w, np.ones(3), 0.0)
    assert np.array_equal(w, np.full(3, -1.0))           # Python updated w, then raised


def test_an_update_read_afterwards_is_not_moved():
    def update_then_sum(w, g):
        w -= g
        return w.sum()
    compiled = trace(update_then_sum)
    w = np.arange(5.0)
    assert compiled(w, np.ones(5)) == 5.0
    assert np.array_equal(w, np.arange(5.0) - 1.0)


@pytest.mark.parametrize("shape, slicing", [((3,), slice(None)), ((6,), slice(None, None, 2)), ((40, 9), slice(None))])
def test_an_update_numpy_warns_of_runs_python_on_the_arguments_as_they_were(shape, slicing):
    """NumPy warns in the update itself (inf - inf): the compiled code finds it before its first
    write, so the Python function, run instead, updates the argument once, with NumPy's warning."""
    def f(y, s):
        y -= y.sum() * s
    base = np.linspace(-1.0, 1.0, int(np.prod(shape))).reshape(shape)
    base.flat[0] = np.inf
    compiled = trace(f)
    mine, theirs = base.copy(), base.copy()
    with pytest.warns(RuntimeWarning, match="invalid value encountered in subtract"):
        f(theirs[slicing], 1.0)
    with pytest.warns(RuntimeWarning, match="invalid value encountered in subtract"):
        compiled(mine[slicing], 1.0)
    assert np.array_equal(mine, theirs, equal_nan=True)
    assert count_in_place(compiled.specializations[0].optimized) == 1
    finite = np.linspace(-1.0, 1.0, base.size).reshape(shape)     # and without a warning, in place
    expected = finite.copy()
    f(expected[slicing], 0.5)
    compiled(finite[slicing], 0.5)
    assert np.array_equal(finite, expected)
