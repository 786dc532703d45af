"""Array functions in the style of real numeric code, for `tests/api/test_array_corpus.py`.

Each function is plain Python over NumPy float64 arrays (no tracer import). `CORPUS` lists
`(fn, args_factory, grad_argnums)`: `args_factory(rng)` draws one tuple of arguments (shapes
drawn from `rng` too, sizes of 1 included), and `grad_argnums` names the float64-array or float
arguments to differentiate, or is None where the function is not a differentiable scalar.
"""
from __future__ import annotations

import numpy as np


# ------------------------------------------------------------------------------ activations
def softmax(x):
    """Numerically stable softmax of a vector."""
    e = np.exp(x - np.max(x))
    return e / np.sum(e)


def softmax_rows(X):
    """Softmax along the last axis of a matrix."""
    e = np.exp(X - X.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def logsumexp(x):
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))


def relu_sum(x):
    return np.sum(np.where(x > 0.0, x, 0.0))


def leaky_relu(x, slope):
    return np.where(x >= 0.0, x, slope * x)


def gelu_tanh_mean(x):
    """Mean of GELU (tanh approximation)."""
    c = np.sqrt(2.0 / np.pi)
    return np.mean(0.5 * x * (1.0 + np.tanh(c * (x + 0.044715 * x ** 3))))


def softplus_sum(x):
    """Stable softplus: log(1 + exp(x)) = log1p(exp(-|x|)) + max(x, 0)."""
    return np.sum(np.log1p(np.exp(-np.abs(x))) + np.maximum(x, 0.0))


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


# ------------------------------------------------------------------------------ normalization
def layer_norm(X, gamma, beta):
    """Layer norm over the last axis, with a learned scale and shift."""
    mu = X.mean(axis=-1, keepdims=True)
    var = ((X - mu) ** 2).mean(axis=-1, keepdims=True)
    return (X - mu) / np.sqrt(var + 1e-5) * gamma + beta


def layer_norm_loss(X, gamma, beta):
    Y = layer_norm(X, gamma, beta)
    return np.sum(Y * Y * np.arange(Y.shape[-1]))


def normalize_rows(X):
    return X / np.sqrt(np.sum(X * X, axis=1, keepdims=True))


def min_max_scale(x):
    lo = x.min()
    return (x - lo) / (x.max() - lo)


def standardize_columns(X):
    """Zero mean, unit variance columns (population variance)."""
    mu = np.mean(X, axis=0)
    sd = np.sqrt(np.mean(np.square(X - mu), axis=0))
    return (X - mu) / sd


def batch_norm_loss(X, gamma, beta):
    mu = X.mean(axis=0)
    var = ((X - mu) ** 2).mean(axis=0)
    Y = gamma * (X - mu) / np.sqrt(var + 1e-3) + beta
    return np.mean(Y ** 2) + np.sum(Y[0])


# ------------------------------------------------------------------------------ distances
def pairwise_sq_dists(X):
    """|x_i - x_j|^2 for every pair of rows, through the Gram matrix."""
    sq = np.sum(X * X, axis=1)
    return sq.reshape(-1, 1) + sq.reshape(1, -1) - 2.0 * (X @ X.T)


def cross_sq_dists(X, Y):
    """|x_i - y_j|^2 by broadcasting (n, 1, d) against (1, m, d)."""
    n, d = X.shape
    m = Y.shape[0]
    diff = X.reshape(n, 1, d) - Y.reshape(1, m, d)
    return np.sum(diff * diff, axis=-1)


def rbf_kernel_sum(X, gamma):
    D = pairwise_sq_dists(X)
    return np.sum(np.exp(-gamma * D))


def nearest_centroid(X, C):
    """Index of the closest centroid for every row (k-means assignment)."""
    n, d = X.shape
    diff = X.reshape(n, 1, d) - C.reshape(1, C.shape[0], d)
    return np.argmin(np.sum(diff ** 2, axis=2), axis=1)


def haversine(lat1, lon1, lat2, lon2):
    """Great-circle distances in km between points given in degrees."""
    to_rad = np.pi / 180.0
    p1, p2 = lat1 * to_rad, lat2 * to_rad
    dlat = p2 - p1
    dlon = (lon2 - lon1) * to_rad
    a = np.sin(dlat / 2.0) ** 2 + np.cos(p1) * np.cos(p2) * np.sin(dlon / 2.0) ** 2
    return 2.0 * 6371.0 * np.arcsin(np.sqrt(a))


