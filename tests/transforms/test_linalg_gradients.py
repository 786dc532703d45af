"""Gradients through np.linalg (the derivative rules of tracer.ir.linalg_derivatives): solve, inv,
det, slogdet, cholesky, eigh, eigvalsh, qr and svd, on one matrix and on stacks of them.

The oracle is central finite differences of the plain Python function, element by element, on
well-conditioned matrices (symmetric positive definite ones for cholesky, eigh, eigvalsh; distinct
eigenvalues and singular values), and closed forms where there are some (det, slogdet). Each compiled
gradient is checked at two sizes (the sizes are known only at run time: one compile serves both),
and its value is NumPy's bit for bit. cholesky, eigh and eigvalsh read only the lower triangle of
their matrix, as NumPy does, so their gradient is zero above the diagonal (element-wise finite
differences say the same); through a matrix the function makes symmetric, it is the symmetric
gradient JAX gives.
"""
from __future__ import annotations

import numpy as np
import pytest

from tracer import grad, trace, value_and_grad, vjp
from tracer.errors import UnsupportedError
from tracer.ir.linalg_ops import lapack_library

pytestmark = pytest.mark.skipif(lapack_library() is None, reason="NumPy without its bundled 64-bit OpenBLAS")

H = 1e-6


def finite_difference(fn, args, argnum, h=H):
    x = args[argnum]
    g = np.zeros_like(x)
    for i in range(x.size):
        plus = [a.copy() for a in args]
        minus = [a.copy() for a in args]
        plus[argnum].flat[i] += h
        minus[argnum].flat[i] -= h
        g.flat[i] = (fn(*plus) - fn(*minus)) / (2 * h)
    return g


def assert_gradient(g, expected, what=""):
    """Central differences with h = 1e-6 are good to about 1e-9 of the gradient's size here."""
    assert isinstance(g, np.ndarray) and g.shape == expected.shape, what
    np.testing.assert_allclose(g, expected, rtol=1e-6, atol=1e-7 * max(1.0, np.abs(expected).max()), err_msg=what)


# ----------------------------------------------------------------------------- the matrices
def well(rng, n, *lead):
    """A well-conditioned matrix (or stack): near 2 I."""
    return 0.3 * rng.normal(size=(*lead, n, n)) + 2.0 * np.eye(n)


def spd(rng, n, *lead):
    """A symmetric positive definite matrix with well-separated eigenvalues."""
    q, _ = np.linalg.qr(rng.normal(size=(*lead, n, n)))
    w = 1.0 + np.arange(n) + 0.3 * rng.random((*lead, n))
    return (q * w[..., None, :]) @ np.swapaxes(q, -1, -2)


def dense(rng, m, n, *lead):
    return rng.normal(size=(*lead, m, n))


C = np.random.default_rng(99).normal(size=(8, 8))      # fixed weights for the losses


def weights(x):
    """Fixed weights shaped like x's last two axes (or last one)."""
    return C[:x.shape[-2], :x.shape[-1]] if x.ndim > 1 else C[0, :x.shape[-1]]


# ------------------------------------------------------------------------------- the losses
def solve_vector(a, b):
    return np.sum(np.linalg.solve(a, b) ** 2)


def solve_matrix(a, b):
    x = np.linalg.solve(a, b)
    return np.sum(np.sin(x) * weights(x))


def det(a):
    return np.linalg.det(a)


def logdet(a):
    return np.linalg.slogdet(a)[1]


def inv_product(a, x):
    return np.sum(np.linalg.inv(a) @ x)


def cholesky(a):
    return np.sum(np.linalg.cholesky(a))


def cholesky_weighted(a):
    L = np.linalg.cholesky(a)
    return np.sum(np.sin(L) * weights(L))


def eigenvalues(a):
    w = np.linalg.eigh(a)[0]
    return np.sum(w * weights(w))


def eigenvectors(a):
    v = np.linalg.eigh(a)[1]
    return np.sum(v ** 2 * weights(v))        # (v[:, k] ** 2: the sign of each eigenvector cancels)


def eigenpairs(a):
    w, v = np.linalg.eigh(a)
    return np.sum(w * np.abs(v[0])) + np.sum(np.cos(w))


def eigvalsh(a):
    w = np.linalg.eigvalsh(a)
    return np.sum(np.exp(w / 4.0) * weights(w))


def qr_both(a):
    q, r = np.linalg.qr(a)
    return np.sum(np.sin(q)) + np.sum(np.cos(r))


def qr_r(a):
    return np.sum(np.linalg.qr(a, mode="r") ** 2)


