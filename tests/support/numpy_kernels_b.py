"""NumPy kernels, part B: physics steps, small solvers, signal processing, masks and grouping.
Assembled with part A in `numpy_kernels.py`.

Each kernel is plain NumPy code written the way scientific Python code is written (no tracer
import, nothing shaped around what the tracer compiles), registered with `@kernel(make_args)`:
`make_args()` gives a fresh tuple of deterministic example arguments on every call.
"""
from __future__ import annotations

import numpy as np
from kernel_registry import Kernels, rng

KERNELS = Kernels()
kernel = KERNELS.register


def _diagonally_dominant(n, seed):
    A = rng(seed).uniform(-1.0, 1.0, (n, n))
    return A + np.diag(np.abs(A).sum(axis=1) + 1.0)


def _spd(n, seed):
    M = rng(seed).standard_normal((n, n))
    return M @ M.T + n * np.eye(n)


# ------------------------------------------------------------------------------ physics
def gravitational_accelerations(pos, mass, eps):
    """Softened Newtonian acceleration of each body (G = 1)."""
    d = pos[np.newaxis, :, :] - pos[:, np.newaxis, :]
    r2 = np.sum(d ** 2, axis=-1) + eps ** 2
    inv_r3 = r2 ** -1.5
    np.fill_diagonal(inv_r3, 0.0)
    return np.sum(d * (inv_r3 * mass)[:, :, np.newaxis], axis=1)


@kernel(lambda: (rng(50).standard_normal((20, 3)), rng(51).uniform(0.5, 2.0, 20), 0.1))
def nbody_accelerations(pos, mass, eps):
    return gravitational_accelerations(pos, mass, eps)


@kernel(lambda: (rng(52).standard_normal((12, 3)), 0.1 * rng(53).standard_normal((12, 3)),
                 rng(54).uniform(0.5, 2.0, 12), 0.01, 20))
def nbody_leapfrog_inplace(pos, vel, mass, dt, steps):
    """Kick-drift-kick leapfrog, updating pos and vel in place."""
    acc = gravitational_accelerations(pos, mass, 0.1)
    for _ in range(steps):
        vel += 0.5 * dt * acc
        pos += dt * vel
        acc = gravitational_accelerations(pos, mass, 0.1)
        vel += 0.5 * dt * acc


@kernel(lambda: (rng(55).standard_normal((15, 3)) * 3.0, rng(56).standard_normal((15, 3)), rng(57).uniform(0.5, 2.0, 15)))
def nbody_total_energy(pos, vel, mass):
    kinetic = 0.5 * np.sum(mass * np.sum(vel ** 2, axis=1))
    potential = 0.0
    n = len(mass)
    for i in range(n):
        for j in range(i + 1, n):
            r = np.sqrt(np.sum((pos[i] - pos[j]) ** 2))
            potential -= mass[i] * mass[j] / r
    return kinetic + potential


@kernel(lambda: (np.arange(30.0) + 0.1 * rng(58).standard_normal(30), np.zeros(30), 50.0, 1.0, 0.01, 40))
def spring_chain_inplace(x, v, k, m, dt, steps):
    """Masses joined by springs of rest length 1, semi-implicit Euler, updating x and v in place."""
    for _ in range(steps):
        f = np.zeros_like(x)
        stretch = np.diff(x) - 1.0
        f[:-1] += k * stretch
        f[1:] -= k * stretch
        v += dt * f / m
        x += dt * v


@kernel(lambda: (1.0, 0.0, 4.0, 0.3, 0.01, 150))
def damped_oscillator_trajectory(x0, v0, k, c, dt, n):
    xs = np.empty(n)
    x, v = x0, v0
    for i in range(n):
        a = -k * x - c * v
        v += a * dt
        x += v * dt
        xs[i] = x
    return xs


@kernel(lambda: (np.stack(np.meshgrid(np.arange(4.0), np.arange(4.0), np.arange(2.0)), axis=-1).reshape(-1, 3) * 1.12
                 + 0.05 * rng(59).standard_normal((32, 3)), 1.0, 1.0))
def lennard_jones_energy(pos, sigma, epsilon):
    energy = 0.0
    n = pos.shape[0]
    for i in range(n - 1):
        d = pos[i + 1:] - pos[i]
        r2 = np.sum(d * d, axis=1)
        s6 = (sigma * sigma / r2) ** 3
        energy += np.sum(4.0 * epsilon * (s6 * s6 - s6))
    return energy