def mean_haversine(lat1, lon1, lat2, lon2):
    return np.mean(haversine(lat1, lon1, lat2, lon2))


def cosine_similarity(a, b):
    return np.dot(a, b) / (np.sqrt(np.dot(a, a)) * np.sqrt(b @ b))


# ------------------------------------------------------------------------------ losses
def mse(pred, target):
    return np.mean((pred - target) ** 2)


def huber(pred, target, delta):
    r = np.abs(pred - target)
    return np.mean(np.where(r <= delta, 0.5 * r * r, delta * (r - 0.5 * delta)))


def logistic_loss(X, w, b, y):
    """Mean log(1 + exp(-y z)) for labels y in {-1, +1}."""
    z = X @ w + b
    return np.mean(np.log(1.0 + np.exp(-y * z)))


def hinge_loss(X, w, y, lam):
    margins = 1.0 - y * (X @ w)
    return np.mean(np.maximum(0.0, margins)) + lam * np.dot(w, w)


def ridge_loss(X, w, y, lam):
    r = X @ w - y
    return 0.5 * np.mean(r ** 2) + lam * np.sum(w * w)


def poisson_nll(X, w, counts):
    z = X @ w
    return np.mean(np.exp(z) - counts * z)


def cross_entropy(logits, onehot):
    """Mean softmax cross-entropy against one-hot targets."""
    m = logits.max(axis=1, keepdims=True)
    logp = logits - m - np.log(np.sum(np.exp(logits - m), axis=1, keepdims=True))
    return -np.mean(np.sum(onehot * logp, axis=1))


def gaussian_nll(x, mu, log_sigma):
    z = (x - mu) / np.exp(log_sigma)
    return np.sum(0.5 * z * z + log_sigma + 0.5 * np.log(2.0 * np.pi))


def accuracy(X, w, y):
    """Fraction of signs of X @ w that match labels in {-1, +1}."""
    return np.mean(np.sign(X @ w) == y)


# ------------------------------------------------------------------------------ models
def mlp_forward(X, W1, b1, W2, b2):
    h = np.tanh(X @ W1 + b1)
    return h @ W2 + b2


def mlp_loss(X, W1, b1, W2, b2, y):
    h = np.maximum(X @ W1 + b1, 0.0)
    out = h @ W2 + b2
    return np.mean((out - y) ** 2)


def rnn_step(h, x, W, U, b):
    return np.tanh(W @ h + U @ x + b)


def rnn_two_steps_loss(h, x1, x2, W, U, b):
    h = rnn_step(h, x1, W, U, b)
    h = rnn_step(h, x2, W, U, b)
    return np.sum(h * h)


def attention(Q, K, V):
    """Single-head scaled dot-product attention."""
    S = Q @ K.T / np.sqrt(Q.shape[1])
    return softmax_rows(S) @ V


def attention_loss(Q, K, V):
    return np.sum(attention(Q, K, V) ** 2)


def bilinear(x, A, y):
    return x @ A @ y


def covariance(X):
    Xc = X - X.mean(axis=0)
    return Xc.T @ Xc / (X.shape[0] - 1)


def power_iteration(A, v):
    """Two steps of power iteration, then the Rayleigh quotient."""
    v = A @ v
    v = v / np.sqrt(v @ v)
    v = A @ v
    v = v / np.sqrt(v @ v)
    return v @ (A @ v)


def rotate_points(P, theta):
    c, s = np.cos(theta), np.sin(theta)
    R = np.array([[c, -s], [s, c]])
    return P @ R.T


# ------------------------------------------------------------------------------ loops over elements
def rosenbrock(x):
    total = 0.0
    for i in range(len(x) - 1):
        total += 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2
    return total


def conv1d(x, k):
    """Valid 1-D correlation written with loops."""
    n, m = len(x), len(k)
    out = np.zeros(n - m + 1)
    for i in range(n - m + 1):
        s = 0.0
        for j in range(m):
            s += x[i + j] * k[j]
        out[i] = s
    return out


def smooth3(x):
    """Three-tap smoothing filter, a constant kernel."""
    return conv1d(x, np.array([0.25, 0.5, 0.25]))


def conv1d_energy(x, k):
    return np.sum(conv1d(x, k) ** 2)


def trapezoid(x, y):
    s = 0.0
    for i in range(len(x) - 1):
        s += 0.5 * (x[i + 1] - x[i]) * (y[i + 1] + y[i])
    return s


