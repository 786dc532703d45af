"""np.linalg on stacks of matrices (shape (..., m, n): NumPy's gufuncs loop over the leading axes)
and on float32 matrices (NumPy computes them in float64 and rounds the results to float32), against
NumPy itself, bit for bit: the same LAPACK on each matrix of the stack. Stacks with sizes known at
run time only (one compile serves them all), of rank 4, empty, with a singular matrix inside, and
the shapes NumPy refuses; float16, which NumPy refuses; solve's broadcasting of the stack axes.
"""
from __future__ import annotations

import numpy as np
import pytest
from oracle import array_bits
from test_numpy_linalg import (
    check,
    cholesky,
    determinant,
    eigh,
    eigvalsh,
    inverse,
    log_determinant,
    outcome,
    qr_r,
    same,
    singular_values,
    solve_vector,
    svd_reduced,
)

import tracer
import tracer.api
from tracer.ir.linalg_ops import lapack_library

pytestmark = pytest.mark.skipif(lapack_library() is None, reason="NumPy without its bundled 64-bit OpenBLAS")


def compare(traced, fn, *args):
    """traced(*args) is fn(*args), bit for bit, or raises the same exception."""
    (want, want_exc), (got, got_exc) = outcome(fn, *args), outcome(traced, *args)
    if want_exc is not None:
        assert type(got_exc) is type(want_exc) and str(got_exc) == str(want_exc), (got_exc, want_exc)
        return
    assert got_exc is None, got_exc
    assert same(got, want), (got, want)
    assert array_bits(got) == array_bits(want)


def qr_reduced(a):
    q, r = np.linalg.qr(a)
    return q, r


def qr_complete(a):
    q, r = np.linalg.qr(a, mode="complete")
    return q, r


def svd_full(a):
    u, s, vh = np.linalg.svd(a)
    return u, s, vh


def solve_matrices(a, b):
    return np.linalg.solve(a, b)


SQUARE = (inverse, determinant, log_determinant, cholesky, eigh, eigvalsh)
ANY_SHAPE = (qr_reduced, qr_complete, qr_r, svd_full, svd_reduced, singular_values)
EVERY = SQUARE + ANY_SHAPE


def stack(shape, seed=0, dtype=np.float64, positive=False):
    """Random matrices of `shape` (..., m, n); `positive`: symmetric positive definite ones."""
    a = np.random.default_rng(seed + sum(shape)).standard_normal(shape)
    if positive:
        a = a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])
    return a.astype(dtype)


def argument(fn, shape, dtype=np.float64, seed=0):
    return stack(shape, seed, dtype, positive=fn in (cholesky, eigh, eigvalsh))


SQUARE_STACKS = ((2, 3, 3), (3, 5, 5), (2, 4, 4), (3, 2, 2), (0, 4, 4), (2, 0, 0), (3, 40, 40))
ANY_STACKS = ((2, 3, 3), (3, 5, 3), (2, 3, 5), (3, 40, 25), (2, 25, 40), (0, 3, 4), (2, 0, 3), (3, 4, 0))


@pytest.mark.parametrize("fn", EVERY, ids=lambda f: f.__name__)
def test_stacks_of_every_size_compile_once(fn, python_runs):
    """Stacks of 2 or 3 matrices of several sizes, empty ones, and matrices with no rows: one
    compile (the sizes are known at run time only), no Python run."""
    traced = tracer.trace(fn, fullgraph=True)
    for shape in SQUARE_STACKS if fn in SQUARE else ANY_STACKS:
        compare(traced, fn, argument(fn, shape))
    assert len(traced.specializations) == 1 and python_runs == []


@pytest.mark.parametrize("fn", EVERY, ids=lambda f: f.__name__)
def test_stacks_of_rank_4_and_views(fn, python_runs):
    traced = tracer.trace(fn, fullgraph=True)
    for shape in ((2, 3, 4, 4), (3, 2, 3, 3), (2, 0, 3, 3), (2, 3, 1, 1)):
        compare(traced, fn, argument(fn, shape))
    compare(traced, fn, argument(fn, (6, 4, 4))[::2].reshape(3, 1, 4, 4))
    compare(traced, fn, argument(fn, (2, 3, 4, 4))[::-1, ::-1])       # negative strides
    a = argument(fn, (4, 3, 3, 5) if fn in ANY_SHAPE else (4, 3, 5, 5))
    compare(traced, fn, np.swapaxes(a, 0, 1)[:, ::2])                # strided views of every axis
    compare(traced, fn, np.swapaxes(a, -1, -2)[1:])                  # transposed matrices
    assert python_runs == []