@kernel(lambda: (rng(60).uniform(0.0, 10.0, (50, 2)), rng(61).standard_normal((50, 2)) * 4.0, 0.5, 10.0))
def particles_reflect_in_box(pos, vel, dt, L):
    """Move particles and bounce them off the walls of [0, L]^2, in place."""
    pos += vel * dt
    low = pos < 0.0
    high = pos > L
    pos[low] = -pos[low]
    pos[high] = 2.0 * L - pos[high]
    vel[low | high] *= -1.0


@kernel(lambda: (30.0, 40.0, 0.02, 0.01))
def projectile_range_with_drag(v0, angle_deg, drag, dt):
    """Horizontal distance travelled before landing, with quadratic air drag (Euler steps)."""
    theta = np.radians(angle_deg)
    x, y = 0.0, 0.0
    vx, vy = v0 * np.cos(theta), v0 * np.sin(theta)
    while y >= 0.0:
        speed = np.sqrt(vx * vx + vy * vy)
        vx -= drag * speed * vx * dt
        vy -= (9.81 + drag * speed * vy) * dt
        x += vx * dt
        y += vy * dt
    return x


@kernel(lambda: (1.2, 0.0, 9.81, 0.01, 200))
def pendulum_rk4(theta0, omega0, g_over_l, dt, steps):
    """Angles of a nonlinear pendulum integrated with classic Runge-Kutta."""
    out = np.zeros(steps + 1)
    out[0] = theta0
    th, om = theta0, omega0
    for i in range(steps):
        k1t, k1o = om, -g_over_l * np.sin(th)
        k2t, k2o = om + 0.5 * dt * k1o, -g_over_l * np.sin(th + 0.5 * dt * k1t)
        k3t, k3o = om + 0.5 * dt * k2o, -g_over_l * np.sin(th + 0.5 * dt * k2t)
        k4t, k4o = om + dt * k3o, -g_over_l * np.sin(th + dt * k3t)
        th += dt / 6.0 * (k1t + 2 * k2t + 2 * k3t + k4t)
        om += dt / 6.0 * (k1o + 2 * k2o + 2 * k3o + k4o)
        out[i + 1] = th
    return out


@kernel(lambda: (np.where(rng(62).random((16, 16)) < 0.5, -1, 1).astype(np.int64),))
def ising_energy_and_magnetization(spins):
    """Nearest-neighbour energy (J = 1, periodic) and magnetization of a +-1 spin lattice."""
    right = np.roll(spins, -1, axis=1)
    down = np.roll(spins, -1, axis=0)
    energy = -np.sum(spins * (right + down))
    return energy, spins.sum()


# ------------------------------------------------------------------------------ small solvers
@kernel(lambda: (_diagonally_dominant(12, 63), rng(64).standard_normal(12), 40))
def jacobi_iteration(A, b, iters):
    D = np.diag(A)
    R = A - np.diagflat(D)
    x = np.zeros_like(b)
    for _ in range(iters):
        x = (b - R @ x) / D
    return x


@kernel(lambda: (_diagonally_dominant(10, 65), rng(66).standard_normal(10), 25))
def gauss_seidel(A, b, iters):
    n = len(b)
    x = np.zeros(n)
    for _ in range(iters):
        for i in range(n):
            s = 0.0
            for j in range(n):
                if j != i:
                    s += A[i, j] * x[j]
            x[i] = (b[i] - s) / A[i, i]
    return x


@kernel(lambda: (_spd(15, 67), 100))
def power_iteration(A, iters):
    """Dominant eigenvalue (Rayleigh quotient) and unit eigenvector."""
    v = np.ones(A.shape[0]) / np.sqrt(A.shape[0])
    lam = 0.0
    for _ in range(iters):
        w = A @ v
        lam = v @ w
        v = w / np.linalg.norm(w)
    return lam, v


@kernel(lambda: (rng(68).uniform(0.1, 50.0, 60), 1e-12))
def newton_sqrt_elementwise(a, tol):
    x = np.where(a > 1.0, a, 1.0)
    while True:
        x_new = 0.5 * (x + a / x)
        if np.max(np.abs(x_new - x)) < tol:
            return x_new
        x = x_new