def horner(c, t):
    """Polynomial c[0] t^(n-1) + ... + c[n-1] at a scalar t."""
    acc = 0.0
    for i in range(len(c)):
        acc = acc * t + c[i]
    return acc


def poly_vandermonde(c, t):
    """sum_k c[k] t^k at every point of t."""
    powers = np.arange(len(c)).reshape(1, -1)
    return (t.reshape(-1, 1) ** powers) @ c


def ema(x, alpha):
    """Exponential moving average, stored element by element."""
    out = np.empty(len(x))
    acc = x[0]
    for i in range(len(x)):
        acc = alpha * x[i] + (1.0 - alpha) * acc
        out[i] = acc
    return out


def spring_chain_energy(x, k, rest):
    e = 0.0
    for i in range(len(x) - 1):
        d = x[i + 1] - x[i] - rest
        e += 0.5 * k * d * d
    return e


# ------------------------------------------------------------------------------ in-place updates
def sgd_step(w, X, y, lr):
    """One gradient step of least squares, updating w in place; returns the new loss."""
    g = X.T @ (X @ w - y) / len(y)
    w -= lr * g
    r = X @ w - y
    return np.mean(r * r)


def cumsum_inplace(x):
    for i in range(1, len(x)):
        x[i] += x[i - 1]
    return x[len(x) - 1]


def clip_by_norm(g, max_norm):
    """Scale g in place so that its norm is at most max_norm; returns the old norm."""
    norm = np.sqrt(np.sum(g * g))
    g *= min(1.0, max_norm / norm)
    return norm


def adam_step(w, g, m, v, lr, t):
    """One Adam update of w, m and v in place."""
    b1, b2 = 0.9, 0.999
    m *= b1
    m += (1.0 - b1) * g
    v *= b2
    v += (1.0 - b2) * g * g
    m_hat = m / (1.0 - b1 ** t)
    v_hat = v / (1.0 - b2 ** t)
    w -= lr * m_hat / (np.sqrt(v_hat) + 1e-8)


def centered_copy(x):
    """A centered, unit-range copy; x itself stays as it is."""
    y = x.copy()
    y -= y.mean()
    y /= np.max(np.abs(y)) + 1.0
    return y


# ------------------------------------------------------------------------------ rows and elements
def row_norms(W):
    out = np.zeros(W.shape[0])
    for j in range(W.shape[0]):
        row = W[j]
        out[j] = np.sqrt(row @ row)
    return out


def matrix_trace(A):
    t = 0.0
    for i in range(min(A.shape[0], A.shape[1])):
        t += A[i, i]
    return t


def mean_via_ones(x):
    return np.ones(len(x)) @ x / len(x)


# ------------------------------------------------------------------------------ misc numerics
def top1_accuracy(logits, labels):
    return np.mean(np.argmax(logits, axis=1) == labels)


def label_smoothing_loss(logits, onehot, eps):
    k = onehot.shape[1]
    target = onehot * (1.0 - eps) + np.full_like(onehot, eps / k)
    return cross_entropy(logits, target)


