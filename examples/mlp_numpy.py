"""An MLP forward pass written with NumPy (784 -> 50 -> 10, ReLU, softmax), compiled and checked
against NumPy running the same function.

    python examples/mlp_numpy.py
"""
import time

import numpy as np

from tracer import trace


def mlp(W1, b1, W2, b2, x):
    """Class probabilities for a batch of rows x (or one row)."""
    h = np.maximum(x @ W1 + b1, 0.0)
    o = h @ W2 + b2
    e = np.exp(o - o.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def main():
    rng = np.random.default_rng(0)
    W1, b1 = rng.normal(0.0, 0.05, (784, 50)), np.zeros(50)
    W2, b2 = rng.normal(0.0, 0.05, (50, 10)), np.zeros(10)
    compiled = trace(mlp)
    for batch in (1, 32, 128):
        x = rng.random((batch, 784))
        t0 = time.perf_counter()
        p = compiled(W1, b1, W2, b2, x)                      # the first call for a new shape compiles
        first = time.perf_counter() - t0
        expected = mlp(W1, b1, W2, b2, x)
        assert p.shape == expected.shape and p.dtype == expected.dtype
        err = np.max(np.abs(p - expected))
        assert err < 1e-12, err
        n = 200
        t0 = time.perf_counter()
        for _ in range(n):
            compiled(W1, b1, W2, b2, x)
        ours = (time.perf_counter() - t0) / n
        t0 = time.perf_counter()
        for _ in range(n):
            mlp(W1, b1, W2, b2, x)
        numpy_time = (time.perf_counter() - t0) / n
        print(f"batch {batch:4d}: max |compiled - NumPy| = {err:.1e}; first call {first * 1e3:6.1f} ms; "
              f"{ours * 1e6:8.1f} us/call compiled, {numpy_time * 1e6:8.1f} us/call NumPy "
              f"({numpy_time / ours:.2f}x)")
    print("specializations:", len(compiled.specializations), "(batch size is a run-time size: 1 is its own)")


if __name__ == "__main__":
    main()