@pytest.mark.parametrize("fn", EVERY, ids=lambda f: f.__name__)
def test_float32_matrices_and_stacks(fn, python_runs):
    """float32: NumPy's results are float64 LAPACK's rounded to float32; the same here."""
    traced = tracer.trace(fn, fullgraph=True)
    shapes = ((3, 3), (5, 5), (2, 3, 3), (3, 4, 4), (2, 2, 3, 3), (0, 3, 3)) if fn in SQUARE else \
        ((3, 3), (5, 3), (3, 5), (2, 5, 3), (3, 3, 5), (2, 2, 4, 3), (0, 3, 4))
    for shape in shapes:
        compare(traced, fn, argument(fn, shape, np.float32))
    assert python_runs == []
    want = fn(argument(fn, shapes[2], np.float32))
    assert all(x.dtype == np.float32 for x in (want if isinstance(want, tuple) else (want,)))


@pytest.mark.parametrize("fn", EVERY, ids=lambda f: f.__name__)
def test_float16_is_numpy_type_error(fn):
    check(fn, np.eye(3, dtype=np.float16))
    check(fn, np.ones((2, 3, 3), dtype=np.float16))


def test_ints_and_mixed_dtypes():
    """int and bool matrices are float64 (as NumPy); solve's result is float32 only where a and
    b both are."""
    for fn in EVERY:
        check(fn, (argument(fn, (2, 3, 3)) * 10).astype(np.int32))
    a32, b32 = stack((2, 3, 3), dtype=np.float32), stack((2, 3, 2), 1, np.float32)
    for a, b in ((a32, b32), (a32, b32.astype(np.float64)), (a32.astype(np.float64), b32), (a32, np.ones((2, 3, 2), int)),
                 (np.eye(3, dtype=bool), b32[0]), (a32, b32[0, :, 0]), (a32[0], b32[0, :, 0])):
        compare(tracer.trace(solve_matrices, fullgraph=True), solve_matrices, a, b)


def test_solve_stacks_and_numpy_2_broadcasting(python_runs):
    """b 1-d: one vector for every matrix; else a stack of matrices, its leading axes broadcast
    with a's (NumPy 2: b of shape (k, n) is one n-row matrix, not k vectors)."""
    traced = tracer.trace(solve_matrices, fullgraph=True)
    for a_shape, b_shape in (((2, 3, 3), (3,)), ((3, 4, 4), (4,)), ((3, 4, 4), (3, 4, 2)), ((2, 3, 3), (2, 3, 1)),
                             ((0, 3, 3), (0, 3, 2)), ((0, 3, 3), (3,)), ((3, 3, 3), (3, 3)), ((3, 4, 4), (4, 5)),
                             ((2, 1, 3, 3), (4, 3, 2)), ((3, 3), (4, 3, 2)), ((2, 3, 3), (1, 3, 2)),
                             ((2, 3, 4, 4), (3, 4, 5)), ((2, 3, 4, 4), (4,)), ((2, 0, 0), (2, 0, 3))):
        compare(traced, solve_matrices, stack(a_shape), stack(b_shape, 1))
    assert python_runs == []


def test_float32_lstsq():
    a, b = stack((6, 3), dtype=np.float32), stack((6,), 1, np.float32)
    for args in ((a, b), (a, b.astype(np.float64)), (a, stack((6, 2), 2, np.float32)), (a[:, :2], b)):
        compare(tracer.trace(lambda x, y: np.linalg.lstsq(x, y, rcond=None), fullgraph=True),
                lambda x, y: np.linalg.lstsq(x, y, rcond=None), *args)
    check(lambda x, y: np.linalg.lstsq(x, y), a.astype(np.float16), b)


def with_bad_matrix(good, bad, at=1):
    s = np.array(good)
    s[at] = bad
    return s


