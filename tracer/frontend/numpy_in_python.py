"""NumPy functions written in NumPy, traced like the user's code (tracer.frontend.numpy_linalg
calls them with `tracer.call`): each follows NumPy's own definition, step for step, over
functions the tracer compiles, so its result is what those give.
"""
from __future__ import annotations

import numpy as np


def cond(x, p):
    """np.linalg.cond for p None, 2 or -2: the ratio of the extreme singular values, inf where
    that is a NaN that no NaN in x explains (a zero matrix)."""
    if x.size == 0:
        raise np.linalg.LinAlgError("cond is not defined on empty arrays")
    s = np.linalg.svd(x, compute_uv=False)
    r = s[-1] / s[0] if p == -2 else s[0] / s[-1]
    if np.isnan(r) and not np.isnan(x).any():
        r = np.inf
    return r


def matrix_rank(A, tol, rtol):
    """np.linalg.matrix_rank of a matrix: the singular values above tol (by default the largest
    times max(m, n) * eps)."""
    S = np.linalg.svd(A, compute_uv=False)
    if tol is None:
        if rtol is None:
            rtol = max(A.shape[-2:]) * np.finfo(S.dtype).eps
        tol = S.max(axis=-1, keepdims=True, initial=0) * rtol
    return np.count_nonzero(S > tol, axis=-1)


def vector_rank(v):
    """np.linalg.matrix_rank of a vector or a number: 1 unless it is all zeros."""
    return int(not np.all(v == 0))


def matrix_power(a, n):
    """np.linalg.matrix_power of a square matrix and an int known at trace time: NumPy's
    shortcuts for n up to 3, else its binary decomposition (squarings from the lowest bit)."""
    if n == 0:
        out = np.empty_like(a)
        out[...] = np.eye(a.shape[-2], dtype=a.dtype)
        return out
    if n < 0:
        a = np.linalg.inv(a)
        n = abs(n)
    if n == 1:
        return a
    if n == 2:
        return a @ a
    if n == 3:
        return (a @ a) @ a
    z = result = None
    while n > 0:
        z = a if z is None else z @ z
        n, bit = divmod(n, 2)
        if bit:
            result = z if result is None else result @ z
    return result
