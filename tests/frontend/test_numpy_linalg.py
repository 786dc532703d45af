"""np.linalg in traced code (tracer.frontend.numpy_linalg, codegen.linalg) against NumPy itself:
the same LAPACK routines on the same column-major copies, so results are compared bit for bit,
on matrices of several sizes (one compile serves them all), transposed and strided views, int
matrices, and the failures NumPy raises (singular, not positive definite, not square).
"""
from __future__ import annotations

import numpy as np
import pytest

import tracer
from tracer.ir.linalg_ops import lapack_library

pytestmark = pytest.mark.skipif(lapack_library() is None, reason="NumPy without its bundled 64-bit OpenBLAS")

SIZES = (1, 2, 3, 7, 40)


def outcome(fn, *args):
    try:
        return fn(*args), None
    except Exception as exc:        # the exception is compared
        return None, exc


def same(got, expected) -> bool:
    if isinstance(expected, tuple):
        return isinstance(got, tuple) and len(got) == len(expected) and all(map(same, got, expected))
    if isinstance(expected, np.ndarray):
        return (isinstance(got, np.ndarray) and got.dtype == expected.dtype and got.shape == expected.shape
                and np.array_equal(got, expected, equal_nan=True))
    # (a sum a loop makes from NumPy's numbers: NumPy's type or Python's, the value the same)
    types = (type(expected), type(expected.item())) if isinstance(expected, np.generic) else (type(expected),)
    return type(got) in types and (got == expected or got != got and expected != expected)


def check(fn, *args):
    traced = tracer.trace(fn, fullgraph=True)
    (want, want_exc), (got, got_exc) = outcome(fn, *args), outcome(traced, *args)
    if want_exc is not None:
        assert type(got_exc) is type(want_exc) and str(got_exc) == str(want_exc), (got_exc, want_exc)
    else:
        assert got_exc is None, got_exc
        assert same(got, want), (got, want)
    return traced


def matrices(n, seed=0):
    rng = np.random.default_rng(seed + n)
    a = rng.standard_normal((n, n))
    return a, a @ a.T + n * np.eye(n)       # a general matrix, a positive definite one


def solve_vector(a, b):
    return np.linalg.solve(a, b)


def solve_matrix(a, b):
    return np.linalg.solve(a, b)


def inverse(a):
    return np.linalg.inv(a)


def determinant(a):
    return np.linalg.det(a)


def log_determinant(a):
    sign, logdet = np.linalg.slogdet(a)
    return sign, logdet


def cholesky(a):
    return np.linalg.cholesky(a)


def eigh(a):
    w, v = np.linalg.eigh(a)
    return w, v


@pytest.mark.parametrize("fn", [inverse, determinant, log_determinant, cholesky, eigh])
def test_one_matrix_at_every_size(fn):
    for n in SIZES:
        general, positive = matrices(n)
        check(fn, positive if fn in (cholesky, eigh) else general)


def test_solve_vectors_and_matrices():
    for n in SIZES:
        a, _ = matrices(n)
        rng = np.random.default_rng(n)
        check(solve_vector, a, rng.standard_normal(n))
        check(solve_matrix, a, rng.standard_normal((n, 3)))


def test_views_and_int_matrices():
    a, s = matrices(6)
    check(lambda x: np.linalg.det(x.T), a)
    check(lambda x: np.linalg.inv(x[::2, ::2]), a)
    check(lambda x: np.linalg.solve(x[1:, 1:], x[0, 1:]), a)
    check(lambda x: np.linalg.det(x), np.array([[2, 1], [7, 4]]))
    check(lambda x: np.linalg.eigh(x), (s * 10).astype(np.int64))


def test_linalg_inside_a_loop():
    def total(mats):
        t = 0.0
        for i in range(mats.shape[0]):
            t += np.linalg.det(mats[i])
        return t
    check(total, np.random.default_rng(3).standard_normal((5, 4, 4)))


def test_failures_are_numpy_errors():
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    check(inverse, singular)
    check(solve_vector, singular, np.ones(2))
    assert check(determinant, singular)(singular) == 0.0
    check(log_determinant, singular)
    check(cholesky, np.array([[1.0, 2.0], [2.0, 1.0]]))        # not positive definite
    check(inverse, np.ones((2, 3)))                            # not square (sizes the trace knows)
    traced = tracer.trace(inverse, fullgraph=True)
    traced(np.eye(3))
    with pytest.raises(np.linalg.LinAlgError):                 # not square, sizes known at run time only
        traced(np.ones((3, 4)))
    check(solve_vector, np.eye(3), np.ones(4))
    check(lambda x: np.linalg.det(x), np.ones(3))              # not two-dimensional


def test_refusals_are_clear():
    with pytest.raises(tracer.UnsupportedError, match="float32"):
        tracer.trace(inverse, fullgraph=True)(np.eye(3, dtype=np.float32))
    with pytest.raises(tracer.UnsupportedError, match="stack of matrices"):
        tracer.trace(inverse, fullgraph=True)(np.ones((2, 3, 3)))
