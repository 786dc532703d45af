"""float32 arrays (tracer.frontend.numpy_api, tracer.ir.types) against NumPy: NEP 50 promotion, arithmetic bit for bit, math functions to an
ulp, reductions and matmul (summed in float64 here, pairwise in float32 by NumPy), np.float32
scalars, in-place updates, and the clear errors where float32 is not supported.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from tracer import TracerError, grad, trace

SETTINGS = settings(max_examples=30, deadline=None)
SHAPES = hnp.array_shapes(min_dims=1, max_dims=2, min_side=0, max_side=5)
F32 = hnp.arrays(np.float32, SHAPES, elements=st.floats(-100, 100, width=32))
ULP = float(np.finfo(np.float32).eps)
_COMPILED: dict = {}


def compiled(fn):
    if fn not in _COMPILED:
        _COMPILED[fn] = trace(fn)
    return _COMPILED[fn]


def same(got, want, rtol=0.0):
    assert type(got) is type(want), (type(got), type(want))
    if isinstance(want, np.ndarray):
        assert got.dtype == want.dtype and got.shape == want.shape
    if rtol:
        np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-30)
    else:
        np.testing.assert_array_equal(got, want)


def add(x, y):
    return x + y


def arithmetic(x, y):
    return (x * y - y) / (np.abs(y) + 1.0) + 0.1 * x


def weak_scalars(x, lr, n):
    return x * lr + n          # a Python float and int take float32's type (NEP 50)


def mixed(x, z):
    return x * z               # float32 with float64 is float64


def with_ints(x, k):
    return x + k               # float32 with int64 is float64


@SETTINGS
@given(F32, st.floats(-3, 3), st.integers(-5, 5))
def test_arithmetic_is_float32_arithmetic(x, lr, n):
    y = x[::-1].copy()
    same(compiled(arithmetic)(x, y), arithmetic(x, y))
    same(compiled(weak_scalars)(x, lr, n), weak_scalars(x, lr, n))
    same(compiled(mixed)(x, x.astype(np.float64)), mixed(x, x.astype(np.float64)))
    same(compiled(with_ints)(x, np.arange(x.shape[-1])), with_ints(x, np.arange(x.shape[-1])))


def ufuncs(x):
    return np.exp(x / 100.0) + np.sin(x) * np.tanh(x) - np.sqrt(np.abs(x)) + np.log1p(np.abs(x))


@SETTINGS
@given(F32)
def test_math_functions_to_an_ulp(x):
    got, want = compiled(ufuncs)(x), ufuncs(x)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=4 * ULP, atol=8 * ULP)


def reductions(x):
    return x.sum(axis=0), x.max(axis=-1), np.mean(x, axis=0), x - x.min(axis=-1, keepdims=True)


@SETTINGS
@given(F32.filter(lambda a: a.size > 0))
def test_reductions(x):
    for got, want in zip(compiled(reductions)(x), reductions(x)):
        same(got, want, rtol=1e-5)


def loss(x, y):
    d = x - y
    return np.sum(d * d) / len(x), x.argmax()


def test_float32_scalars_come_back_as_numpy_float32():
    x = np.linspace(-1, 1, 9, dtype=np.float32)
    got, index = compiled(loss)(x, x[::-1])
    want, want_index = loss(x, x[::-1])
    assert type(got) is np.float32 and got == pytest.approx(want, rel=1e-6)
    assert index == want_index


def matmul(a, b):
    return np.maximum(a @ b + 1.0, 0.0)


def test_matmul():
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((5, 7), dtype=np.float32), rng.standard_normal((7, 3), dtype=np.float32)
    same(compiled(matmul)(a, b), matmul(a, b), rtol=1e-5)


def sgd(W, g, lr):
    W -= lr * g
    W[0, :] = np.float32(0.5)


def test_in_place_updates_bit_for_bit():
    rng = np.random.default_rng(2)
    W, g = rng.standard_normal((4, 3), dtype=np.float32), rng.standard_normal((4, 3), dtype=np.float32)
    expected = W.copy()
    f = compiled(sgd)
    for _ in range(3):
        f(W, g, 0.01)
        sgd(expected, g, 0.01)
    np.testing.assert_array_equal(W, expected)


def conversions(x):
    return x.astype(np.float64) * 3.0, (x * 3.0).astype(np.float32), np.zeros(3, dtype=np.float32), \
        np.where(x > 0, x, np.float32(-1.0))


def test_creation_and_conversions():
    x = np.array([0.1, -2.5, 3.0], dtype=np.float32)
    for got, want in zip(compiled(conversions)(x), conversions(x)):
        same(got, want)


def ambiguous(x, z):
    return x * z.sum()         # NumPy: an np.float64 makes float32 into float64


def through_float32(w, x):
    return float(np.sum(x * w.astype(np.float32)))


def total(x):
    return np.sum(x)


def returns_float32(w, x):
    return np.sum(x * w.astype(np.float32))


def test_what_is_not_supported_is_a_clear_error():
    x = np.ones(3, dtype=np.float32)
    with pytest.raises(TracerError, match="float32 array with a float64 or int64 scalar NumPy computed"):
        trace(ambiguous, fullgraph=True)(x, np.ones(3))
    with pytest.raises(TracerError, match="cannot differentiate through float32"):
        trace(grad(through_float32), fullgraph=True)(np.ones(3), x)
    with pytest.raises(TracerError, match="returns a float32"):
        trace(grad(returns_float32), fullgraph=True)(np.ones(3), x)
    with pytest.raises(TypeError, match="only float arguments \\(and float64 arrays\\)"):
        trace(grad(total), fullgraph=True)(x)
