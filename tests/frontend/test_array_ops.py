"""Whole-array ops (tracer.frontend.numpy_api, tracer.ir.array_ops) against NumPy: operators with broadcasting and promotion, ufuncs, reductions,
matmul, shape ops, creation, in-place updates, errors, and their gradients.

Arrays come from hypothesis: any shape up to rank 3 (sizes 0 to 4, so size-1 and empty axes
appear), float64 and int64, C-contiguous, strided or reversed views. Compiled sums run in
row-major order where NumPy sums pairwise, so float results are compared to 1e-12 relative.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from tracer import TracerError, grad, trace, value_and_grad
from tracer.ir.ops import run

SETTINGS = settings(max_examples=25, deadline=None)
_COMPILED: dict = {}     # one dispatcher per function: examples reuse its specializations


def close(got, expected, rtol=1e-12, atol=1e-12):
    """Same type (ndarray with NumPy's dtype and shape, or a number), values to `rtol`."""
    if expected is None:
        assert got is None
    elif isinstance(expected, np.ndarray):
        assert isinstance(got, np.ndarray), type(got)
        assert got.dtype == expected.dtype and got.shape == expected.shape, (got.dtype, got.shape, expected.dtype,
                                                                              expected.shape)
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol)
    else:
        assert isinstance(got, (float, int, bool, np.number, np.bool_)) and \
            float(got) == pytest.approx(float(expected), rel=rtol, abs=atol), \
            (got, expected)


def compiled(fn):
    if fn not in _COMPILED:
        _COMPILED[fn] = trace(fn)
    return _COMPILED[fn]


def same_as_numpy(fn, *args):
    """Call the compiled `fn` and the plain one on copies; compare results and arguments."""
    expected_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = fn(*expected_args)
        got = compiled(fn)(*args)
    if isinstance(expected, tuple):
        for g, e in zip(got, expected):
            close(g, e)
    else:
        close(got, expected)
    for a, e in zip(args, expected_args):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, e)


def views(a):
    """`a` as it comes, and as a reversed and a strided view of a bigger array."""
    yield a
    yield np.ascontiguousarray(a[::-1])[::-1] if a.ndim else a
    big = np.zeros(tuple(2 * n for n in a.shape), dtype=a.dtype)
    big[tuple(slice(None, None, 2) for _ in a.shape)] = a
    yield big[tuple(slice(None, None, 2) for _ in a.shape)]


FLOATS = st.floats(-10.0, 10.0, allow_nan=False, width=64)
SHAPES = hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4)


def float_arrays(shape=SHAPES):
    return hnp.arrays(np.float64, shape, elements=FLOATS)


@st.composite
def broadcastable_pair(draw):
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=1, max_dims=3, max_side=4))
    return tuple(draw(float_arrays(s)) for s in shapes.input_shapes)


# ------------------------------------------------------------------------------ operators
def add(a, b): return a + b
def sub(a, b): return a - b
def mul(a, b): return a * b
def div(a, b): return a / (b * b + 1.0)
def power(a, b): return np.abs(a) ** (b * 0.1)
def compare(a, b): return np.where(a > b, a, b * 2.0)
def chain(a, b): return np.tanh(a * b - 1.0) + np.exp(-a * a) * np.sqrt(b * b + 1.0)


@pytest.mark.parametrize("fn", [add, sub, mul, div, power, compare, chain])
@SETTINGS
@given(pair=broadcastable_pair())
def test_binary_operators_broadcast_like_numpy(fn, pair):
    a, b = pair
    for a_view in views(a):
        same_as_numpy(fn, a_view, b)


def with_scalars(x, s, n):
    return (x * s + n, n - x, x / (n * n + 1), x ** 2, -x, abs(x), 2.5 > x)


@SETTINGS
@given(x=float_arrays(), s=FLOATS, n=st.integers(-5, 5))
def test_python_scalars_mix_with_arrays(x, s, n):
    same_as_numpy(with_scalars, x, s, n)


def int_ops(a, b):
    return a + b, a * b, a - b, a // (b * b + 1), a % (b * b + 1), a / (b * b + 1), a > b, a * 0.5


@SETTINGS
@given(pair=st.integers(0, 3).flatmap(lambda n: st.tuples(
    hnp.arrays(np.int64, (n, 3), elements=st.integers(-1000, 1000)),
    hnp.arrays(np.int64, (3,), elements=st.integers(-1000, 1000)))))