@kernel(lambda: (np.array([1.0, -6.0, 11.0, -6.1]), 3.6, 1e-13, 50))
def newton_polynomial_root(coeffs, x0, tol, maxiter):
    """A root of the polynomial (highest power first) by Newton's method, Horner evaluation."""
    x = x0
    for _ in range(maxiter):
        p = 0.0
        dp = 0.0
        for c in coeffs:
            dp = dp * x + p
            p = p * x + c
        step = p / dp
        x -= step
        if abs(step) < tol:
            return x
    raise RuntimeError(f"Newton's method did not converge in {maxiter} iterations")


@kernel(lambda: (_spd(20, 69), rng(70).standard_normal(20), 1e-10, 100))
def conjugate_gradient(A, b, tol, maxiter):
    x = np.zeros_like(b)
    r = b - A @ x
    p = r.copy()
    rs = r @ r
    for _ in range(maxiter):
        Ap = A @ p
        alpha = rs / (p @ Ap)
        x += alpha * p
        r -= alpha * Ap
        rs_new = r @ r
        if np.sqrt(rs_new) < tol:
            break
        p = r + (rs_new / rs) * p
        rs = rs_new
    return x


@kernel(lambda: (np.triu(rng(71).uniform(-1.0, 1.0, (12, 12))) + 3.0 * np.eye(12), rng(72).standard_normal(12)))
def back_substitution(U, b):
    n = len(b)
    x = np.zeros(n)
    for i in range(n - 1, -1, -1):
        x[i] = (b[i] - U[i, i + 1:] @ x[i + 1:]) / U[i, i]
    return x


@kernel(lambda: (_diagonally_dominant(8, 73),))
def lu_decomposition_doolittle(A):
    n = A.shape[0]
    L = np.eye(n)
    U = np.zeros((n, n))
    for i in range(n):
        for k in range(i, n):
            U[i, k] = A[i, k] - np.dot(L[i, :i], U[:i, k])
        for k in range(i + 1, n):
            L[k, i] = (A[k, i] - np.dot(L[k, :i], U[:i, i])) / U[i, i]
    return L, U


@kernel(lambda: (np.linspace(0.0, 2.0, 81),))
def trapezoid_integral_of_gaussian(x):
    y = np.exp(-x ** 2)
    return np.sum((x[1:] - x[:-1]) * (y[1:] + y[:-1])) / 2.0


@kernel(lambda: (0.0, np.pi, 64))
def simpson_integral_of_sine(a, b, n):
    x = np.linspace(a, b, n + 1)
    y = np.sin(x)
    h = (b - a) / n
    return h / 3.0 * (y[0] + y[-1] + 4.0 * y[1:-1:2].sum() + 2.0 * y[2:-1:2].sum())


@kernel(lambda: (rng(74).standard_normal((80, 3)), rng(75).standard_normal(80), 0.05, 100))
def least_squares_gradient_descent(X, y, lr, steps):
    w = np.zeros(X.shape[1])
    n = X.shape[0]
    for _ in range(steps):
        residual = X @ w - y
        w -= lr * (X.T @ residual) / n
    return w


@kernel(lambda: (np.array([0.2, 0.5, -0.1, 0.4]),))
def normalize_weights(w):
    """Weights rescaled to sum to 1; negative weights are an error."""
    if np.any(w < 0):
        raise ValueError(f"weights must be non-negative, got min {w.min()}")
    return w / w.sum()


# ------------------------------------------------------------------------------ signal processing
@kernel(lambda: (np.cumsum(rng(76).standard_normal(150)), 0.1))
def exponential_moving_average(x, alpha):
    out = np.empty_like(x)
    out[0] = x[0]
    for i in range(1, len(x)):
        out[i] = alpha * x[i] + (1.0 - alpha) * out[i - 1]
    return out


@kernel(lambda: (rng(77).standard_normal(100), 7))
def moving_average_cumsum(x, w):
    c = np.cumsum(np.concatenate(([0.0], x)))
    return (c[w:] - c[:-w]) / w


@kernel(lambda: (rng(78).standard_normal(120), np.array([0.25, 0.5, 0.75, 0.5, 0.25])))
def convolve_valid_loops(x, k):
    n, m = len(x), len(k)
    out = np.zeros(n - m + 1)
    for i in range(n - m + 1):
        acc = 0.0
        for j in range(m):
            acc += x[i + j] * k[m - 1 - j]
        out[i] = acc
    return out


