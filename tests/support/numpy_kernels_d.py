"""NumPy kernels, part D: data of every dtype and dense linear algebra, as research code handles
them (8-bit images, int32 index arrays and CSR matrices, int16 audio, bool masks, float32 and
float16 storage with float64 accumulation, uint64 random-number and hash arithmetic, NumPy scalar
arguments, and np.linalg solves and factorizations). Assembled with parts A to C in
`numpy_kernels.py`.

Each kernel is plain NumPy code written the way scientific Python code is written (no tracer
import, nothing shaped around what the tracer compiles), registered with `@kernel(make_args)`:
`make_args()` gives a fresh tuple of deterministic example arguments on every call.
"""
from __future__ import annotations

import numpy as np
from kernel_registry import Kernels, rng

KERNELS = Kernels()
kernel = KERNELS.register


def _uint8_image(shape, seed):
    return rng(seed).integers(0, 256, shape).astype(np.uint8)


def _spd(n, seed):
    M = rng(seed).standard_normal((n, n))
    return M @ M.T / n + 0.5 * np.eye(n)


# ------------------------------------------------------------------------------ 8-bit images
@kernel(lambda: (_uint8_image((24, 24), 200), 1.25, -20.0))
def adjust_brightness_contrast_uint8(img, contrast, brightness):
    """out = contrast * (img - 128) + 128 + brightness, rounded and saturated to 0..255."""
    out = contrast * (img.astype(np.float64) - 128.0) + 128.0 + brightness
    out = np.clip(np.rint(out), 0, 255).astype(np.uint8)
    saturated = np.count_nonzero((out == 0) | (out == 255))
    return out, saturated


@kernel(lambda: (_uint8_image((20, 30), 201), np.uint8(140)))
def threshold_mask_uint8(img, level):
    """Mask of the pixels at or above `level`, its area fraction, mean grey inside and outside it."""
    mask = img >= level
    area = mask.sum() / mask.size
    fg_mean = img[mask].mean() if mask.any() else 0.0
    bg_mean = img[~mask].mean()
    return mask, area, fg_mean, bg_mean


def _bimodal_image(seed):
    g = rng(seed)
    pixels = np.concatenate([g.normal(60, 12, 300), g.normal(170, 20, 200)])
    return g.permutation(pixels).clip(0, 255).astype(np.uint8).reshape(20, 25)


@kernel(lambda: (_bimodal_image(202),))
def otsu_threshold(img):
    """Otsu's threshold from the grey-level histogram, and the binary image it gives."""
    hist = np.bincount(img.ravel(), minlength=256)
    p = hist / hist.sum()
    omega = np.cumsum(p)
    mu = np.cumsum(p * np.arange(256))
    mu_t = mu[-1]
    denom = omega * (1.0 - omega)
    sigma_b2 = np.zeros(256)
    valid = denom > 0
    sigma_b2[valid] = (mu_t * omega[valid] - mu[valid]) ** 2 / denom[valid]
    t = int(np.argmax(sigma_b2))
    return t, (img > t).astype(np.uint8) * 255


@kernel(lambda: (_uint8_image((18, 22), 204),))
def box_blur_3x3_uint8(img):
    """3x3 mean filter with edge replication, computed in float and rounded back to uint8."""
    f = np.pad(img.astype(np.float64), 1, mode="edge")
    h, w = img.shape
    acc = np.zeros((h, w))
    for di in range(3):
        for dj in range(3):
            acc += f[di:di + h, dj:dj + w]
    return np.round(acc / 9.0).astype(np.uint8)


@kernel(lambda: (_uint8_image((16, 12, 3), 205),))
def rgb_to_gray_uint8(rgb):
    """ITU-R BT.601 luma of an RGB image, and the mean of each channel."""
    weights = np.array([0.299, 0.587, 0.114])
    gray = rgb.astype(np.float64) @ weights
    gray = np.clip(gray + 0.5, 0, 255).astype(np.uint8)
    channel_means = rgb.reshape(-1, 3).mean(axis=0)
    return gray, channel_means


# ------------------------------------------------------------------------------ int32 index arrays
@kernel(lambda: (rng(206).standard_normal(40), rng(207).integers(0, 40, (40, 6)).astype(np.int32)))
def neighbor_mean_gather_int32(values, neighbors):
    """Smooth a field on an unstructured mesh: average of each node with its listed neighbours."""
    gathered = values[neighbors]
    smoothed = 0.5 * values + 0.5 * gathered.mean(axis=1)
    spread = gathered.max(axis=1) - gathered.min(axis=1)
    return smoothed, spread


