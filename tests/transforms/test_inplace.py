"""Argument arrays updated in place by the compiled code (tracer.transforms.passes.inplace): `W -= lr * g`
writes W's memory in one pass, with Python's results, and a failure still changes nothing."""
import os
import sys

import numpy as np
import pytest
from numpy_kernels_b import clip_by_global_norm_inplace

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


clip_pair = clip_by_global_norm_inplace      # the corpus's kernel: an update in one branch


@pytest.mark.parametrize("max_norm", [0.5, 1e9])
def test_an_update_in_one_branch_writes_the_arguments_in_place(max_norm):
    """Both paths give NumPy's results; the branch writes g1 and g2 themselves (no copy of
    either at the top, no write-back of an array the other path left as it was)."""
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal(50), rng.standard_normal(30)
    mine, theirs = (a.copy(), b.copy()), (a.copy(), b.copy())
    compiled = trace(clip_pair)
    data = [x.ctypes.data for x in mine]
    assert compiled(*mine, max_norm) == clip_pair(*theirs, max_norm)
    assert all(np.array_equal(x, y) for x, y in zip(mine, theirs))
    assert [x.ctypes.data for x in mine] == data
    optimized = compiled.specializations[0].optimized
    assert count_in_place(optimized) == 2
    assert not any(v.op in ("writeback", "copy") for v in optimized.walk())


def test_an_update_in_one_branch_of_arguments_sharing_memory_runs_python():
    compiled = trace(clip_pair)
    compiled(np.ones(4), np.ones(3), 1.0)                      # compiled, apart
    for share in (lambda a: (a, a), lambda a: (a[:6], a[4:])):
        mine, theirs = np.linspace(1.0, 2.0, 10), np.linspace(1.0, 2.0, 10)
        assert compiled(*share(mine), 1.0) == clip_pair(*share(theirs), 1.0)
        assert np.array_equal(mine, theirs)                    # (scaled twice where shared, as NumPy does)


def test_an_update_in_one_branch_then_a_failure_keeps_pythons_order():
    def scale_then_divide(g, s, d):
        if s > 0.0:
            g *= s
        return 1.0 / d
    compiled = trace(scale_then_divide)
    g = np.ones(3)
    assert compiled(g, 2.0, 4.0) == 0.25 and np.array_equal(g, np.full(3, 2.0))
    with pytest.raises(ZeroDivisionError):
        compiled(g, 2.0, 0.0)
    assert np.array_equal(g, np.full(3, 4.0))                  # Python scaled g, then raised


@pytest.mark.parametrize("branch", [False, True])
def test_numpy_warning_in_the_second_update_finds_the_first_argument_as_it_was(branch):
    """g2 * 10 overflows: NumPy warns after it scaled g1; the compiled code finds it before it
    writes either, and Python, run instead, scales g1 once."""
    def both(g1, g2, s):
        g1 *= s
        g2 *= s
        return 0.0

    def in_branch(g1, g2, s):
        if s > 1.0:
            g1 *= s
            g2 *= s
        return 0.0
    f = in_branch if branch else both
    compiled = trace(f)
    compiled(np.ones(2), np.ones(2), 2.0)
    mine, theirs = (np.ones(5), np.array([1.0, 1e308, 2.0])), (np.ones(5), np.array([1.0, 1e308, 2.0]))
    with pytest.warns(RuntimeWarning, match="overflow"):
        f(*theirs, 10.0)
    with pytest.warns(RuntimeWarning, match="overflow"):
        compiled(*mine, 10.0)
    assert all(np.array_equal(x, y) for x, y in zip(mine, theirs))
    assert count_in_place(compiled.specializations[0].optimized) == 2


def reflect(pos, vel, dt, L):
    pos += vel * dt
    low = pos < 0.0
    high = pos > L
    pos[low] = -pos[low]
    pos[high] = 2.0 * L - pos[high]
    vel[low | high] *= -1.0


@pytest.mark.parametrize("n, spread", [(1, 4.0), (50, 4.0), (333, 0.5), (1000, 40.0), (1000, 0.0)])
def test_a_masked_update_writes_the_argument_in_place(n, spread):
    rng = np.random.default_rng(n)
    pos, vel = rng.uniform(0.0, 10.0, (n, 2)), rng.standard_normal((n, 2)) * spread
    mine, theirs = (pos.copy(), vel.copy()), (pos.copy(), vel.copy())
    compiled = trace(reflect)
    data = mine[1].ctypes.data
    compiled(*mine, 0.5, 10.0)
    reflect(*theirs, 0.5, 10.0)
    assert all(np.array_equal(x, y) for x, y in zip(mine, theirs)) and mine[1].ctypes.data == data
    optimized = compiled.specializations[0].optimized
    assert any(v.op == "mask_update" and v.attrs.get("into") for v in optimized.walk())
    strided = (pos.copy(), np.repeat(vel, 2, axis=0))          # vel a view: every other row
    expected = (pos.copy(), strided[1].copy())
    compiled(strided[0], strided[1][::2], 0.5, 10.0)
    reflect(expected[0], expected[1][::2], 0.5, 10.0)
    assert all(np.array_equal(x, y) for x, y in zip(strided, expected))


@pytest.mark.parametrize("n", [7, 64, 130, 1000])
def test_a_masked_update_of_an_argument_with_numpys_results_and_errors(n):
    def update(x, m, v):
        x[m] = v
    rng = np.random.default_rng(n)
    compiled = trace(update)
    for density in (0.0, 0.05, 0.5, 1.0):
        m = rng.random(n) < density
        x = rng.standard_normal(n)
        y = x.copy()
        values = rng.standard_normal(int(m.sum()))
        compiled(x, m, values)
        update(y, m, values)
        assert np.array_equal(x, y)
    assert count_in_place(compiled.specializations[0].optimized) == 1
    x = np.arange(float(n))
    with pytest.raises(IndexError):                            # a mask of other sizes: nothing written
        compiled(x, np.ones(n + 1, bool), np.zeros(n + 1))
    with pytest.raises(ValueError):                            # too many values: nothing written
        compiled(x, np.ones(n, bool), np.zeros(n + 1))
    assert np.array_equal(x, np.arange(float(n)))
    m = np.zeros(2 * n, bool)
    m[::3] = True
    compiled(x, m[::2], np.full(int(m[::2].sum()), -1.0))      # a strided mask
    expected = np.arange(float(n))
    expected[m[::2]] = -1.0
    assert np.array_equal(x, expected)


def test_a_masked_update_from_values_sharing_the_arguments_memory_runs_python():
    def update(x, m, v):
        x[m] = v
    compiled = trace(update)
    m = np.array([False, True, True, False, True, False, True, False])
    for start in (8, 2):                                       # apart, then overlapping x
        mine, theirs = np.arange(16.0), np.arange(16.0)
        compiled(mine[:8], m, mine[start:start + 4])
        update(theirs[:8], m, theirs[start:start + 4])
        assert np.array_equal(mine, theirs)