def singular_values(a):
    s = np.linalg.svd(a, compute_uv=False)
    return np.sum(s * weights(s))


def svdvals(a):
    return np.sum(np.sqrt(np.linalg.svdvals(a)))


def svd_reduced(a):
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    return np.sum(u ** 2 * weights(u)) + np.sum(s ** 2) + np.sum(vt ** 2 * weights(vt))


def svd_full_square(a):
    u, s, vt = np.linalg.svd(a)
    return np.sum(u ** 4) + np.sum(np.log(s)) + np.sum(vt ** 2 * weights(vt))


def svd_full_leading(a):
    """Full matrices of a tall matrix, through their first min(m, n) columns only."""
    u, s, vt = np.linalg.svd(a)
    k = s.shape[-1]
    return np.sum(u[..., :, :k] ** 4) + np.sum(s) + np.sum(vt ** 4)


# (loss, make(rng, n) -> args, argnums)
CASES = {
    "solve_vector": (solve_vector, lambda r, n: (well(r, n), r.normal(size=n)), (0, 1)),
    "solve_matrix": (solve_matrix, lambda r, n: (well(r, n), r.normal(size=(n, 2))), (0, 1)),
    "det": (det, lambda r, n: (well(r, n),), (0,)),
    "slogdet": (logdet, lambda r, n: (well(r, n),), (0,)),
    "slogdet_negative": (logdet, lambda r, n: (-well(r, n),), (0,)),
    "inv": (inv_product, lambda r, n: (well(r, n), r.normal(size=(n, 3))), (0, 1)),
    "cholesky": (cholesky, lambda r, n: (spd(r, n),), (0,)),
    "cholesky_weighted": (cholesky_weighted, lambda r, n: (spd(r, n),), (0,)),
    "eigh_values": (eigenvalues, lambda r, n: (spd(r, n),), (0,)),
    "eigh_vectors": (eigenvectors, lambda r, n: (spd(r, n),), (0,)),
    "eigh_both": (eigenpairs, lambda r, n: (spd(r, n),), (0,)),
    "eigvalsh": (eigvalsh, lambda r, n: (spd(r, n),), (0,)),
    "qr_tall": (qr_both, lambda r, n: (dense(r, n + 2, n),), (0,)),
    "qr_square": (qr_both, lambda r, n: (dense(r, n, n),), (0,)),
    "qr_wide": (qr_both, lambda r, n: (dense(r, n, n + 2),), (0,)),
    "qr_r": (qr_r, lambda r, n: (dense(r, n + 1, n),), (0,)),
    "svd_values": (singular_values, lambda r, n: (dense(r, n + 2, n),), (0,)),
    "svdvals": (svdvals, lambda r, n: (dense(r, n, n + 1),), (0,)),
    "svd_tall": (svd_reduced, lambda r, n: (dense(r, n + 2, n),), (0,)),
    "svd_wide": (svd_reduced, lambda r, n: (dense(r, n, n + 2),), (0,)),
    "svd_full_square": (svd_full_square, lambda r, n: (dense(r, n, n),), (0,)),
    "svd_full_tall": (svd_full_leading, lambda r, n: (dense(r, n + 2, n),), (0,)),
}


@pytest.mark.parametrize("name", CASES)
def test_gradient_matches_finite_differences(name):
    fn, make, argnums = CASES[name]
    compiled = value_and_grad(fn, argnums=argnums)
    rng = np.random.default_rng(len(name))
    for n in (3, 5):
        args = make(rng, n)
        value, grads = compiled(*args)
        assert value == fn(*args)                 # the forward is NumPy's, bit for bit
        for g, i in zip(grads, argnums):
            assert_gradient(g, finite_difference(fn, args, i), f"{name}: d/d arg{i} at n={n}")
    assert len(compiled.specializations) == 1     # one compile served both sizes