def test_int64_arrays_promote_like_numpy(pair):
    same_as_numpy(int_ops, *pair)


def ufuncs(x):
    return (np.exp(np.sin(x)), np.log(x * x + 1.0), np.sqrt(np.abs(x)), np.cos(x), np.tanh(x), np.arctan(x),
            np.floor(x), np.ceil(x), np.maximum(x, 0.0), np.minimum(x, 1.0), np.arctan2(x, 2.0), np.sign(x),
            np.square(x), np.clip(x, -1.0, 1.0), np.log1p(x * x), np.hypot(x, 3.0))


@SETTINGS
@given(x=float_arrays())
def test_ufuncs_match_numpy(x):
    # NumPy may use its own SIMD exp/log/sin: compare to the last few bits
    expected = ufuncs(x)
    got = compiled(ufuncs)(x)
    for g, e in zip(got, expected):
        close(g, e, rtol=1e-14, atol=1e-300)


# ------------------------------------------------------------------------------ reductions
def reductions(x):
    return (x.sum(), np.sum(x, axis=0), x.sum(axis=-1, keepdims=True), np.mean(x, axis=0), x.max(axis=0),
            np.min(x, axis=-1), x.sum(axis=(0, -1)) if x.ndim > 1 else x.sum(), np.prod(x, axis=0))


@SETTINGS
@given(x=float_arrays(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4)))
def test_reductions_match_numpy(x):
    for v in views(x):
        same_as_numpy(reductions, v)


def arg_extremes(x):
    return np.argmax(x), x.argmin(), np.argmax(x, axis=0) if x.ndim > 1 else np.argmax(x)


@SETTINGS
@given(x=float_arrays(hnp.array_shapes(min_dims=1, max_dims=2, min_side=1, max_side=5)))
def test_argmax_argmin_match_numpy(x):
    same_as_numpy(arg_extremes, x)


