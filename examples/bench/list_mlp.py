"""The micrograd-style MLP of examples/mlp.py (plain Python lists and objects), forward pass:
compiled with its loops kept (the weights gathered into arrays per call, tracer/frontend/gathered.py)
against the same model unrolled (one input per weight: how lists of at most 8 items compile),
plain Python, and a NumPy forward over arrays holding the same weights. Every result is
checked against Python first.

    python examples/bench/list_mlp.py [--widths 16 32 64 128] [--unrolled-up-to 32]
"""
import argparse
import os
import platform
import random
import sys
import time
import timeit

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import mlp

import tracer.frontend.branches
import tracer.frontend.gathered
from tracer import trace


def per_call(f, *args, repeat=5) -> float:
    """Best of `repeat` timings, seconds per call."""
    f(*args)
    number = max(1, int(0.05 / max(timeit.timeit(lambda: f(*args), number=1), 1e-7)))
    return min(timeit.repeat(lambda: f(*args), number=number, repeat=repeat)) / number


def compiled(model, point, unrolled: bool):
    """A fresh @trace of the forward pass, compiled on `point`; (function, seconds to compile)."""
    saved = tracer.frontend.branches.UNROLL_LIMIT, tracer.frontend.gathered.unroll_limit
    if unrolled:                       # lists of any length unroll, as short ones do
        tracer.frontend.branches.UNROLL_LIMIT = 10 ** 9
        tracer.frontend.gathered.unroll_limit = lambda t: 10 ** 9
    try:
        f = trace(mlp.forward)
        start = time.perf_counter()
        f(model, *point)
        return f, time.perf_counter() - start
    finally:
        tracer.frontend.branches.UNROLL_LIMIT, tracer.frontend.gathered.unroll_limit = saved


def numpy_forward(layers, x):
    for W, b, relu in layers:
        x = x @ W + b
        if relu:
            x = np.maximum(x, 0.0)
    return x[0]


def ir_size(f) -> int:
    return sum(1 for _ in f.specializations[0].optimized.walk())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--widths", type=int, nargs="*", default=[16, 32, 64, 128])
    parser.add_argument("--unrolled-up-to", type=int, default=32)
    options = parser.parse_args()
    print(f"Python {platform.python_version()}, {platform.machine()}; MLP 2 -> w -> w -> 1, forward pass")
    print(f"{'width':>5} | {'Python':>9} | {'tracer (loops)':>24} | {'NumPy forward':>9} | {'tracer unrolled':>28}")
    for width in options.widths:
        rng = random.Random(width)
        model = mlp.MLP(2, [width, width, 1], rng)
        point = (0.3, -0.7)
        layers = [(np.array([n.w for n in layer.neurons]).T, np.array([n.b for n in layer.neurons]),
                   layer.neurons[0].nonlin) for layer in model.layers]
        expected = mlp.forward(model, *point)
        looped, looped_compile = compiled(model, point, unrolled=False)
        assert abs(looped(model, *point) - expected) < 1e-9 and abs(numpy_forward(layers, np.array(point)) - expected) < 1e-9
        t_python = per_call(mlp.forward, model, *point)
        t_looped = per_call(looped, model, *point)
        t_numpy = per_call(numpy_forward, layers, np.array(point))
        line = (f"{width:>5} | {t_python * 1e6:>6.1f} us | {t_looped * 1e6:>6.1f} us ({t_python / t_looped:>4.1f}x), "
                f"{ir_size(looped):>4} ops | {t_numpy * 1e6:>6.1f} us")
        if width <= options.unrolled_up_to:
            unrolled, unrolled_compile = compiled(model, point, unrolled=True)
            assert abs(unrolled(model, *point) - expected) < 1e-9
            t_unrolled = per_call(unrolled, model, *point)
            line += (f" | {t_unrolled * 1e6:>6.1f} us, {ir_size(unrolled):>5} ops, "
                     f"compile {unrolled_compile:.1f} s vs {looped_compile:.1f} s")
        else:
            line += " | (not compiled: too slow to compile)"
        print(line, flush=True)
    print("ratios: Python time / tracer time (> 1: the tracer is faster)")


if __name__ == "__main__":
    main()