# (loss, make(rng) -> args, argnums): the leading axes of a stack, and of a stack of stacks
STACKS = {
    "solve_vector": (solve_vector, lambda r: (well(r, 3, 4), r.normal(size=3)), (0, 1)),
    "solve_matrices": (solve_matrix, lambda r: (well(r, 3, 2, 2), r.normal(size=(2, 2, 3, 2))), (0, 1)),
    "solve_broadcast": (solve_matrix, lambda r: (well(r, 3, 4), r.normal(size=(3, 2))), (0, 1)),
    "det": (lambda a: np.sum(np.linalg.det(a) ** 2), lambda r: (well(r, 3, 4),), (0,)),
    "slogdet": (lambda a: np.sum(np.linalg.slogdet(a)[1] ** 2), lambda r: (well(r, 3, 2, 3),), (0,)),
    "inv": (lambda a: np.sum(np.sin(np.linalg.inv(a))), lambda r: (well(r, 3, 4),), (0,)),
    "cholesky": (lambda a: np.sum(np.cos(np.linalg.cholesky(a))), lambda r: (spd(r, 3, 4),), (0,)),
    "eigh": (lambda a: np.sum(np.linalg.eigh(a)[0] ** 2) + np.sum(np.linalg.eigh(a)[1] ** 4),
             lambda r: (spd(r, 3, 2, 2),), (0,)),
    "eigvalsh": (lambda a: np.sum(np.sin(np.linalg.eigvalsh(a))), lambda r: (spd(r, 3, 4),), (0,)),
    "qr": (qr_both, lambda r: (dense(r, 4, 3, 3),), (0,)),
    "qr_wide": (qr_both, lambda r: (dense(r, 2, 4, 3),), (0,)),
    "svd": (lambda a: np.sum(np.linalg.svd(a, full_matrices=False)[0] ** 4) + np.sum(np.linalg.svd(a)[1] ** 2),
            lambda r: (dense(r, 4, 3, 3),), (0,)),
    "svd_values": (lambda a: np.sum(np.linalg.svd(a, compute_uv=False) ** 2 * np.linalg.svd(a, compute_uv=False)),
                   lambda r: (dense(r, 3, 4, 2, 2),), (0,)),
}


@pytest.mark.parametrize("name", STACKS)
def test_gradient_of_a_stack_matches_finite_differences(name):
    fn, make, argnums = STACKS[name]
    args = make(np.random.default_rng(len(name) + 7))
    value, grads = value_and_grad(fn, argnums=argnums)(*args)
    assert value == fn(*args)
    for g, i in zip(grads, argnums):
        assert_gradient(g, finite_difference(fn, args, i), f"{name}: d/d arg{i}")


# matrices the function builds from floats: sizes the trace knows
def _pair(x, y):
    return np.array([[x, y], [y, 3.0]])


def _tall(x, y):
    return np.array([[x, y], [y, 3.0], [1.0, x]])


BUILT = {
    "solve": lambda x, y: np.sum(np.linalg.solve(_pair(x, y), np.array([1.0, x]))),
    "inv": lambda x, y: np.sum(np.linalg.inv(_pair(x, y)) * np.array([[1.0, 2.0], [3.0, 4.0]])),
    "det": lambda x, y: np.linalg.det(np.array([[x, y], [y * x, 2.0 + x]])),
    "cholesky": lambda x, y: np.sum(np.linalg.cholesky(_pair(x, y))),
    "eigh": lambda x, y: np.sum(np.linalg.eigh(_pair(x, y))[1][0] ** 2) + np.linalg.eigvalsh(_pair(x, y))[1],
    "qr": lambda x, y: np.sum(np.sin(np.linalg.qr(_tall(x, y))[0])) + np.linalg.qr(_tall(x, y))[1][1, 1],
    "svd": lambda x, y: (np.sum(np.linalg.svd(_tall(x, y).T)[2][:2] ** 2 * np.arange(3.0))
                         + np.linalg.svd(_tall(x, y))[1][0]),
}


@pytest.mark.parametrize("name", BUILT)
def test_gradient_through_a_matrix_of_known_size(name):
    fn = BUILT[name]
    x, y = 2.5, 0.7
    gx, gy = grad(fn, argnums=(0, 1))(x, y)
    assert gx == pytest.approx((fn(x + H, y) - fn(x - H, y)) / (2 * H), rel=1e-7, abs=1e-8)
    assert gy == pytest.approx((fn(x, y + H) - fn(x, y - H)) / (2 * H), rel=1e-7, abs=1e-8)


