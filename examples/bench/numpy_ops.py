"""Array code as users write it, op by op: the tracer against NumPy itself, one thread.

Each workload is a one-line NumPy function compiled with `trace`; its result is checked against
NumPy's (bit for bit where the tracer computes what NumPy computes, else to a relative 1e-13,
noted), then NumPy's call and the compiled call are timed one after the other: best of --repeat samples of
at least --min-sample seconds each. The ratio is tracer time / NumPy time (below 1: faster).

    python examples/bench/numpy_ops.py [--repeat 5] [--min-sample 0.2]
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402  (after the thread settings above)

from tracer import trace  # noqa: E402

RNG = np.random.default_rng(0)
A = RNG.random(100_000)
X = RNG.random((1000, 1000))

WORKLOADS = [
    ("a ** 2, 100k float64", lambda a: a ** 2, (A,)),
    ("a ** 3, 100k", lambda a: a ** 3, (A,)),
    ("np.sqrt(np.sum(x ** 2, axis=1)), 1000x1000", lambda x: np.sqrt(np.sum(x ** 2, axis=1)), (X,)),
    ("np.sum(x * x, axis=1), 1000x1000", lambda x: np.sum(x * x, axis=1), (X,)),
    ("np.exp(a), 100k", lambda a: np.exp(a), (A,)),
    ("np.log(a), 100k", lambda a: np.log(a), (A,)),
    ("np.tanh(a), 100k", lambda a: np.tanh(a), (A,)),
    ("a.sum(), 100k", lambda a: a.sum(), (A,)),
    ("np.sum(a * a + a), 100k", lambda a: np.sum(a * a + a), (A,)),
    ("(a - a.mean()) / a.std(), 100k", lambda a: (a - a.mean()) / a.std(), (A,)),
    ("np.where(a > 0.5, a, 0.0).sum(), 100k", lambda a: np.where(a > 0.5, a, 0.0).sum(), (A,)),
]


def best_time(fn, args, repeat: int, min_sample: float) -> float:
    """Seconds per call: the best of `repeat` samples, each at least `min_sample` seconds."""
    calls = 1
    while True:
        start = time.perf_counter()
        for _ in range(calls):
            fn(*args)
        if time.perf_counter() - start >= min_sample:
            break
        calls *= 2
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(calls):
            fn(*args)
        best = min(best, (time.perf_counter() - start) / calls)
    return best


def agreement(got, want) -> str:
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape or got.dtype != want.dtype:
        raise AssertionError(f"shape or dtype differs: {got.shape} {got.dtype}, NumPy {want.shape} {want.dtype}")
    if np.array_equal(got, want):
        return "bits"
    np.testing.assert_allclose(got, want, rtol=1e-13)
    return "1e-13"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--min-sample", type=float, default=0.2)
    options = parser.parse_args()
    print(f"Python {platform.python_version()}, NumPy {np.__version__}, {platform.machine()}, one thread")
    print(f"{'workload':46s} {'NumPy':>11s} {'tracer':>11s} {'ratio':>7s}  agrees")
    for name, fn, args in WORKLOADS:
        compiled = trace(fn)
        agrees = agreement(compiled(*args), fn(*args))
        numpy_time = best_time(fn, args, options.repeat, options.min_sample)
        tracer_time = best_time(compiled, args, options.repeat, options.min_sample)
        print(f"{name:46s} {numpy_time * 1e3:8.3f} ms {tracer_time * 1e3:8.3f} ms {tracer_time / numpy_time:6.2f}x  "
              f"{agrees}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
