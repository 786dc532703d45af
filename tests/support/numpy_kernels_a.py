"""NumPy kernels, part A: distances and norms, stencils and diffusion, image filters, statistics and
histograms. Assembled with part B in `numpy_kernels.py`.

Each kernel is plain NumPy code written the way scientific Python code is written (no tracer
import, nothing shaped around what the tracer compiles), registered with `@kernel(make_args)`:
`make_args()` gives a fresh tuple of deterministic example arguments on every call.
"""
from __future__ import annotations

import numpy as np
from kernel_registry import Kernels, rng

KERNELS = Kernels()
kernel = KERNELS.register


# ------------------------------------------------------------------------------ distances and norms
@kernel(lambda: (rng(1).standard_normal((40, 3)),))
def pairwise_euclidean_distances(X):
    """All pairwise distances between the rows of X, by broadcasting."""
    diff = X[:, np.newaxis, :] - X[np.newaxis, :, :]
    return np.sqrt(np.sum(diff ** 2, axis=-1))


@kernel(lambda: (rng(2).standard_normal((25, 2)),))
def pairwise_distances_loops(X):
    """The same distance matrix with explicit loops over the upper triangle."""
    n, d = X.shape
    D = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1, n):
            s = 0.0
            for k in range(d):
                t = X[i, k] - X[j, k]
                s += t * t
            D[i, j] = D[j, i] = np.sqrt(s)
    return D


@kernel(lambda: (rng(3).standard_normal((100, 4)), rng(4).standard_normal(4)))
def nearest_neighbor_index(points, query):
    d2 = ((points - query) ** 2).sum(axis=1)
    return int(np.argmin(d2))


@kernel(lambda: (rng(5).standard_normal((30, 8)), rng(6).standard_normal((20, 8))))
def cosine_similarity_matrix(A, B):
    An = A / np.linalg.norm(A, axis=1, keepdims=True)
    Bn = B / np.linalg.norm(B, axis=1, keepdims=True)
    return An @ Bn.T


@kernel(lambda: (rng(7).uniform(0.0, 10.0, (80, 2)), rng(8).uniform(0.0, 10.0, (5, 2))))
def nearest_centroid_manhattan(X, centroids):
    """Label of the nearest centroid in the L1 metric, for each row of X."""
    dist = np.abs(X[:, None, :] - centroids[None, :, :]).sum(axis=2)
    return dist.argmin(axis=1)


@kernel(lambda: (rng(9).standard_normal((90, 2)) + np.repeat([[0.0, 0.0], [4.0, 4.0], [-4.0, 3.0]], 30, axis=0),
                 np.array([[0.5, 0.5], [3.0, 3.0], [-3.0, 2.0]])))
def kmeans_update_step(X, centroids):
    """One Lloyd step: assign each point to its nearest centroid, then move centroids to the means."""
    d2 = ((X[:, None, :] - centroids[None, :, :]) ** 2).sum(axis=-1)
    labels = np.argmin(d2, axis=1)
    new = np.empty_like(centroids)
    for k in range(centroids.shape[0]):
        members = X[labels == k]
        if len(members) > 0:
            new[k] = members.mean(axis=0)
        else:
            new[k] = centroids[k]
    return new, labels


@kernel(lambda: (rng(10).standard_normal((60, 3)), np.array([0.5, -0.2, 0.1]), np.array([1.5, 0.7, 2.0])))
def mahalanobis_diagonal(X, mu, var):
    """Mahalanobis distance of each row to mu under a diagonal covariance."""
    z = (X - mu) / np.sqrt(var)
    return np.sqrt(np.sum(z * z, axis=1))


@kernel(lambda: (rng(11).standard_normal((12, 9)),))
def matrix_norms(A):
    """Frobenius, infinity (max row sum) and 1 (max column sum) norms."""
    fro = np.sqrt(np.sum(A * A))
    inf_norm = np.max(np.sum(np.abs(A), axis=1))
    one_norm = np.abs(A).sum(axis=0).max()
    return fro, inf_norm, one_norm


@kernel(lambda: (rng(12).standard_normal(150), 3.0))
def vector_p_norm(x, p):
    return np.sum(np.abs(x) ** p) ** (1.0 / p)


