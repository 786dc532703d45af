"""NumPy kernels, part C: models and numerical methods as written in research code (ODE systems,
factorizations by loops, Monte Carlo sweeps on pre-drawn numbers, particle-in-cell deposits,
periodic index arithmetic, float32 and int64 data). Assembled with parts A and B in
`numpy_kernels.py`.

Each kernel is plain NumPy code written the way scientific Python code is written (no tracer
import, nothing shaped around what the tracer compiles), registered with `@kernel(make_args)`:
`make_args()` gives a fresh tuple of deterministic example arguments on every call.
"""
from __future__ import annotations

import math

import numpy as np
from kernel_registry import Kernels, rng

KERNELS = Kernels()
kernel = KERNELS.register


# ------------------------------------------------------------------------------ ODEs and dynamics
def lorenz_rhs(s, sigma=10.0, rho=28.0, beta=8.0 / 3.0):
    x, y, z = s[0], s[1], s[2]
    return np.array([sigma * (y - x), x * (rho - z) - y, x * y - beta * z])


@kernel(lambda: (np.array([1.0, 1.0, 1.0]), 0.005, 200))
def lorenz_rk4_trajectory(state, dt, steps):
    traj = np.empty((steps + 1, 3))
    traj[0] = state
    s = state.copy()
    for i in range(steps):
        k1 = lorenz_rhs(s)
        k2 = lorenz_rhs(s + 0.5 * dt * k1)
        k3 = lorenz_rhs(s + 0.5 * dt * k2)
        k4 = lorenz_rhs(s + dt * k3)
        s = s + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        traj[i + 1] = s
    return traj


@kernel(lambda: (0.5 * rng(110).standard_normal((8, 3)), 0.5 * rng(111).standard_normal((8, 8)),
                 rng(112).standard_normal((25, 3))))
def rnn_forward_tanh(Wx, Wh, xs):
    """Hidden states of an Elman RNN over a sequence (rows of xs)."""
    h = np.zeros(Wh.shape[0])
    states = np.zeros((xs.shape[0], Wh.shape[0]))
    for t in range(xs.shape[0]):
        h = np.tanh(Wx @ xs[t] + Wh @ h)
        states[t] = h
    return states