@kernel(lambda: (np.sin(np.linspace(0.0, 20.0, 200)) + 0.3 * rng(79).standard_normal(200), 0.1, 21))
def fir_lowpass_windowed_sinc(x, cutoff, ntaps):
    n = np.arange(ntaps) - (ntaps - 1) / 2
    taps = 2 * cutoff * np.sinc(2 * cutoff * n) * np.hamming(ntaps)
    taps /= taps.sum()
    return np.convolve(x, taps, mode="same")


@kernel(lambda: (np.linspace(0.0, 1.0, 100) + 0.2 * np.sin(np.arange(100.0)), 0.05, 0.01))
def iir_highpass_first_order(x, rc, dt):
    a = rc / (rc + dt)
    y = np.zeros_like(x)
    y[0] = x[0]
    for i in range(1, len(x)):
        y[i] = a * (y[i - 1] + x[i] - x[i - 1])
    return y


@kernel(lambda: (rng(80).standard_normal(150),))
def zero_crossing_rate(x):
    signs = np.sign(x)
    return np.count_nonzero(np.diff(signs)) / (len(x) - 1)


@kernel(lambda: (np.sin(np.arange(120) * 0.3) + 0.5 * rng(81).standard_normal(120), 20))
def autocorrelation(x, maxlag):
    xc = x - x.mean()
    denom = np.dot(xc, xc)
    r = np.empty(maxlag + 1)
    for lag in range(maxlag + 1):
        r[lag] = np.dot(xc[:len(x) - lag], xc[lag:]) / denom
    return r


@kernel(lambda: (np.sin(np.linspace(0.0, 12.0, 150)) * np.linspace(1.0, 2.0, 150) + 0.1 * rng(82).standard_normal(150), 0.5))
def local_peak_indices(x, min_height):
    is_peak = (x[1:-1] > x[:-2]) & (x[1:-1] > x[2:]) & (x[1:-1] > min_height)
    return np.nonzero(is_peak)[0] + 1


@kernel(lambda: (rng(83).standard_normal(90), 9))
def block_mean_downsample(x, factor):
    n = len(x) // factor * factor
    return x[:n].reshape(-1, factor).mean(axis=1)