@kernel(lambda: (rng(13).uniform(-60.0, 60.0, 50), rng(14).uniform(-180.0, 180.0, 50), 48.85, 2.35))
def haversine_distances_km(lat, lon, lat0, lon0):
    """Great-circle distance from (lat0, lon0) to each point, in kilometres."""
    phi, phi0 = np.radians(lat), np.radians(lat0)
    dphi = phi - phi0
    dlam = np.radians(lon - lon0)
    a = np.sin(dphi / 2) ** 2 + np.cos(phi) * np.cos(phi0) * np.sin(dlam / 2) ** 2
    return 2.0 * 6371.0 * np.arcsin(np.sqrt(a))


# ------------------------------------------------------------------------------ stencils and diffusion
@kernel(lambda: (np.sin(np.linspace(0.0, np.pi, 101)) + 0.1 * rng(15).standard_normal(101), 0.4, 50))
def heat_equation_1d_explicit(u0, alpha, steps):
    """Forward-time centred-space heat equation with fixed ends."""
    u = u0.copy()
    for _ in range(steps):
        u[1:-1] = u[1:-1] + alpha * (u[2:] - 2.0 * u[1:-1] + u[:-2])
    return u


@kernel(lambda: (rng(16).standard_normal((20, 20)), 0.05))
def laplacian_5point(U, h):
    L = np.zeros_like(U)
    L[1:-1, 1:-1] = (U[2:, 1:-1] + U[:-2, 1:-1] + U[1:-1, 2:] + U[1:-1, :-2] - 4.0 * U[1:-1, 1:-1]) / h ** 2
    return L


@kernel(lambda: (rng(17).uniform(0.0, 1.0, (24, 24)), 0.2, 10))
def diffusion_2d_inplace(U, nu, steps):
    """Explicit 2-D diffusion updating U in place (boundary held fixed); returns nothing."""
    for _ in range(steps):
        lap = U[2:, 1:-1] + U[:-2, 1:-1] + U[1:-1, 2:] + U[1:-1, :-2] - 4.0 * U[1:-1, 1:-1]
        U[1:-1, 1:-1] += nu * lap


@kernel(lambda: (np.exp(-((np.linspace(0.0, 1.0, 120) - 0.3) / 0.05) ** 2), 0.5, 40))
def periodic_advection_upwind(u, courant, steps):
    for _ in range(steps):
        u = u - courant * (u - np.roll(u, 1))
    return u


@kernel(lambda: (np.exp(-((np.linspace(-1.0, 1.0, 100)) / 0.1) ** 2), 0.25, 60))
def wave_equation_1d_leapfrog(u, c2, steps):
    """Second-order wave equation, zero at both ends, starting at rest."""
    u_prev = u.copy()
    for _ in range(steps):
        u_next = np.empty_like(u)
        u_next[1:-1] = 2.0 * u[1:-1] - u_prev[1:-1] + c2 * (u[2:] - 2.0 * u[1:-1] + u[:-2])
        u_next[0] = u_next[-1] = 0.0
        u_prev, u = u, u_next
    return u


@kernel(lambda: ((rng(18).random((16, 16)) < 0.35).astype(np.int64),))
def game_of_life_step(board):
    """One step of Conway's game of life on a torus (board of 0/1 ints)."""
    neighbours = np.zeros_like(board)
    for di in (-1, 0, 1):
        for dj in (-1, 0, 1):
            if di != 0 or dj != 0:
                neighbours += np.roll(np.roll(board, di, axis=0), dj, axis=1)
    alive = (neighbours == 3) | ((board == 1) & (neighbours == 2))
    return alive.astype(np.int64)


@kernel(lambda: (np.zeros((18, 18)), np.ones((18, 18)), 1.0 / 17, 30))
def jacobi_poisson_2d(u, f, h, sweeps):
    """Jacobi sweeps for -laplace(u) = f with u = 0 on the boundary."""
    for _ in range(sweeps):
        new = u.copy()
        new[1:-1, 1:-1] = 0.25 * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] + h * h * f[1:-1, 1:-1])
        u = new
    return u


# ------------------------------------------------------------------------------ image filters
@kernel(lambda: (rng(19).random((20, 20)),))
def box_blur_3x3(img):
    """Mean over each 3x3 neighbourhood (the valid part only)."""
    h, w = img.shape
    acc = np.zeros((h - 2, w - 2))
    for di in range(3):
        for dj in range(3):
            acc += img[di:di + h - 2, dj:dj + w - 2]
    return acc / 9.0


