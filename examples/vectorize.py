"""`vectorize`: a scalar function and its gradient over a million samples, in one native loop.

The benchmark function `d(a, b, c)` (B2 in docs/performance.md) is written for floats. `vectorize(value_and_grad(d, argnums=(0, 1, 2)))`
runs the value and all three partial derivatives per sample in one loop over the arrays (no
Python per element, no temporary arrays between the forward and the gradient), checked here
against finite differences and timed against NumPy running the forward alone.

    python examples/vectorize.py
"""
import time

import numpy as np

from tracer import value_and_grad, vectorize


def d(a, b, c):
    return -a*b + (c - a/b)*(a + b)*c - (b*c - a)/(a + c) + b*b*c/a


def main():
    rng = np.random.default_rng(0)
    n = 1_000_000
    a, b, c = (rng.uniform(0.5, 2.0, n) for _ in range(3))

    vg = vectorize(value_and_grad(d, argnums=(0, 1, 2)))
    t0 = time.perf_counter()
    value, (da, db, dc) = vg(a, b, c)
    print(f"first call (trace, differentiate, compile, run): {(time.perf_counter() - t0) * 1e3:.0f} ms")

    np.testing.assert_allclose(value, d(a, b, c), rtol=1e-12, atol=1e-12)
    eps = 1e-6
    for name, g, bumped in [("a", da, lambda e: d(a + e, b, c)), ("b", db, lambda e: d(a, b + e, c)),
                            ("c", dc, lambda e: d(a, b, c + e))]:
        fd = (bumped(eps) - bumped(-eps)) / (2 * eps)
        print(f"dd/d{name}: max |compiled - finite difference| = {np.max(np.abs(g - fd)):.1e}")
        assert np.allclose(g, fd, rtol=1e-5, atol=1e-6)

    def best(f, repeat=5):
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            f()
            times.append(time.perf_counter() - t0)
        return min(times)
    ours = best(lambda: vg(a, b, c))
    numpy_forward = best(lambda: d(a, b, c))
    print(f"{n:,} samples: value + 3 partials {ours * 1e3:.1f} ms; NumPy forward alone {numpy_forward * 1e3:.1f} ms")
    print(f"scalars broadcast too: vg(a[:3], 2.0, 3.0)[0] = {vg(a[:3], 2.0, 3.0)[0]}")


if __name__ == "__main__":
    main()