def test_empty_reductions_follow_numpy():
    def total(x):
        return x.sum()

    def biggest(x):
        return x.max()
    assert trace(total)(np.zeros(0)) == 0.0
    with pytest.raises(ValueError, match="zero-size array"):
        trace(biggest)(np.zeros(0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert np.isnan(trace(lambda x: x.mean())(np.zeros(0)))


# ------------------------------------------------------------------------------ linear algebra
@SETTINGS
@given(m=st.integers(0, 4), k=st.integers(1, 4), n=st.integers(1, 4), data=st.data())
def test_matmul_shapes_match_numpy(m, k, n, data):
    a = data.draw(float_arrays((m, k)))
    b = data.draw(float_arrays((k, n)))
    v = data.draw(float_arrays((k,)))

    def f(a, b, v):
        return a @ b, a @ v, v @ b, v @ v, b.T @ a.T, np.outer(v, v), np.dot(a, b)
    for a_view in views(a):
        same_as_numpy(f, a_view, b, v)


@pytest.mark.parametrize("lead", [(2,), (3, 2), (2, 0), (1, 4)])
@pytest.mark.parametrize("right", ["vector", "matrix"])
def test_a_stack_of_matrices_times_a_matrix_or_vector(lead, right):
    """NumPy's `(..., n, k) @ (k, m)` and `@ (k,)`: each matrix of the stack times the right
    operand, as the 2-d product of all their rows (NumPy computes it so too)."""
    rng = np.random.default_rng(len(lead) * 10 + lead[-1])
    a = rng.standard_normal((*lead, 5, 3))
    b = rng.standard_normal((3, 4) if right == "matrix" else (3,))
    stacked = trace(fullgraph=True)(lambda a, b: a @ b)
    flat = trace(fullgraph=True)(lambda a, b: a @ b)
    got = stacked(a, b)
    assert got.shape == (a @ b).shape and got.dtype == np.float64
    assert np.array_equal(got.reshape(-1, *got.shape[len(lead) + 1:]), flat(a.reshape(-1, 3), b))
    np.testing.assert_allclose(got, a @ b, rtol=1e-13, atol=1e-13)
    with pytest.raises(ValueError, match="mismatch in its core dimension"):
        stacked(a, np.ones(4))


def plain_matmul(a, b):
    """The triple loop, each sum over p in order: what the compiled matmul computes."""
    out = np.zeros((a.shape[0], b.shape[1]))
    for i in range(a.shape[0]):
        for j in range(b.shape[1]):
            total = -0.0 if a.shape[1] else 0.0
            for p in range(a.shape[1]):
                total += a[i, p] * b[p, j]
            out[i, j] = total
    return out


@SETTINGS
@given(m=st.integers(0, 11), k=st.integers(0, 9), n=st.integers(1, 9), data=st.data())
def test_matmul_is_the_plain_loop_bit_for_bit(m, k, n, data):
    """Rows are done in register tiles (sharing the loads of b) or four terms per pass: every
    output element is still its sum over p in order, whatever m and k leave over."""
    a = data.draw(float_arrays((m, k)))
    b = data.draw(float_arrays((k, n)))
    matmul = trace(fuse_fma=False)(lambda a, b: a @ b)
    for a_view in views(a):
        for b_view in views(b):
            np.testing.assert_array_equal(matmul(a_view, b_view), plain_matmul(a_view, b_view))


@pytest.mark.parametrize("m, k, n", [(1, 784, 50), (13, 21, 19), (8, 5, 16), (4, 1, 3), (5, 0, 9)])
def test_matmul_tiles_and_rows_left_over(m, k, n):
    """Blocks of six rows in register tiles of 8 columns (the last one masked), the rows left
    over by the row loop: unfused, the plain loop's bits; fused (the default), the bits of the
    IR evaluator's in-order fmas."""
    from tracer.ir.array_ops import _matmul
    rng = np.random.default_rng(m * 1000 + k * 10 + n)
    a, b = rng.normal(size=(m, k)), rng.normal(size=(k, n))
    np.testing.assert_array_equal(trace(fuse_fma=False)(lambda a, b: a @ b)(a, b), plain_matmul(a, b))
    np.testing.assert_array_equal(trace(lambda a, b: a @ b)(a, b), _matmul(a, b, fused=True))


@pytest.mark.parametrize("m, k", [(1, 1), (8, 4), (9, 7), (17, 33), (64, 3), (40, 1), (3, 0), (200, 203)])
def test_matrix_times_vector_in_row_blocks_is_the_plain_loop(m, k):
    """A @ x sums blocks of rows at once (a's rows transposed in registers): each element is
    still its sum over p in order, unfused the plain loop's bits, fused the evaluator's fmas."""
    from tracer.ir.array_ops import _matmul
    rng = np.random.default_rng(m * 1000 + k)
    a, x = rng.normal(size=(m, k)), rng.normal(size=k)
    plain, fused = trace(fuse_fma=False)(lambda a, x: a @ x), trace(lambda a, x: a @ x)
    for a_view, x_view in ((a, x), (np.asfortranarray(a), x), (a[::2], x), (a[:, ::2], x[::2])):
        np.testing.assert_array_equal(plain(a_view, x_view), plain_matmul(a_view, x_view[:, None])[:, 0])
        np.testing.assert_array_equal(fused(a_view, x_view), _matmul(a_view, x_view, fused=True))


def test_matmul_size_mismatch_is_numpys_error():
    def f(a, b):
        return a @ b
    with pytest.raises(ValueError, match="mismatch in its core dimension"):
        trace(f)(np.ones((2, 3)), np.ones((4, 2)))


def test_broadcast_mismatch_is_numpys_error():
    def f(a, b):
        return a + b
    compiled = trace(f)
    with pytest.raises(ValueError, match="could not be broadcast"):
        compiled(np.ones((2, 3)), np.ones((1, 4)) * np.ones((2, 1)))    # sizes the trace knows differ
    compiled(np.ones(3), np.ones(3))
    with pytest.raises(ValueError, match="could not be broadcast"):
        compiled(np.ones(3), np.ones(4))                                 # run-time sizes differ


# ------------------------------------------------------------------------------ shapes, creation
def shapes(x):
    return x.T, x.reshape(-1), x.reshape(x.shape[0], -1), np.transpose(x), x.astype(np.int64), x.copy()


@SETTINGS
@given(x=float_arrays(hnp.array_shapes(min_dims=2, max_dims=2, min_side=1, max_side=4)))
def test_shape_ops_match_numpy(x):
    for v in views(x):
        same_as_numpy(shapes, v)


def creation(x, n):
    return (np.zeros(n), np.ones((n, 2)), np.full(3, 7.5), np.zeros_like(x), np.ones_like(x, dtype=np.int64),
            np.arange(n), np.arange(1, n, 2), np.array([1.0, n, 3.0]), np.array([[1, 2], [3, n]]), np.empty(0))


@pytest.mark.parametrize("n", [0, 2, 5])
def test_creation_matches_numpy(n):
    same_as_numpy(creation, np.ones((2, 3)), n)


def test_rows_are_views():
    def f(W, j):
        row = W[j]
        return row * 2.0, W[j][1], row.sum()
    same_as_numpy(f, np.arange(12.0).reshape(3, 4), 2)
    same_as_numpy(f, np.arange(12.0).reshape(3, 4), -1)
    with pytest.raises(IndexError):
        trace(f)(np.arange(12.0).reshape(3, 4), 3)


# ------------------------------------------------------------------------------ in place
def sgd(W, b, g, lr):
    W -= lr * g
    b *= 0.5


def fill(x, v):
    out = np.zeros_like(x)
    for i in range(len(x)):
        out[i] = x[i] * v
    x[0] = v
    return out


def through_view(W):
    row = W[1]
    row += 1.0
    W[0] = W[1]
    return W.sum()


@pytest.mark.parametrize("fn, make", [
    (sgd, lambda: (np.ones((3, 2)), np.ones(2), np.arange(6.0).reshape(3, 2), 0.1)),
    (fill, lambda: (np.arange(5.0), 2.0)),
    (through_view, lambda: (np.arange(6.0).reshape(3, 2),)),
])
def test_in_place_updates_match_numpy(fn, make):
    same_as_numpy(fn, *make())
    compiled = trace(fn, fuse_fma=False)       # NumPy's bits: W - lr * g rounds twice
    args, expected_args = make(), make()
    for _ in range(3):                       # again and again: the arguments keep changing
        compiled(*args)
        fn(*expected_args)
    for a, e in zip(args, expected_args):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, e)


def test_a_failing_call_updates_nothing_twice():
    def f(W, d):
        W -= 1.0
        return 1.0 / d          # fails after the update: the Python function runs instead
    W = np.zeros(3)
    with pytest.raises(ZeroDivisionError):
        trace(f)(W, 0.0)
    np.testing.assert_array_equal(W, -np.ones(3))     # updated once (by Python), not twice


def test_aliased_arguments_run_python():
    def f(a, b):
        a += 1.0
        return b.sum()
    x = np.zeros(4)
    compiled = trace(f)
    compiled(np.zeros(4), np.zeros(4))
    assert compiled(x, x) == 4.0        # NumPy: b is a, so it sees the update
    np.testing.assert_array_equal(x, np.ones(4))


# ------------------------------------------------------------------------------ IR interpreter
def test_ir_interpreter_agrees_with_compiled_code():
    from tracer.frontend.interpreter import trace_frame
    def f(x, W):
        h = np.maximum(x @ W, 0.0)
        return (h * h).sum(axis=0), h.T, np.argmax(h), W[1]
    x, W = np.random.default_rng(1).normal(size=(3, 4)), np.random.default_rng(2).normal(size=(4, 2))
    t = trace_frame(f.__code__, (x, W), f.__globals__, __builtins__, None, "f")
    interpreted = run(t.function, [x, W])
    compiled = trace(f, fuse_fma=False)(x, W)
    for a, b in zip(interpreted, compiled):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    fused = trace(f)                       # FMA fusion on: the matmul adds each term with an fma
    got = fused(x, W)
    (spec,) = fused.specializations
    assert any(v.op == "matmul" and v.attrs.get("fused") for v in spec.optimized.walk())
    for a, b in zip(run(spec.optimized, [x, W]), got):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


# ------------------------------------------------------------------------------ gradients
def finite_difference(fn, args, argnum, eps=1e-6):
    x = args[argnum]
    g = np.zeros_like(x)
    for i in range(x.size):
        plus = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        minus = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        plus[argnum].flat[i] += eps
        minus[argnum].flat[i] -= eps
        g.flat[i] = (fn(*plus) - fn(*minus)) / (2 * eps)
    return g


def softmax_xent(W, b, x, y):
    o = x @ W + b
    m = o.max()
    return m + np.log(np.sum(np.exp(o - m))) - o[y]


def smooth(a, b):
    return np.sum(np.tanh(a * b) + np.sqrt(a * a + 1.0) / (b * b + 2.0)) + np.mean(a.T @ b) + a.max()


def broadcasting(a, c):
    return np.sum((a + c) * a.sum(axis=0, keepdims=True) - np.maximum(a, c.reshape(1, -1)) ** 2)


def rows_and_elements(W, v):
    return W[0] @ v + W[1, 1] * np.outer(v, v).sum() + np.dot(W.T @ v, v) + np.where(v > 0.0, v, 0.1 * v).sum()


GRADIENT_CASES = [
    (softmax_xent, lambda r: (r.normal(size=(4, 3)), r.normal(size=3), r.random(4), 1), (0, 1)),
    (smooth, lambda r: (r.normal(size=(3, 2)), r.normal(size=(3, 2))), (0, 1)),
    (broadcasting, lambda r: (r.normal(size=(3, 2)), r.normal(size=2)), (0, 1)),
    (rows_and_elements, lambda r: (r.normal(size=(3, 3)), r.normal(size=3)), (0, 1)),
]


@pytest.mark.parametrize("fn, make, argnums", GRADIENT_CASES, ids=[c[0].__name__ for c in GRADIENT_CASES])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_array_gradients_match_finite_differences(fn, make, argnums, seed):
    args = make(np.random.default_rng(seed))
    value, grads = value_and_grad(fn, argnums=argnums)(*args)
    assert value == pytest.approx(fn(*args), rel=1e-12)
    for g, a in zip(grads, argnums):
        assert isinstance(g, np.ndarray) and g.shape == args[a].shape
        np.testing.assert_allclose(g, finite_difference(fn, args, a), rtol=1e-6, atol=1e-6)


def test_train_step_matches_a_hand_written_numpy_backward():
    def loss(W1, b1, W2, b2, x, y):
        h = np.maximum(x @ W1 + b1, 0.0)
        o = h @ W2 + b2
        m = o.max()
        return m + np.log(np.sum(np.exp(o - m))) - o[y]

    @trace
    def step(W1, b1, W2, b2, x, y, lr):
        gW1, gb1, gW2, gb2 = grad(loss, argnums=(0, 1, 2, 3))(W1, b1, W2, b2, x, y)
        W1 -= lr * gW1
        b1 -= lr * gb1
        W2 -= lr * gW2
        b2 -= lr * gb2

    def numpy_step(W1, b1, W2, b2, x, y, lr):
        z = x @ W1 + b1
        h = np.maximum(z, 0.0)
        o = h @ W2 + b2
        p = np.exp(o - o.max())
        p /= p.sum()
        do = p.copy()
        do[y] -= 1.0
        dh = W2 @ do
        dz = dh * (z > 0)
        W1 -= lr * np.outer(x, dz)
        b1 -= lr * dz
        W2 -= lr * np.outer(h, do)
        b2 -= lr * do

    rng = np.random.default_rng(0)
    params = [rng.normal(0, 0.3, (6, 5)), np.zeros(5), rng.normal(0, 0.3, (5, 4)), np.zeros(4)]
    reference = [p.copy() for p in params]
    for _ in range(50):
        x, y = rng.random(6), int(rng.integers(0, 4))
        step(*params, x, y, 0.1)
        numpy_step(*reference, x, y, 0.1)
    for p, r in zip(params, reference):
        np.testing.assert_allclose(p, r, rtol=1e-9, atol=1e-9)


def test_gradient_of_an_array_result_is_a_clear_error():
    with pytest.raises(TracerError):
        grad(lambda x: x * 2.0)(np.ones(3))


@pytest.mark.parametrize("exponent", [2, 2.0, 0.5, -1, -1.0])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_squares_roots_and_reciprocals_are_numpys_bit_for_bit(exponent, dtype):
    """x ** 2, x ** 0.5 and x ** -1 are NumPy's fast paths (a multiply, sqrt, a division), not pow:
    the same bits as NumPy, signed zeros, infinities and NaN included."""
    if dtype == np.int64 and exponent in (-1, -1.0):
        pytest.skip("an int array to a negative int power is NumPy's ValueError (tests/codegen/test_no_traps.py)")
    x = np.array([0.0, -0.0, 1.5, -2.25, 1e200, np.inf, -np.inf, np.nan, 3.0, 7e-310])
    x = x.astype(dtype) if dtype != np.int64 else np.arange(-6, 7, dtype=np.int64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = x ** exponent
        got = trace(lambda a: a ** exponent)(x)
    assert got.dtype == want.dtype and np.array_equal(np.signbit(got), np.signbit(want))
    assert np.array_equal(got, want, equal_nan=True)