@kernel(lambda: (rng(20).random((20, 24)), 1.0))
def gaussian_blur_separable(img, sigma):
    """Separable Gaussian blur with edge padding: rows, then columns."""
    radius = int(3 * sigma)
    t = np.arange(-radius, radius + 1)
    k = np.exp(-0.5 * (t / sigma) ** 2)
    k /= k.sum()
    padded = np.pad(img, radius, mode="edge")
    rows = np.zeros((padded.shape[0], img.shape[1]))
    for i, w in enumerate(k):
        rows += w * padded[:, i:i + img.shape[1]]
    out = np.zeros_like(img)
    for i, w in enumerate(k):
        out += w * rows[i:i + img.shape[0], :]
    return out


@kernel(lambda: (rng(21).random((20, 20)),))
def sobel_gradient_magnitude(img):
    gx = (img[:-2, 2:] + 2.0 * img[1:-1, 2:] + img[2:, 2:]) - (img[:-2, :-2] + 2.0 * img[1:-1, :-2] + img[2:, :-2])
    gy = (img[2:, :-2] + 2.0 * img[2:, 1:-1] + img[2:, 2:]) - (img[:-2, :-2] + 2.0 * img[:-2, 1:-1] + img[:-2, 2:])
    return np.hypot(gx, gy)


@kernel(lambda: (np.sin(np.linspace(0.0, 6.0, 80)) + rng(22).standard_normal(80) * 0.3,))
def median_filter_3(x):
    """Median of each 3-sample window; the end samples are kept."""
    windows = np.stack([x[:-2], x[1:-1], x[2:]])
    out = x.copy()
    out[1:-1] = np.median(windows, axis=0)
    return out


@kernel(lambda: (rng(23).random((20, 20)), 0.6))
def binary_threshold(img, level):
    return np.where(img > level, 1.0, 0.0)


@kernel(lambda: (rng(24).random((20, 20)) < 0.8,))
def binary_erosion_cross(mask):
    """Erode a boolean mask with a plus-shaped structuring element."""
    out = np.zeros_like(mask)
    out[1:-1, 1:-1] = mask[1:-1, 1:-1] & mask[:-2, 1:-1] & mask[2:, 1:-1] & mask[1:-1, :-2] & mask[1:-1, 2:]
    return out


@kernel(lambda: (rng(25).uniform(-0.1, 1.1, (20, 20)), 2.2))
def gamma_correct(img, gamma):
    return np.clip(img, 0.0, 1.0) ** (1.0 / gamma)


@kernel(lambda: (rng(26).gamma(2.0, 1.0, (20, 20)), 2.0, 98.0))
def contrast_stretch_percentiles(img, lo_pct, hi_pct):
    lo, hi = np.percentile(img, [lo_pct, hi_pct])
    return np.clip((img - lo) / (hi - lo), 0.0, 1.0)


@kernel(lambda: (rng(27).random((20, 20)), 0.7))
def unsharp_mask(img, amount):
    blurred = img.copy()
    blurred[1:-1, 1:-1] = (img[:-2, 1:-1] + img[2:, 1:-1] + img[1:-1, :-2] + img[1:-1, 2:] + img[1:-1, 1:-1]) / 5.0
    return np.clip(img + amount * (img - blurred), 0.0, 1.0)


@kernel(lambda: (rng(28).integers(0, 256, (16, 16, 3)).astype(np.uint8),))
def rgb_uint8_to_luminance(img):
    """ITU-R 601 luma of an 8-bit RGB image, as floats in [0, 1]."""
    rgb = img.astype(np.float64) / 255.0
    return 0.299 * rgb[..., 0] + 0.587 * rgb[..., 1] + 0.114 * rgb[..., 2]


@kernel(lambda: (rng(29).random((20, 20)),))
def integral_image(img):
    """Summed-area table: S[i, j] = img[:i+1, :j+1].sum()."""
    return np.cumsum(np.cumsum(img, axis=0), axis=1)


# ------------------------------------------------------------------------------ statistics
@kernel(lambda: (rng(30).normal(3.0, 2.0, (50, 4)),))
def zscore_columns(X):
    return (X - X.mean(axis=0)) / X.std(axis=0)


@kernel(lambda: (rng(31).standard_normal(120), rng(32).uniform(0.1, 2.0, 120)))
def weighted_mean_and_variance(x, w):
    m = np.sum(w * x) / np.sum(w)
    v = np.sum(w * (x - m) ** 2) / np.sum(w)
    return m, v


