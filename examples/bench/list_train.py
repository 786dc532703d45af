"""Training the plain-Python MLP of examples/train_lists.py (2 -> 16 -> 16 -> 1 over lists of
lists of floats, hinge loss, SGD one point at a time) with its compiled step, against the same
model held in NumPy arrays: NumPy with a hand-written backward, and the NumPy form compiled by
the tracer (`grad` of the NumPy loss, in-place updates). Every method starts from the same
weights and sees the same points; after one epoch the weights are checked to agree. Methods
interleave round by round (best round each), so the machine's slow spells hit all alike.
Ratios: the peer's time / the list step's time (> 1: the compiled list step is faster).

    python examples/bench/list_train.py [--rounds 7] [--sizes 2 16 16 1]
"""
import argparse
import copy
import os
import platform
import random
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import train_lists

from tracer import grad, trace


def numpy_step(W1, b1, W2, b2, W3, b3, x, y, lr):
    """The step with the backward written by hand (W: one row per output, as the lists)."""
    z1 = W1 @ x + b1
    h1 = np.maximum(z1, 0.0)
    z2 = W2 @ h1 + b2
    h2 = np.maximum(z2, 0.0)
    if 1.0 - y * (W3 @ h2 + b3)[0] <= 0.0:
        return                                   # the hinge is flat here: no gradient
    ds = np.array([-y])
    dz2 = (W3.T @ ds) * (z2 > 0.0)
    dz1 = (W2.T @ dz2) * (z1 > 0.0)
    W3 -= lr * np.outer(ds, h2)
    b3 -= lr * ds
    W2 -= lr * np.outer(dz2, h1)
    b2 -= lr * dz2
    W1 -= lr * np.outer(dz1, x)
    b1 -= lr * dz1


def numpy_loss(W1, b1, W2, b2, W3, b3, x, y):
    h = np.maximum(W2 @ np.maximum(W1 @ x + b1, 0.0) + b2, 0.0)
    return max(0.0, 1.0 - y * (W3 @ h + b3)[0])


@trace
def traced_numpy_step(W1, b1, W2, b2, W3, b3, x, y, lr):
    gW1, gb1, gW2, gb2, gW3, gb3 = grad(numpy_loss, argnums=(0, 1, 2, 3, 4, 5))(W1, b1, W2, b2, W3, b3, x, y)
    W1 -= lr * gW1
    b1 -= lr * gb1
    W2 -= lr * gW2
    b2 -= lr * gb2
    W3 -= lr * gW3
    b3 -= lr * gb3


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--sizes", type=int, nargs="+", default=[2, 16, 16, 1])
    opts = parser.parse_args()
    rng = random.Random(0)
    lists = train_lists.init(opts.sizes, rng)
    arrays = [np.array(p) for p in lists]
    points = train_lists.moons(300, rng)
    array_points = [(np.array(x), y) for x, y in points]
    lr = 0.01

    def run_lists():
        for x, y in points:
            train_lists.step(*lists, x, y, lr)

    def run_numpy(step, params):
        def run():
            for x, y in array_points:
                step(*params, x, y, lr)
        return run

    start = time.perf_counter()
    train_lists.step(*copy.deepcopy(lists), *points[0], lr)
    compile_lists = time.perf_counter() - start
    start = time.perf_counter()
    traced_numpy_step(*[a.copy() for a in arrays], *array_points[0], lr)
    compile_numpy = time.perf_counter() - start

    hand, traced = [a.copy() for a in arrays], [a.copy() for a in arrays]
    methods = {"tracer, lists": run_lists, "NumPy, hand-written backward": run_numpy(numpy_step, hand),
               "tracer, NumPy arrays": run_numpy(traced_numpy_step, traced)}
    best = {name: float("inf") for name in methods}
    for r in range(opts.rounds):
        for name, run in methods.items():
            start = time.perf_counter()
            run()
            best[name] = min(best[name], (time.perf_counter() - start) / len(points))
        if r == 0:       # one epoch each from the same weights: the same model
            for a, b, c in zip(lists, hand, traced):
                assert np.allclose(np.array(a), b, rtol=1e-9, atol=1e-12) and np.allclose(b, c, rtol=1e-9, atol=1e-12)

    print(f"MLP {' -> '.join(map(str, opts.sizes))} over lists, SGD one point per step, "
          f"Python {platform.python_version()}, {platform.machine()}")
    print(f"compile: list step {compile_lists:.2f} s, NumPy step {compile_numpy:.2f} s")
    mine = best["tracer, lists"]
    for name, t in best.items():
        ratio = "" if name == "tracer, lists" else f"  ratio {t / mine:5.2f}x"
        print(f"  {name:30s} {t * 1e6:8.1f} us/step{ratio}")


if __name__ == "__main__":
    main()