@kernel(lambda: (rng(208).exponential(1.0, 120), np.sort(rng(209).integers(0, 10, 120)).astype(np.int32), 12))
def segment_means_int32(data, segment_ids, num_segments):
    """Per-segment sum, count and mean (empty segments get NaN)."""
    sums = np.zeros(num_segments)
    counts = np.zeros(num_segments, dtype=np.int64)
    np.add.at(sums, segment_ids, data)
    np.add.at(counts, segment_ids, 1)
    means = np.full(num_segments, np.nan)
    nonempty = counts > 0
    means[nonempty] = sums[nonempty] / counts[nonempty]
    return sums, counts, means


def _random_csr(n_rows, n_cols, density, seed):
    g = rng(seed)
    dense = np.where(g.random((n_rows, n_cols)) < density, g.standard_normal((n_rows, n_cols)), 0.0)
    rows, cols = np.nonzero(dense)
    indptr = np.zeros(n_rows + 1, dtype=np.int32)
    indptr[1:] = np.cumsum(np.bincount(rows, minlength=n_rows))
    return indptr, cols.astype(np.int32), dense[rows, cols], g.standard_normal(n_cols)


@kernel(lambda: _random_csr(30, 25, 0.2, 210))
def csr_matvec_int32(indptr, indices, data, x):
    """y = A @ x for A in compressed sparse row form with int32 index arrays."""
    n_rows = indptr.shape[0] - 1
    y = np.zeros(n_rows, dtype=data.dtype)
    for i in range(n_rows):
        start, end = indptr[i], indptr[i + 1]
        acc = 0.0
        for k in range(start, end):
            acc += data[k] * x[indices[k]]
        y[i] = acc
    return y


# ------------------------------------------------------------------------------ int16 audio
@kernel(lambda: ((9000.0 * np.sin(2 * np.pi * 440.0 * np.arange(800) / 8000.0)
                  + rng(211).normal(0, 300, 800)).astype(np.int16), 12.0))
def audio_gain_clip_rms_int16(samples, gain_db):
    """Apply a gain in dB to 16-bit PCM with hard clipping; RMS levels in dBFS before and after."""
    gain = 10.0 ** (gain_db / 20.0)
    scaled = samples.astype(np.float64) * gain
    info = np.iinfo(np.int16)
    clipped = np.clip(np.round(scaled), info.min, info.max).astype(np.int16)
    n_clipped = np.count_nonzero(np.abs(scaled) > info.max)

    def rms_dbfs(x):
        xf = x.astype(np.float64) / 32768.0
        return 20.0 * np.log10(np.sqrt(np.mean(xf ** 2)))

    peak = np.abs(clipped.astype(np.int32)).max()
    return clipped, n_clipped, rms_dbfs(samples), rms_dbfs(clipped), peak


# ------------------------------------------------------------------------------ bool masks
@kernel(lambda: (rng(212).standard_normal((30, 5)), rng(213).random((30, 5)) > 0.3))
def masked_column_stats(X, valid):
    """Column means and standard deviations over the valid entries only (missing-data masks)."""
    n_valid = valid.sum(axis=0)
    sums = np.where(valid, X, 0.0).sum(axis=0)
    means = sums / n_valid
    sq = np.where(valid, (X - means) ** 2, 0.0).sum(axis=0)
    stds = np.sqrt(sq / (n_valid - 1))
    overall = X[valid].mean()
    return means, stds, n_valid, np.count_nonzero(~valid), overall


# ------------------------------------------------------------------------------ reduced-precision storage
@kernel(lambda: (rng(214).normal(1000.0, 0.5, 500).astype(np.float32),))
def welford_stats_float32(x):
    """Mean and variance of float32 samples by Welford's update, accumulated in float64."""
    n = 0
    mean = 0.0
    m2 = 0.0
    for v in x:
        n += 1
        d = float(v) - mean
        mean += d / n
        m2 += d * (float(v) - mean)
    var = m2 / (n - 1)
    return np.float32(mean), mean, var


@kernel(lambda: ((0.1 * rng(215).standard_normal((12, 16))).astype(np.float16),
                 rng(216).standard_normal(16), rng(217).standard_normal(12).astype(np.float16)))
def float16_weights_layer(W16, x, b16):
    """A dense layer with weights stored in float16, evaluated in float64, activations stored back."""
    W = W16.astype(np.float64)
    b = b16.astype(np.float64)
    h = np.maximum(W @ x + b, 0.0)
    return h.astype(np.float16), h