@kernel(lambda: (rng(33).normal(10.0, 3.0, 150),))
def welford_mean_and_variance(x):
    """Single-pass mean and sample variance (Welford's update)."""
    n = 0
    mean = 0.0
    m2 = 0.0
    for v in x:
        n += 1
        d = v - mean
        mean += d / n
        m2 += d * (v - mean)
    return mean, m2 / (n - 1)


@kernel(lambda: (rng(34).standard_normal((60, 5)) @ rng(35).standard_normal((5, 5)),))
def sample_covariance(X):
    Xc = X - X.mean(axis=0)
    return Xc.T @ Xc / (X.shape[0] - 1)


@kernel(lambda: (rng(36).standard_normal(100), rng(36).standard_normal(100) * 0.5 + np.linspace(0.0, 1.0, 100)))
def pearson_correlation(x, y):
    xc = x - x.mean()
    yc = y - y.mean()
    return np.sum(xc * yc) / np.sqrt(np.sum(xc ** 2) * np.sum(yc ** 2))


@kernel(lambda: (rng(37).exponential(1.5, 200),))
def skewness_and_excess_kurtosis(x):
    z = x - x.mean()
    var = x.var()
    skew = np.mean(z ** 3) / var ** 1.5
    kurt = np.mean(z ** 4) / var ** 2 - 3.0
    return skew, kurt


@kernel(lambda: (rng(38).standard_normal(200), -2.0, 2.0, 16))
def histogram_counts_loop(x, lo, hi, nbins):
    """Counts per equal-width bin over [lo, hi); values outside are dropped."""
    counts = np.zeros(nbins, dtype=np.int64)
    width = (hi - lo) / nbins
    for v in x:
        if lo <= v < hi:
            counts[int((v - lo) / width)] += 1
    return counts


@kernel(lambda: (rng(39).gamma(3.0, 1.0, 200), 12))
def histogram_bincount(x, nbins):
    lo, hi = x.min(), x.max()
    idx = ((x - lo) / (hi - lo) * nbins).astype(np.int64)
    idx = np.minimum(idx, nbins - 1)
    return np.bincount(idx, minlength=nbins)


@kernel(lambda: (rng(40).standard_normal(150), rng(41).standard_normal(150), 6))
def histogram_2d_loop(x, y, n):
    """2-D counts over the bounding box of the points, n x n cells."""
    H = np.zeros((n, n), dtype=np.int64)
    x0, x1 = x.min(), x.max()
    y0, y1 = y.min(), y.max()
    for k in range(len(x)):
        i = min(int((x[k] - x0) / (x1 - x0) * n), n - 1)
        j = min(int((y[k] - y0) / (y1 - y0) * n), n - 1)
        H[i, j] += 1
    return H


@kernel(lambda: (rng(42).standard_normal(60),))
def empirical_cdf(x):
    xs = np.sort(x)
    return xs, np.arange(1, len(xs) + 1) / len(xs)


@kernel(lambda: (rng(43).standard_normal(101), 0.9))
def quantile_linear_interpolation(x, q):
    xs = np.sort(x)
    pos = q * (len(xs) - 1)
    lo = int(np.floor(pos))
    hi = min(lo + 1, len(xs) - 1)
    frac = pos - lo
    return xs[lo] * (1.0 - frac) + xs[hi] * frac


@kernel(lambda: (np.concatenate([rng(44).standard_normal(95), [8.0, -7.5, 6.0, 12.0, -9.0]]), 3.5))
def mad_outlier_mask(x, k):
    """Points further than k robust standard deviations (1.4826 MAD) from the median."""
    med = np.median(x)
    mad = np.median(np.abs(x - med))
    return np.abs(x - med) > k * 1.4826 * mad


@kernel(lambda: (rng(45).standard_cauchy(100), 0.1))
def trimmed_mean(x, frac):
    xs = np.sort(x)
    k = int(frac * len(xs))
    return xs[k:len(xs) - k].mean()


@kernel(lambda: (rng(46).lognormal(0.0, 0.5, 80), 200, 7))
def bootstrap_standard_error_of_mean(x, n_boot, seed):
    gen = np.random.default_rng(seed)
    means = np.empty(n_boot)
    for b in range(n_boot):
        sample = x[gen.integers(0, len(x), len(x))]
        means[b] = sample.mean()
    return means.std(ddof=1)