@kernel(lambda: (np.zeros(50), 0.3, 80))
def heat_equation_neumann_source(u, r, steps):
    """Heated rod with insulated ends (zero-flux) and a source in the middle, in place."""
    source = np.zeros_like(u)
    source[len(u) // 2 - 2:len(u) // 2 + 3] = 1.0
    for _ in range(steps):
        u[1:-1] += r * (u[2:] - 2.0 * u[1:-1] + u[:-2]) + 0.01 * source[1:-1]
        u[0] = u[1]
        u[-1] = u[-2]
    return u.sum()


@kernel(lambda: (rng(113).uniform(0.0, 1.0, 100), 3.8, 50))
def logistic_map_iterate(x, r, steps):
    for _ in range(steps):
        x = r * x * (1.0 - x)
    return x


@kernel(lambda: (np.cumsum(rng(114).standard_normal(150)) + 100.0,))
def max_drawdown(prices):
    running_max = np.maximum.accumulate(prices)
    drawdowns = (running_max - prices) / running_max
    return drawdowns.max()


@kernel(lambda: (2.0, 0.01, 3.0))
def sample_sine_on_time_grid(T, dt, freq):
    t = np.arange(0.0, T, dt)
    return t, np.sin(2.0 * np.pi * freq * t)


# ------------------------------------------------------------------------------ linear algebra by loops
@kernel(lambda: (rng(115).standard_normal((10, 6)),))
def gram_schmidt_qr(A):
    """Thin QR by modified Gram-Schmidt on the columns of A."""
    m, n = A.shape
    Q = np.zeros((m, n))
    R = np.zeros((n, n))
    V = A.copy()
    for j in range(n):
        R[j, j] = np.sqrt(np.dot(V[:, j], V[:, j]))
        Q[:, j] = V[:, j] / R[j, j]
        for k in range(j + 1, n):
            R[j, k] = np.dot(Q[:, j], V[:, k])
            V[:, k] -= R[j, k] * Q[:, j]
    return Q, R


@kernel(lambda: (rng(116).standard_normal((9, 9)) @ rng(116).standard_normal((9, 9)).T + 9.0 * np.eye(9),))
def cholesky_loops(A):
    n = A.shape[0]
    L = np.zeros_like(A)
    for i in range(n):
        for j in range(i + 1):
            s = A[i, j]
            for k in range(j):
                s -= L[i, k] * L[j, k]
            if i == j:
                L[i, i] = math.sqrt(s)
            else:
                L[i, j] = s / L[j, j]
    return L


@kernel(lambda: (rng(117).standard_normal((12, 12)), rng(118).standard_normal(12), rng(119).standard_normal(12), 0.1))
def rank_one_update_inplace(A, u, v, alpha):
    A += alpha * np.outer(u, v)
    return np.trace(A)


@kernel(lambda: (rng(120).standard_normal((20, 7)),))
def row_argmax_loops(X):
    out = np.zeros(X.shape[0], dtype=np.int64)
    for i in range(X.shape[0]):
        best = 0
        for j in range(1, X.shape[1]):
            if X[i, j] > X[i, best]:
                best = j
        out[i] = best
    return out


@kernel(lambda: (np.array([0.1, 0.2, 0.3]), 1e-12, 200))
def fixed_point_cosine(x0, tol, maxiter):
    """Solve x = cos(x) elementwise by fixed-point iteration with an allclose stopping test."""
    x = x0
    for i in range(maxiter):
        x_new = np.cos(x)
        if np.allclose(x_new, x, rtol=0.0, atol=tol):
            return x_new, i + 1
        x = x_new
    return x, maxiter


# ------------------------------------------------------------------------------ learning
@kernel(lambda: (np.zeros(4), rng(121).standard_normal((60, 4)), (rng(122).random(60) < 0.5).astype(np.float64), 0.5, 30))
def logistic_regression_training(w, X, y, lr, epochs):
    """Full-batch gradient descent on the mean log-loss, updating w in place; returns the last loss."""
    loss = 0.0
    for _ in range(epochs):
        p = 1.0 / (1.0 + np.exp(-(X @ w)))
        loss = -np.mean(y * np.log(p) + (1.0 - y) * np.log(1.0 - p))
        w -= lr * X.T @ (p - y) / len(y)
    return loss


@kernel(lambda: (rng(123).standard_normal((30, 2)), 1.0))
def rbf_kernel_matrix(X, gamma):
    sq = np.sum(X ** 2, axis=1)
    d2 = sq[:, None] + sq[None, :] - 2.0 * X @ X.T
    return np.exp(-gamma * np.maximum(d2, 0.0))


# ------------------------------------------------------------------------------ lattices and particles
@kernel(lambda: (np.where(rng(124).random((12, 12)) < 0.5, -1, 1).astype(np.int64), 0.6, rng(125).random((12, 12))))
def ising_metropolis_sweep(spins, beta, u):
    """One Metropolis sweep over a periodic lattice, in place; u holds pre-drawn uniforms."""
    n, m = spins.shape
    flips = 0
    for i in range(n):
        for j in range(m):
            nb = spins[(i + 1) % n, j] + spins[i - 1, j] + spins[i, (j + 1) % m] + spins[i, j - 1]
            dE = 2 * spins[i, j] * nb
            if dE <= 0 or u[i, j] < np.exp(-beta * dE):
                spins[i, j] = -spins[i, j]
                flips += 1
    return flips


@kernel(lambda: (rng(126).uniform(-1.0, 11.0, 80), 10.0, 16))
def cloud_in_cell_density(x, L, n):
    """Linear (cloud-in-cell) deposit of unit charges onto a periodic grid of n cells."""
    dx = L / n
    rho = np.zeros(n)
    for p in x:
        s = p / dx
        i = int(np.floor(s))
        w = s - i
        rho[i % n] += 1.0 - w
        rho[(i + 1) % n] += w
    return rho / dx


@kernel(lambda: (rng(127).standard_normal(60),))
def periodic_smoothing_loop(x):
    """Three-point average with wrap-around, relying on x[-1] for the left neighbour of x[0]."""
    n = len(x)
    out = np.empty_like(x)
    for i in range(n):
        out[i] = (x[i - 1] + x[i] + x[(i + 1) % n]) / 3.0
    return out


@kernel(lambda: (rng(128).exponential(2.0, 80),))
def survival_function_reverse_cumsum(durations):
    """Fraction of samples still alive at each sorted duration (via a reversed cumulative sum)."""
    d = np.sort(durations)
    at_risk = np.cumsum(np.ones_like(d)[::-1])[::-1]
    return d, at_risk / len(d)


# ------------------------------------------------------------------------------ other dtypes
@kernel(lambda: (rng(129).random((20, 20), dtype=np.float32), 1.3, -0.1))
def brighten_float32_image(img, gain, bias):
    """Gain and bias on a float32 image; Python-float scalars keep it float32 (NEP 50)."""
    return np.clip(img * gain + bias, 0.0, 1.0)


@kernel(lambda: (rng(130).integers(0, 256, (16, 16)).astype(np.int64), 6))
def quantize_gray_levels(img, levels):
    """Map 8-bit grey values (as int64) to `levels` evenly spaced levels, integer arithmetic only."""
    step = 256 // levels
    q = img // step
    q = np.minimum(q, levels - 1)
    return q * (255 // (levels - 1))


@kernel(lambda: (rng(131).integers(-50, 50, 100),))
def integer_floor_div_and_mod(values):
    """Block index and offset of signed integer positions, blocks of 8 (floor semantics)."""
    return values // 8, values % 8, (values % 8).sum()


@kernel(lambda: (rng(132).standard_normal((10, 10)),))
def symmetric_part_and_antisymmetry(A):
    S = 0.5 * (A + A.T)
    K = 0.5 * (A - A.T)
    return S, np.abs(K).max() / np.abs(A).max()