# ------------------------------------------------------------------------------ closed forms
def test_det_and_slogdet_gradients_are_the_cofactor_forms():
    a = well(np.random.default_rng(1), 4)
    np.testing.assert_allclose(grad(det)(a), np.linalg.det(a) * np.linalg.inv(a).T, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(grad(logdet)(a), np.linalg.inv(a).T, rtol=1e-12, atol=1e-14)


def test_sign_of_slogdet_has_zero_gradient():
    a = well(np.random.default_rng(2), 3)
    g = grad(lambda a: np.linalg.slogdet(a)[0] * 2.0)(a)
    assert np.array_equal(g, np.zeros((3, 3)))


def test_solve_gradient_is_the_adjoint_solve():
    rng = np.random.default_rng(3)
    a, b = well(rng, 4), rng.normal(size=4)
    ga, gb = grad(solve_vector, argnums=(0, 1))(a, b)
    x = np.linalg.solve(a, b)
    adjoint = np.linalg.solve(a.T, 2.0 * x)
    np.testing.assert_allclose(gb, adjoint, rtol=1e-12)
    np.testing.assert_allclose(ga, -np.outer(adjoint, x), rtol=1e-12)


@pytest.mark.parametrize("fn", [cholesky_weighted, eigenvectors, eigvalsh], ids=lambda f: f.__name__)
def test_symmetric_inputs_read_through_their_lower_triangle(fn):
    """NumPy reads the lower triangle only: the gradient is zero above the diagonal, and through
    a matrix made symmetric in the function it is the symmetric one (as JAX's)."""
    rng = np.random.default_rng(4)
    a = spd(rng, 4)
    g = grad(fn)(a)
    assert np.array_equal(np.triu(g, 1), np.zeros((4, 4)))

    def symmetrized(b):
        return fn((b + b.T) / 2.0)
    gs = grad(symmetrized)(a)
    np.testing.assert_allclose(gs, gs.T, rtol=1e-12, atol=1e-14)
    assert_gradient(gs, finite_difference(symmetrized, (a,), 0))
    np.testing.assert_allclose(gs + gs.T - np.diag(np.diag(gs)), g + np.triu(g.T, 1), rtol=1e-10, atol=1e-13)


# --------------------------------------------------------------------- composing with the rest
def test_second_derivative_of_logdet():
    rng = np.random.default_rng(5)
    a, c = well(rng, 3), rng.normal(size=(3, 3))

    def directional(a):
        return np.sum(grad(logdet)(a) * c)        # sum(inv(a).T * c)
    expected = finite_difference(lambda a: np.sum(np.linalg.inv(a).T * c), (a,), 0)
    assert_gradient(grad(directional)(a), expected)


def test_gradient_inside_a_traced_step():
    rng = np.random.default_rng(6)
    a = spd(rng, 4)

    def loss(a):
        return np.sum(np.linalg.eigvalsh(a) ** 2) + np.linalg.slogdet(a)[1]

    @trace
    def step(a):
        return a - 0.01 * grad(loss)(a)
    # (FMA fusion may fuse the step's multiply-subtract with the gradient's last ops: to rounding)
    np.testing.assert_allclose(step(a), a - 0.01 * grad(loss)(a), rtol=1e-14, atol=1e-16)


def test_vjp_of_a_tuple_result():
    a = well(np.random.default_rng(7), 3)
    value, pullback = vjp(lambda a: np.linalg.slogdet(a), a)
    assert value == tuple(np.linalg.slogdet(a))
    (g,) = pullback((0.0, 1.0))
    np.testing.assert_allclose(g, np.linalg.inv(a).T, rtol=1e-12)


def test_least_squares_fit_through_solve():
    """A ridge regression's validation loss, differentiated with respect to the data."""
    rng = np.random.default_rng(8)
    X, y, Xv, yv = rng.normal(size=(20, 4)), rng.normal(size=20), rng.normal(size=(5, 4)), rng.normal(size=5)

    def validation(X, y):
        w = np.linalg.solve(X.T @ X + 0.5 * np.eye(X.shape[1]), X.T @ y)
        return np.sum((Xv @ w - yv) ** 2)
    gX, gy = grad(validation, argnums=(0, 1))(X, y)
    assert_gradient(gX, finite_difference(validation, (X, y), 0))
    assert_gradient(gy, finite_difference(validation, (X, y), 1))


# --------------------------------------------------------------------------------- refusals
def test_qr_complete_is_refused():
    with pytest.raises(UnsupportedError, match="mode='complete'"):
        grad(lambda a: np.sum(np.linalg.qr(a, mode="complete")[0]))(dense(np.random.default_rng(9), 4, 3))


def test_lstsq_is_refused():
    rng = np.random.default_rng(10)
    with pytest.raises(UnsupportedError, match="linalg_lstsq"):
        grad(lambda a, b: np.sum(np.linalg.lstsq(a, b)[0]))(rng.normal(size=(5, 3)), rng.normal(size=5))


def test_float32_matrices_carry_no_gradient():
    a = well(np.random.default_rng(11), 3)
    with pytest.raises(UnsupportedError, match="float32"):
        grad(lambda a: float(np.linalg.det(a.astype(np.float32))))(a)