@kernel(lambda: (np.cos(2 * np.pi * 5 * np.arange(64) / 64) + 0.1 * rng(84).standard_normal(64),))
def dft_magnitude_loops(x):
    """|X[k]| for k up to n/2 by the definition of the DFT, no FFT."""
    n = len(x)
    mags = np.zeros(n // 2 + 1)
    for k in range(n // 2 + 1):
        re = 0.0
        im = 0.0
        for t in range(n):
            angle = 2.0 * np.pi * k * t / n
            re += x[t] * np.cos(angle)
            im -= x[t] * np.sin(angle)
        mags[k] = np.sqrt(re * re + im * im)
    return mags


@kernel(lambda: (3.0 + 0.02 * np.arange(100.0) + rng(85).standard_normal(100),))
def detrend_linear(y):
    """y minus its least-squares straight line over t = 0, 1, ..."""
    t = np.arange(len(y), dtype=np.float64)
    tc = t - t.mean()
    slope = np.sum(tc * (y - y.mean())) / np.sum(tc * tc)
    return y - (y.mean() + slope * tc)


@kernel(lambda: (rng(86).standard_normal(100), 5))
def sliding_window_max(x, w):
    out = np.empty(len(x) - w + 1)
    for i in range(len(out)):
        out[i] = x[i:i + w].max()
    return out


# ------------------------------------------------------------------------------ masks and grouping
@kernel(lambda: (rng(87).standard_normal(100),))
def clamp_negatives_inplace(x):
    x[x < 0] = 0.0


@kernel(lambda: (rng(88).uniform(-1.0, 1.0, (120, 2)), np.array([0.2, -0.1]), 0.5))
def points_within_radius(points, center, radius):
    inside = np.sum((points - center) ** 2, axis=1) <= radius * radius
    return points[inside]


@kernel(lambda: (rng(89).standard_normal(80), 5))
def top_k_largest(x, k):
    idx = np.argsort(x)[::-1][:k]
    return idx, x[idx]


@kernel(lambda: (rng(90).integers(0, 6, 40), 6))
def one_hot_encode(labels, n_classes):
    out = np.zeros((len(labels), n_classes))
    out[np.arange(len(labels)), labels] = 1.0
    return out


@kernel(lambda: (rng(91).standard_normal(100), rng(92).integers(0, 5, 100), 5))
def group_means_loop(values, labels, n_groups):
    sums = np.zeros(n_groups)
    counts = np.zeros(n_groups, dtype=np.int64)
    for v, g in zip(values, labels):
        sums[g] += v
        counts[g] += 1
    return sums / np.maximum(counts, 1)


@kernel(lambda: (rng(93).standard_normal(100), rng(94).integers(0, 7, 100), 7))
def group_sums_add_at(values, labels, n_groups):
    out = np.zeros(n_groups)
    np.add.at(out, labels, values)
    return out


@kernel(lambda: (rng(95).standard_normal((30, 10)), 0.5))
def count_above_threshold_per_row(X, t):
    return (X > t).sum(axis=1)


@kernel(lambda: (rng(96).standard_normal(50) * 3.0, rng(97).standard_normal(30) * 3.0, 1.0))
def clip_by_global_norm_inplace(g1, g2, max_norm):
    """Rescale two gradient arrays together so their joint L2 norm is at most max_norm."""
    norm = np.sqrt(np.sum(g1 * g1) + np.sum(g2 * g2))
    if norm > max_norm:
        scale = max_norm / norm
        g1 *= scale
        g2 *= scale
    return norm


@kernel(lambda: (np.where(rng(98).random((20, 5)) < 0.15, np.nan, rng(99).standard_normal((20, 5))),))
def fill_nan_with_column_mean(X):
    col_mean = np.nanmean(X, axis=0)
    rows, cols = np.where(np.isnan(X))
    X[rows, cols] = col_mean[cols]
    return X


@kernel(lambda: (rng(100).standard_normal(60),))
def rank_transform(x):
    ranks = np.empty(len(x), dtype=np.int64)
    ranks[np.argsort(x)] = np.arange(len(x))
    return ranks


@kernel(lambda: (rng(101).random(100) < 0.6,))
def longest_true_run(mask):
    best = 0
    current = 0
    for m in mask:
        if m:
            current += 1
            best = max(best, current)
        else:
            current = 0
    return best


@kernel(lambda: (rng(102).integers(0, 8, 120),))
def label_frequencies(labels):
    values, counts = np.unique(labels, return_counts=True)
    return values, counts / counts.sum()


@kernel(lambda: (rng(103).standard_normal((25, 6)), rng(104).random((25, 6)) < 0.7))
def masked_column_means(X, valid):
    totals = np.sum(np.where(valid, X, 0.0), axis=0)
    counts = valid.sum(axis=0)
    return totals / np.maximum(counts, 1)


@kernel(lambda: (rng(105).uniform(0.0, 10.0, 100), np.array([0.0, 2.5, 5.0, 7.5, 10.0])))
def digitize_and_bin_means(x, edges):
    idx = np.digitize(x, edges[1:-1])
    return np.array([x[idx == b].mean() for b in range(len(edges) - 1)])


@kernel(lambda: (np.sort(rng(106).uniform(0.0, 10.0, 30)), rng(107).standard_normal(30), np.linspace(0.0, 10.0, 50)))
def linear_interpolation_loop(xp, fp, x):
    """np.interp by hand: clamp outside [xp[0], xp[-1]], linear between the two nearest samples."""
    out = np.empty_like(x)
    j = 0
    for i in range(len(x)):
        if x[i] <= xp[0]:
            out[i] = fp[0]
        elif x[i] >= xp[-1]:
            out[i] = fp[-1]
        else:
            while xp[j + 1] < x[i]:
                j += 1
            t = (x[i] - xp[j]) / (xp[j + 1] - xp[j])
            out[i] = fp[j] + t * (fp[j + 1] - fp[j])
    return out


@kernel(lambda: (40, 0.3))
def gaussian_bump_on_grid(n, sigma):
    x = np.linspace(-1.0, 1.0, n)
    X, Y = np.meshgrid(x, x)
    return np.exp(-(X ** 2 + Y ** 2) / (2.0 * sigma ** 2))


@kernel(lambda: (rng(108).standard_normal((20, 20)), 1.5))
def soft_threshold(x, lam):
    """The proximal operator of lam * |x|_1 (shrinkage), as in ISTA and lasso solvers."""
    return np.sign(x) * np.maximum(np.abs(x) - lam, 0.0)


@kernel(lambda: (rng(109).standard_normal((30, 4)),))
def rows_sorted_by_first_column(X):
    return X[np.argsort(X[:, 0])]
