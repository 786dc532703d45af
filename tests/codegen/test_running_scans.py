"""Running sums, products, maxima and minima (codegen.scans): along the last axis the running
value stays in a register, across lines it is read back; both NumPy's results bit for bit, in
every dtype the scan takes, with NaNs, signed zeros and an int64 overflow (NumPy's wrap, from
the Python function)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import tracer

RNG = np.random.default_rng(31)


def scans(x):
    return (np.cumsum(x, axis=-1), np.cumprod(x, axis=-1), np.maximum.accumulate(x, axis=-1),
            np.minimum.accumulate(x, axis=-1), np.cumsum(x, axis=0), np.maximum.accumulate(x, axis=0))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int64])
@pytest.mark.parametrize("shape", [(1,), (9,), (300,), (4, 0), (3, 17), (2, 3, 5)])
def test_scans_are_numpys(dtype, shape):
    x = (RNG.standard_normal(shape) * 2.0).astype(dtype) if dtype != np.int64 else RNG.integers(-9, 9, shape)
    if dtype != np.int64 and x.size > 4:
        x.flat[[1, 3]] = [np.nan, -0.0]
    compiled = tracer.trace(scans)
    for a in (x, x[..., ::-1]):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = scans(a)
            got = compiled(a)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and np.array_equal(g, w, equal_nan=True)
            assert np.array_equal(np.signbit(g), np.signbit(w))


def test_an_int_running_sum_that_overflows_is_numpys():
    x = np.array([2 ** 62, 2 ** 62, 5, -7])
    np.testing.assert_array_equal(tracer.trace(lambda a: np.cumsum(a))(x), np.cumsum(x))