# ------------------------------------------------------------------------------ uint64 arithmetic
SPLITMIX_GAMMA = np.uint64(0x9E3779B97F4A7C15)
SPLITMIX_M1 = np.uint64(0xBF58476D1CE4E5B9)
SPLITMIX_M2 = np.uint64(0x94D049BB133111EB)


@kernel(lambda: (np.arange(1, 33, dtype=np.uint64) * np.uint64(12345), 4))
def splitmix64_uniforms(state, rounds):
    """SplitMix64 streams, one per element of `state`: `rounds` uniforms in [0, 1) each."""
    out = np.empty((rounds, state.shape[0]))
    s = state.copy()
    for r in range(rounds):
        s = s + SPLITMIX_GAMMA
        z = s
        z = (z ^ (z >> np.uint64(30))) * SPLITMIX_M1
        z = (z ^ (z >> np.uint64(27))) * SPLITMIX_M2
        z = z ^ (z >> np.uint64(31))
        out[r] = (z >> np.uint64(11)) * 2.0 ** -53
    return out, s


# ------------------------------------------------------------------------------ np.linalg
@kernel(lambda: (rng(218).standard_normal((50, 3)), rng(219).standard_normal(50)))
def least_squares_normal_equations(X, y):
    """Ordinary least squares with an intercept, by the normal equations; coefficients and R^2."""
    A = np.column_stack([np.ones(X.shape[0]), X])
    beta = np.linalg.solve(A.T @ A, A.T @ y)
    resid = y - A @ beta
    r2 = 1.0 - resid @ resid / np.sum((y - y.mean()) ** 2)
    return beta, r2


@kernel(lambda: (rng(220).standard_normal((25, 4)), np.array([0.1, -0.2, 0.0, 0.3]), _spd(4, 221)))
def mahalanobis_cholesky(X, mu, cov):
    """Squared Mahalanobis distance of each row of X, via the Cholesky factor of the covariance."""
    L = np.linalg.cholesky(cov)
    z = np.linalg.solve(L, (X - mu).T)
    return np.sum(z ** 2, axis=0)


@kernel(lambda: (rng(222).standard_normal((40, 3)), np.zeros(3), _spd(3, 223)))
def gaussian_log_likelihood(X, mu, cov):
    """Total log-likelihood of the rows of X under N(mu, cov)."""
    n, d = X.shape
    sign, logdet = np.linalg.slogdet(cov)
    if sign <= 0:
        raise ValueError("covariance is not positive definite")
    diff = X - mu
    quad = np.sum(diff * np.linalg.solve(cov, diff.T).T, axis=1)
    return -0.5 * (n * d * np.log(2.0 * np.pi) + n * logdet + quad.sum())


@kernel(lambda: (rng(224).standard_normal((60, 4)) @ np.array([[3.0, 0.0, 0.0, 0.0], [1.0, 2.0, 0.0, 0.0],
                                                               [0.5, 0.3, 1.0, 0.0], [0.0, 0.2, 0.1, 0.3]]), 2))
def pca_projection_eigh(X, k):
    """Project onto the k leading principal components (eigh of the covariance, signs fixed)."""
    Xc = X - X.mean(axis=0)
    cov = Xc.T @ Xc / (X.shape[0] - 1)
    evals, evecs = np.linalg.eigh(cov)
    order = np.argsort(evals)[::-1]
    evals = evals[order]
    evecs = evecs[:, order]
    # deterministic signs: the largest component of each eigenvector is positive
    signs = np.sign(evecs[np.argmax(np.abs(evecs), axis=0), np.arange(evecs.shape[1])])
    evecs = evecs * signs
    scores = Xc @ evecs[:, :k]
    return scores, evals[:k] / evals.sum()


def _newton_residual(x):
    return np.array([x[0] ** 2 + x[1] ** 2 - 4.0, np.exp(x[0]) + x[1] - 1.0])


def _newton_jacobian(x):
    return np.array([[2.0 * x[0], 2.0 * x[1]], [np.exp(x[0]), 1.0]])


@kernel(lambda: (np.array([1.0, -1.5]), 1e-12, 50))
def newton_system_solve(x0, tol, maxiter):
    """Newton's method on a 2x2 nonlinear system, with a singular-Jacobian guard."""
    x = x0.copy()
    for it in range(maxiter):
        F = _newton_residual(x)
        if np.linalg.norm(F) < tol:
            return x, it
        J = _newton_jacobian(x)
        if abs(np.linalg.det(J)) < 1e-14:
            raise np.linalg.LinAlgError("singular Jacobian")
        x = x - np.linalg.solve(J, F)
    return x, maxiter