def test_a_matrix_numpy_refuses_inside_a_stack():
    """Singular (solve, inv), not positive definite (cholesky), NaNs (an SVD that does not
    converge): NumPy's LinAlgError, from the Python function; det and slogdet give 0 and -inf."""
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    nan = np.array([[1.0, np.nan], [2.0, 3.0]])
    general, positive = stack((3, 2, 2)), stack((3, 2, 2), positive=True)
    for fn in (inverse, determinant, log_determinant):
        check(fn, with_bad_matrix(general, singular))
        check(fn, with_bad_matrix(general, singular, at=0).astype(np.float32))
    check(solve_vector, with_bad_matrix(general, singular), np.ones(2))
    check(solve_matrices, with_bad_matrix(general, singular, at=2), np.ones((3, 2, 4)))
    check(cholesky, with_bad_matrix(positive, -np.eye(2)))
    check(cholesky, with_bad_matrix(positive, singular).reshape(3, 1, 2, 2))
    for fn in (singular_values, svd_full, svd_reduced, qr_reduced, eigh, eigvalsh, inverse):
        check(fn, with_bad_matrix(positive, nan))


def test_wrong_shapes_are_numpy_errors():
    traced = tracer.trace(inverse, fullgraph=True)
    traced(np.ones((2, 3, 3)) + np.eye(3))
    for fn in SQUARE:                                           # not square, sizes known at run time only
        check(fn, np.ones((2, 3, 4)))
        check(fn, np.ones((0, 3, 4)))                           # (an empty stack too)
        check(fn, np.ones((2, 2, 3, 4), dtype=np.float32))
    for fn in EVERY:
        check(fn, np.ones(3))                                   # one-dimensional
        check(fn, np.float64(2.0))
    check(lambda: np.linalg.inv(np.ones((2, 3, 4))))            # sizes the trace knows
    check(solve_vector, np.ones((2, 3, 3)), np.ones(4))         # b's rows
    check(solve_matrices, np.ones((2, 3, 3)), np.ones((2, 4, 3)))
    check(solve_matrices, np.ones((3, 3, 3)) + np.eye(3), np.ones((2, 3)))     # (2, 3): a matrix of 2 rows
    check(solve_matrices, np.ones((2, 3, 3)), np.ones((4, 3, 1)))             # stacks that do not broadcast
    check(lambda a: np.linalg.solve(a, np.ones((4, 3, 1))), np.ones((2, 3, 3)))
    check(lambda: np.linalg.solve(np.ones((2, 3, 3)), np.ones((4, 3, 1))))
    check(lambda: np.linalg.solve(np.ones((2, 5, 3, 3)), np.ones((4, 1, 3, 5))))
    check(lambda a: np.linalg.solve(a, 2.0), np.ones((2, 3, 3)))
    check(lambda a, b: np.linalg.lstsq(a, b), np.ones((2, 3, 3)), np.ones((2, 3)))   # lstsq: matrices only
    check(lambda a: np.linalg.lstsq(a, 1.0), np.ones((3, 3)))


def test_stacks_in_a_loop(python_runs):
    """A stack op inside a loop: what each matrix allocates is freed with it."""
    def total(mats, k):
        t = 0.0
        for i in range(k):
            t += np.linalg.det(mats)[i % mats.shape[0]] + np.linalg.svd(mats[:, :2], compute_uv=False).sum()
        return t
    mats = stack((4, 3, 3))
    assert tracer.trace(total, fullgraph=True)(mats, 9) == total(mats, 9)
    assert python_runs == []


def test_one_matrix_functions_refuse_stacks():
    for fn in (lambda a: np.linalg.cond(a), lambda a: np.linalg.matrix_rank(a), lambda a: np.linalg.matrix_power(a, 2)):
        with pytest.raises(tracer.UnsupportedError, match="stack of matrices"):
            tracer.trace(fn, fullgraph=True)(np.ones((2, 3, 3)))


def test_float32_through_numpy_written_functions():
    a = stack((4, 3), dtype=np.float32)
    check(lambda x: np.linalg.cond(x), a)
    check(lambda x: np.linalg.cond(x), np.zeros((3, 3), np.float32))
    check(lambda x: np.linalg.matrix_rank(x), a)
    check(lambda x: np.linalg.cond(x), a.astype(np.float16))
