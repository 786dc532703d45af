"""Every core: compiled code in two Python threads at once (the GIL released), and `parallel=True`
against the same function compiled for one thread.

    python examples/bench/threads.py [--repeat 5]

1. Python threads: a compiled loop and a compiled array function, called N times one after the
   other in one thread, then N/2 times in each of two threads started together. Compiled code
   that touches no Python object releases the GIL, so on two free cores the two threads take
   about half the time (ratio near 0.5; holding the GIL, 1.0 or more).
2. `trace(parallel=True)`: array maps and sums of 10M float64 elements, best of --repeat calls,
   against `trace` of the same function (one thread). The ratio is the speedup from the pool's
   threads (`tracer.native.get_num_threads()`, TRACER_NUM_THREADS or the CPUs), each result
   checked bit for bit against the one-thread result first.
3. `for i in tracer.prange(n)` loops (numba-style kernels) with `parallel=True` against `trace`
   of the same function, whose prange runs as a plain loop: results checked against it first
   (bit for bit, or to 1e-12 where an accumulator's sum is regrouped per chunk).
"""
from __future__ import annotations

import argparse
import os
import threading
import time

import numpy as np

from tracer import native, prange, trace


def spin(n):
    s = 0.0
    for i in range(n):
        s += (i * 0.5) % 3.0
    return s


def norm_sum(a):
    return np.sum(np.tanh(np.sqrt(a)) * a)


def best_of(repeat: int, call) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - start)
    return best


def in_threads(call, calls: int, threads: int) -> float:
    """Seconds for `calls` calls spread over `threads` threads started together."""
    barrier = threading.Barrier(threads + 1)

    def work():
        barrier.wait()
        for _ in range(calls // threads):
            call()
    workers = [threading.Thread(target=work) for _ in range(threads)]
    for w in workers:
        w.start()
    barrier.wait()
    start = time.perf_counter()
    for w in workers:
        w.join()
    return time.perf_counter() - start


WORKLOADS = [
    ("np.sqrt(a * a + b * b) * 0.5 + np.tanh(a)", lambda a, b: np.sqrt(a * a + b * b) * 0.5 + np.tanh(a)),
    ("np.exp(-a) * b", lambda a, b: np.exp(-a) * b),
    ("a.sum()", lambda a, b: a.sum()),
    ("np.sum(a * b)", lambda a, b: np.sum(a * b)),
    ("np.clip(a * 1.5 - b, 0.0, 1.0)", lambda a, b: np.clip(a * 1.5 - b, 0.0, 1.0)),
    ("a.max(), b.min()", lambda a, b: (a.max(), b.min())),
]


def pairwise_distances(x):
    n = x.shape[0]
    out = np.empty((n, n))
    for i in prange(n):
        for j in range(n):
            d = 0.0
            for k in range(x.shape[1]):
                t = x[i, k] - x[j, k]
                d += t * t
            out[i, j] = np.sqrt(d)
    return out


def row_normalise(a):
    out = np.empty_like(a)
    for i in prange(a.shape[0]):
        s = 0.0
        for j in range(a.shape[1]):
            s += a[i, j] * a[i, j]
        s = np.sqrt(s)
        for j in range(a.shape[1]):
            out[i, j] = a[i, j] / s
    return out


def energy(a, b):
    s = 0.0
    for i in prange(len(a)):
        s += np.exp(-a[i]) * b[i]
    return s


def stencil(a):
    out = np.zeros_like(a)
    for i in prange(1, a.shape[0] - 1):
        for j in range(1, a.shape[1] - 1):
            out[i, j] = 0.25 * (a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1]) - a[i, j]
    return out


def prange_workloads(rng):
    a, b = rng.random(10_000_000), rng.random(10_000_000)
    return [("pairwise distances, 2000 x 3 points", pairwise_distances, (rng.random((2000, 3)),)),
            ("row normalisation, 5000 x 400", row_normalise, (rng.random((5000, 400)),)),
            ("sum of exp(-a[i]) * b[i], 10M", energy, (a, b)),
            ("5-point stencil, 3000 x 3000", stencil, (rng.random((3000, 3000)),))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"{os.cpu_count()} CPUs, tracer's pool: {native.get_num_threads()} threads")

    print("\n1. two Python threads calling compiled code (the GIL released)")
    a = np.random.default_rng(0).random(2_000_000)
    compiled_spin, compiled_norm_sum = trace(spin), trace(norm_sum)
    for name, call in (("loop spin(3_000_000)", lambda: compiled_spin(3_000_000)),
                       ("np.sum(np.tanh(np.sqrt(a)) * a), 2M", lambda: compiled_norm_sum(a))):
        call()
        one = min(in_threads(call, 8, 1) for _ in range(max(1, args.repeat // 2)))
        two = min(in_threads(call, 8, 2) for _ in range(max(1, args.repeat // 2)))
        print(f"  {name:42s} one thread {one * 1e3:8.1f} ms  two threads {two * 1e3:8.1f} ms  ratio {two / one:5.2f}")

    print("\n2. parallel=True against one thread, 10M float64")
    rng = np.random.default_rng(1)
    a, b = rng.random(10_000_000), rng.random(10_000_000)
    for name, fn in WORKLOADS:
        one, every = trace(fn), trace(fn, parallel=True)
        assert np.asarray(one(a, b)).tobytes() == np.asarray(every(a, b)).tobytes(), name
        t_one, t_every = best_of(args.repeat, lambda: one(a, b)), best_of(args.repeat, lambda: every(a, b))
        print(f"  {name:42s} one thread {t_one * 1e3:8.2f} ms  parallel {t_every * 1e3:8.2f} ms  "
              f"speedup {t_one / t_every:5.2f}x")

    print("\n3. prange loops, parallel=True against one thread")
    for name, fn, values in prange_workloads(rng):
        one, every = trace(fn), trace(fn, parallel=True)
        assert np.allclose(one(*values), every(*values), rtol=1e-12, atol=0.0), name
        t_one, t_every = best_of(args.repeat, lambda: one(*values)), best_of(args.repeat, lambda: every(*values))
        print(f"  {name:42s} one thread {t_one * 1e3:8.2f} ms  parallel {t_every * 1e3:8.2f} ms  "
              f"speedup {t_one / t_every:5.2f}x")


if __name__ == "__main__":
    main()