def _tracking_problem():
    g = rng(225)
    t = np.arange(30) * 0.1
    truth = np.stack([np.sin(t), np.cos(t)], axis=1)
    return truth + 0.05 * g.standard_normal((30, 2)), 0.1


@kernel(_tracking_problem)
def kalman_filter_constant_velocity(measurements, dt):
    """Constant-velocity Kalman filter in 2-D on noisy positions; filtered positions and last P."""
    F = np.eye(4)
    F[0, 2] = F[1, 3] = dt
    H = np.zeros((2, 4))
    H[0, 0] = H[1, 1] = 1.0
    Q = 1e-3 * np.eye(4)
    R = 0.05 ** 2 * np.eye(2)
    x = np.zeros(4)
    x[:2] = measurements[0]
    P = np.eye(4)
    filtered = np.zeros_like(measurements)
    for k, z in enumerate(measurements):
        x = F @ x
        P = F @ P @ F.T + Q
        S = H @ P @ H.T + R
        K = P @ H.T @ np.linalg.inv(S)
        x = x + K @ (z - H @ x)
        P = (np.eye(4) - K @ H) @ P
        filtered[k] = x[:2]
    return filtered, P


# ------------------------------------------------------------------------------ factorizations
def _noisy_quadratic():
    g = rng(226)
    t = np.linspace(-1.0, 2.0, 25)
    return t, 0.7 * t ** 2 - 1.3 * t + 0.2 + 0.01 * g.standard_normal(25)


@kernel(_noisy_quadratic)
def polynomial_least_squares(t, y):
    """Fit a quadratic by least squares; coefficients, residual sum of squares, rank, condition."""
    A = np.stack([t ** 2, t, np.ones_like(t)], axis=1)
    coef, rss, rank, sv = np.linalg.lstsq(A, y, rcond=None)
    return coef, rss, int(rank), sv[0] / sv[-1]


def _correlated_cloud():
    g = rng(227)
    base = g.standard_normal((200, 2))
    mix = np.array([[2.0, 0.3, -0.5], [0.1, 0.8, 1.2]])
    return base @ mix + np.array([1.0, -2.0, 0.5]),


@kernel(_correlated_cloud)
def principal_components(points):
    """PCA by SVD of the centred data: explained variance ratios and the leading direction."""
    centred = points - points.mean(axis=0)
    U, s, Vt = np.linalg.svd(centred, full_matrices=False)
    variance = s ** 2 / (len(points) - 1)
    lead = Vt[0] * np.sign(Vt[0, np.argmax(np.abs(Vt[0]))])
    return variance / variance.sum(), lead, np.linalg.svd(centred, compute_uv=False)


def _tall_system():
    g = rng(228)
    return g.standard_normal((12, 4)), g.standard_normal(12)


@kernel(_tall_system)
def qr_least_squares(A, b):
    """Least squares through the reduced QR: R x = Q^T b solved by back substitution."""
    Q, R = np.linalg.qr(A)
    y = Q.T @ b
    n = R.shape[1]
    x = np.zeros(n)
    for i in range(n - 1, -1, -1):
        x[i] = (y[i] - R[i, i + 1:] @ x[i + 1:]) / R[i, i]
    return x, np.abs(np.diag(R)), np.linalg.norm(A @ x - b)


# ------------------------------------------------------------------------------ NumPy scalar arguments
@kernel(lambda: (np.float64(1.0), np.float64(0.0), np.float64(4.0), np.float64(0.5), np.float64(0.01), 300))
def spring_velocity_verlet(x0, v0, k, m, dt, steps):
    """Mass on a spring by velocity Verlet, with np.float64 parameters; trajectory and energy drift."""
    xs = np.empty(steps + 1)
    x, v = x0, v0
    xs[0] = x
    e0 = 0.5 * m * v ** 2 + 0.5 * k * x ** 2
    a = -k / m * x
    for i in range(steps):
        x = x + v * dt + 0.5 * a * dt ** 2
        a_new = -k / m * x
        v = v + 0.5 * (a + a_new) * dt
        a = a_new
        xs[i + 1] = x
    e = 0.5 * m * v ** 2 + 0.5 * k * x ** 2
    return xs, (e - e0) / e0