def bin_index(x, lo, width):
    return ((x - lo) // width).astype(np.int64)


def stats(x):
    return np.mean(x), np.min(x), np.max(x), np.prod(np.abs(x)) ** (1.0 / len(x))


def to_polar(x, y):
    return np.hypot(x, y), np.arctan2(y, x)


def wrap_angle(theta):
    return (theta + np.pi) % (2.0 * np.pi) - np.pi


def band_count(x, lo, hi):
    """How many values lie strictly inside (lo, hi), and the sum of those outside."""
    inside = (x > lo) & (x < hi)
    return np.sum(inside), np.sum(np.where(~inside | np.isnan(x), x, 0.0))


def quantize(x, step):
    q = np.floor(x / step).astype(np.int64)
    return q, np.clip(q * step, -1.0, 1.0)


def smooth_abs_sum(x, eps):
    return np.sum(np.sqrt(x * x + eps)) + np.sum(np.sign(x) * np.fabs(x) ** 1.5)


def outer_trace_form(u, v, A):
    """sum(A * outer(u, v)) == u @ A @ v."""
    return np.sum(A * np.outer(u, v))


# ------------------------------------------------------------------------------ argument factories
def _n(rng, lo=1, hi=7):
    """A size in [lo, hi): 1 is drawn too (a size of 1 broadcasts, so it compiles its own version)."""
    return int(rng.integers(lo, hi))


def _vec(rng, shape, scale=1.0):
    return scale * rng.standard_normal(shape)


def _positive(rng, shape):
    return rng.uniform(0.5, 2.0, shape)


def _labels(rng, n):
    return np.where(rng.standard_normal(n) > 0.0, 1.0, -1.0)


def vector(scale=1.0, lo=1, hi=7):
    return lambda rng: (_vec(rng, _n(rng, lo, hi), scale),)


def matrix(scale=1.0, lo=1):
    return lambda rng: (_vec(rng, (_n(rng, lo), _n(rng)), scale),)


def with_floats(factory, *floats):
    return lambda rng: factory(rng) + floats


def same_shape_pair(rng):
    shape = (_n(rng), _n(rng))
    return _vec(rng, shape), _vec(rng, shape)


def vector_pair(rng):
    n = _n(rng)
    return _vec(rng, n), _vec(rng, n)


def two_point_sets(rng):
    d = _n(rng)
    return _vec(rng, (_n(rng), d)), _vec(rng, (_n(rng), d))


def normalization(rng):
    """X, gamma, beta for a norm over the last axis."""
    n, d = _n(rng, 2), _n(rng, 2)
    return _vec(rng, (n, d)), _positive(rng, d), _vec(rng, d)


def lat_lon_pairs(rng):
    n = _n(rng)
    return (rng.uniform(-80.0, 80.0, n), rng.uniform(-180.0, 180.0, n),
            rng.uniform(-80.0, 80.0, n), rng.uniform(-180.0, 180.0, n))


def regression(rng, labels=False):
    """X, w, y: a design matrix, weights and targets (labels in {-1, +1} when `labels`)."""
    n, d = _n(rng, 2, 9), _n(rng, 1, 5)
    return _vec(rng, (n, d)), _vec(rng, d), (_labels(rng, n) if labels else _vec(rng, n))


def classification(rng):
    return regression(rng, labels=True)


def logistic_args(rng):
    X, w, y = classification(rng)
    return X, w, 0.1, y


def poisson_args(rng):
    X, w, y = regression(rng)
    return 0.5 * X, w, np.floor(np.abs(3.0 * y))


def logits_onehot(rng):
    n, k = _n(rng), _n(rng, 2, 6)
    return _vec(rng, (n, k), 2.0), np.eye(k)[rng.integers(0, k, n)]


def gaussian_args(rng):
    n = _n(rng)
    return _vec(rng, n), _vec(rng, n), _vec(rng, n, 0.3)


def mlp_args(rng):
    n, d, h = _n(rng), _n(rng, 1, 5), _n(rng, 2, 6)
    return (_vec(rng, (n, d)), _vec(rng, (d, h), 0.5), _vec(rng, h), _vec(rng, h, 0.5),
            float(rng.standard_normal()))


def mlp_loss_args(rng):
    args = mlp_args(rng)
    return args + (_vec(rng, len(args[0])),)


def rnn_args(steps):
    def factory(rng):
        h, d = _n(rng, 1, 6), _n(rng, 1, 5)
        xs = tuple(_vec(rng, d) for _ in range(steps))
        return (_vec(rng, h), *xs, _vec(rng, (h, h), 0.5), _vec(rng, (h, d), 0.5), _vec(rng, h))
    return factory


def qkv(rng):
    n, m, d = _n(rng), _n(rng), _n(rng, 1, 5)
    return _vec(rng, (n, d)), _vec(rng, (m, d)), _vec(rng, (m, _n(rng, 1, 4)))


def bilinear_args(rng):
    n, m = _n(rng), _n(rng)
    return _vec(rng, n), _vec(rng, (n, m)), _vec(rng, m)


def square_and_vector(rng):
    n = _n(rng)
    return _vec(rng, (n, n)), _vec(rng, n)


def signal_and_kernel(rng):
    m = _n(rng, 1, 4)
    return _vec(rng, m + _n(rng, 0, 6)), _vec(rng, m)


def sorted_samples(rng):
    n = _n(rng, 2, 9)
    return np.sort(_vec(rng, n)), _vec(rng, n)


def sgd_args(rng):
    X, w, y = regression(rng)
    return w, X, y, 0.05


def adam_args(rng):
    n = _n(rng)
    return _vec(rng, n), _vec(rng, n), _vec(rng, n, 0.1), _positive(rng, n) * 0.01, 1e-2, 3


def top1_args(rng):
    logits, onehot = logits_onehot(rng)
    return logits, rng.integers(0, onehot.shape[1], len(logits))


def outer_args(rng):
    n, m = _n(rng), _n(rng)
    return _vec(rng, n), _vec(rng, m), _vec(rng, (n, m))


CORPUS = [
    (softmax, vector(3.0), None),
    (softmax_rows, matrix(3.0), None),
    (logsumexp, vector(3.0), (0,)),
    (relu_sum, vector(), (0,)),
    (leaky_relu, with_floats(matrix(), 0.01), None),
    (gelu_tanh_mean, matrix(), (0,)),
    (softplus_sum, vector(5.0), (0,)),
    (sigmoid, vector(4.0), None),
    (layer_norm, normalization, None),
    (layer_norm_loss, normalization, (0, 1, 2)),
    (normalize_rows, matrix(), None),
    (min_max_scale, vector(lo=2, hi=9), None),
    (standardize_columns, matrix(lo=2), None),
    (batch_norm_loss, normalization, (0, 1, 2)),
    (pairwise_sq_dists, matrix(), None),
    (cross_sq_dists, two_point_sets, None),
    (rbf_kernel_sum, with_floats(matrix(), 0.3), (0, 1)),
    (nearest_centroid, two_point_sets, None),
    (haversine, lat_lon_pairs, None),
    (mean_haversine, lat_lon_pairs, (0, 1, 2, 3)),
    (cosine_similarity, vector_pair, (0, 1)),
    (mse, same_shape_pair, (0, 1)),
    (huber, with_floats(lambda rng: (_vec(rng, 10, 2.0), _vec(rng, 10)), 1.0), (0, 1)),
    (logistic_loss, logistic_args, (1, 2)),
    (hinge_loss, with_floats(classification, 0.01), (0, 1)),
    (ridge_loss, with_floats(regression, 0.1), (0, 1, 3)),
    (poisson_nll, poisson_args, (0, 1)),
    (cross_entropy, logits_onehot, (0,)),
    (gaussian_nll, gaussian_args, (0, 1, 2)),
    (accuracy, classification, None),
    (mlp_forward, mlp_args, None),
    (mlp_loss, mlp_loss_args, (1, 2, 3, 4)),
    (rnn_step, rnn_args(1), None),
    (rnn_two_steps_loss, rnn_args(2), (0, 1, 3, 4, 5)),
    (attention, qkv, None),
    (attention_loss, qkv, (0, 1, 2)),
    (bilinear, bilinear_args, (0, 1, 2)),
    (covariance, matrix(lo=2), None),
    (power_iteration, square_and_vector, (0, 1)),
    (rotate_points, lambda rng: (_vec(rng, (_n(rng), 2)), float(rng.uniform(-3.0, 3.0))), None),
    (rosenbrock, vector(lo=2, hi=9), (0,)),
    (conv1d, signal_and_kernel, None),
    (conv1d_energy, signal_and_kernel, (0, 1)),
    (smooth3, vector(lo=3, hi=10), None),
    (trapezoid, sorted_samples, (0, 1)),
    (horner, lambda rng: (_vec(rng, _n(rng)), float(rng.standard_normal())), (1,)),
    (poly_vandermonde, lambda rng: (_vec(rng, _n(rng)), _vec(rng, _n(rng))), None),
    (ema, with_floats(vector(hi=9), 0.3), None),
    (spring_chain_energy, lambda rng: (np.cumsum(_positive(rng, _n(rng, 2, 9))), 2.5, 1.0), (0, 1, 2)),
    (sgd_step, sgd_args, None),
    (cumsum_inplace, vector(lo=2, hi=9), None),
    (clip_by_norm, with_floats(vector(3.0, lo=2), 1.5), None),
    (adam_step, adam_args, None),
    (centered_copy, vector(), None),
    (row_norms, matrix(), None),
    (matrix_trace, matrix(), (0,)),
    (mean_via_ones, vector(), (0,)),
    (top1_accuracy, top1_args, None),
    (label_smoothing_loss, with_floats(logits_onehot, 0.1), (0, 2)),
    (bin_index, with_floats(vector(3.0, hi=12), -1.0, 0.5), None),
    (stats, vector(), None),
    (to_polar, same_shape_pair, None),
    (wrap_angle, vector(10.0), None),
    (band_count, with_floats(vector(hi=12), -0.5, 0.7), None),
    (quantize, with_floats(vector(hi=12), 0.25), None),
    (smooth_abs_sum, with_floats(vector(), 1e-2), (0, 1)),
    (outer_trace_form, outer_args, (0, 1, 2)),
]
