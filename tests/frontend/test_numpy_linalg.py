"""np.linalg in traced code (tracer.frontend.numpy_linalg, codegen.linalg) against NumPy itself:
the same LAPACK routines on the same column-major copies, so results are compared bit for bit,
on matrices of several sizes and shapes (one compile serves them all), transposed and strided
views, int matrices, and the failures NumPy raises (singular, not positive definite, not square,
an SVD that does not converge). Stacks of matrices and float32: test_numpy_linalg_stacks.
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


def eigvalsh(a):
    return np.linalg.eigvalsh(a)


@pytest.mark.parametrize("fn", [inverse, determinant, log_determinant, cholesky, eigh, eigvalsh])
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
    with pytest.raises(tracer.UnsupportedError, match="stack of matrices"):
        tracer.trace(lambda a: np.linalg.cond(a), fullgraph=True)(np.ones((2, 3, 3)))
    with pytest.raises(tracer.UnsupportedError, match="upper=True"):
        tracer.trace(lambda a: np.linalg.cholesky(a, upper=True), fullgraph=True)(np.eye(3))


# ------------------------------------------------------------------------------- qr and svd
SHAPES = ((3, 3), (5, 3), (3, 5), (1, 4), (4, 1), (60, 40), (40, 60), (0, 3), (3, 0), (200, 150))


def qr_reduced(a):
    return np.linalg.qr(a)


def qr_complete(a):
    return np.linalg.qr(a, mode="complete")


def qr_r(a):
    return np.linalg.qr(a, mode="r")


def svd_full(a):
    return np.linalg.svd(a)


def svd_reduced(a):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return u, s, vh


def singular_values(a):
    return np.linalg.svd(a, compute_uv=False), np.linalg.svdvals(a)


@pytest.mark.parametrize("fn", [qr_reduced, qr_complete, qr_r, svd_full, svd_reduced, singular_values])
def test_qr_and_svd_of_every_shape(fn):
    rng = np.random.default_rng(7)
    for shape in SHAPES:                      # (one compile: the sizes are known at run time only)
        check(fn, rng.standard_normal(shape))
    check(fn, np.arange(12).reshape(4, 3))    # ints: float64, as NumPy
    check(fn, rng.standard_normal((6, 4)).T)  # a view


def least_squares_by_qr(a, b):
    q, r = np.linalg.qr(a)
    x = np.linalg.solve(r, q.T @ b)
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return x, s[0] / s[-1], vh.T @ ((u.T @ b) / s)


def test_qr_and_svd_in_a_least_squares_fit():
    """(`@` is this compiler's matmul, not OpenBLAS's: the fits agree to rounding, the factors exactly.)"""
    rng = np.random.default_rng(3)
    traced = tracer.trace(least_squares_by_qr, fullgraph=True)
    for rows in (8, 30):
        a, b = rng.standard_normal((rows, 3)), np.arange(float(rows))
        (x, ratio, y), (x0, ratio0, y0) = traced(a, b), least_squares_by_qr(a, b)
        assert ratio == ratio0
        np.testing.assert_allclose(x, x0, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(y, y0, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(x, np.linalg.lstsq(a, b, rcond=None)[0], rtol=1e-10, atol=1e-10)


def test_qr_and_svd_failures_and_refusals():
    check(singular_values, np.array([[1.0, np.nan], [2.0, 3.0]]))     # NumPy's "SVD did not converge"
    check(qr_reduced, np.array([[1.0, np.nan], [2.0, 3.0]]))
    check(qr_reduced, np.ones(3))                                       # not two-dimensional
    check(lambda a: np.linalg.qr(a, mode="bogus"), np.eye(2))
    with pytest.raises(tracer.UnsupportedError, match="mode='raw'"):
        tracer.trace(lambda a: np.linalg.qr(a, mode="raw"), fullgraph=True)(np.eye(2))
    check(svd_full, np.eye(3, dtype=np.float32))                       # (float32, stacks: test_numpy_linalg_stacks)


def fit(a, b):
    return np.linalg.lstsq(a, b, rcond=None)


def fit_with_rcond(a, b, rcond):
    x, residuals, rank, s = np.linalg.lstsq(a, b, rcond=rcond)
    return x, residuals, rank, s


def polynomial_fit(xs, ys, degree):
    design = np.stack([xs ** k for k in range(degree, -1, -1)], axis=1)
    coefficients = np.linalg.lstsq(design, ys, rcond=None)[0]
    return coefficients


def test_lstsq_of_every_shape_and_rank():
    rng = np.random.default_rng(5)
    for shape, rhs in (((6, 3), (6,)), ((6, 3), (6, 2)), ((3, 6), (3,)), ((3, 3), (3, 4)), ((40, 7), (40,)),
                       ((5, 1), (5,)), ((0, 3), (0,)), ((4, 2), (4, 0))):
        a, b = rng.standard_normal(shape), rng.standard_normal(rhs)
        check(fit, a, b)
        if shape[1]:
            check(fit, np.c_[a, a[:, :1]], b)                 # rank deficient: no residuals
    a, b = rng.standard_normal((8, 4)), rng.standard_normal(8)
    for rcond in (1e-3, 0.5, -1.0):
        check(fit_with_rcond, a, b, rcond)
    xs = np.linspace(0.0, 2.0, 9)
    check(polynomial_fit, xs, 3.0 * xs ** 2 - xs + 0.5, 2)


def test_lstsq_failures_are_numpy_errors():
    check(fit, np.ones((3, 2)), np.ones(4))                  # incompatible (sizes known at run time only)
    check(fit, np.array([[1.0, np.nan], [2.0, 3.0]]), np.ones(2))
    check(fit, np.ones((3, 2)), np.ones((3, 2, 2)))


def condition_numbers(a):
    return np.linalg.cond(a), np.linalg.cond(a, 2), np.linalg.cond(a, -2)


def ranks(a):
    return np.linalg.matrix_rank(a), np.linalg.matrix_rank(a, tol=0.5), np.linalg.matrix_rank(a, rtol=0.1)


@pytest.mark.parametrize("fn", [condition_numbers, ranks])
def test_cond_and_matrix_rank(fn):
    rng = np.random.default_rng(11)
    for a in (rng.standard_normal((4, 3)), rng.standard_normal((3, 5)), np.zeros((3, 3)),
              np.c_[np.eye(3), np.ones(3)], np.diag([1.0, 1e-20, 3.0]), np.zeros((0, 3)),
              np.array([[1.0, np.nan], [0.0, 1.0]])):
        check(fn, a)
    check(lambda v: np.linalg.matrix_rank(v), np.zeros(3))
    check(lambda v: np.linalg.matrix_rank(v), np.array([0.0, 2.0]))


def power(a, n):
    return np.linalg.matrix_power(a, n)


def test_matrix_power():
    """(Products are this compiler's `@`: equal to NumPy's to rounding.)"""
    rng = np.random.default_rng(13)
    for a, whole in ((rng.standard_normal((3, 3)), True), (np.array([[1, 1], [1, 0]]), False)):
        for n in (0, 1, 2, 3, 5, 13, -1, -3):        # (int matmul: not compiled yet, runs as Python)
            got, want = tracer.trace(power, fullgraph=whole)(a, n), power(a, n)
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    check(power, np.ones((2, 3)), 2)                  # not square
    check(power, np.eye(2), 1.5)                      # TypeError: exponent must be an integer
    check(power, np.ones(3), 2)                       # one-dimensional
