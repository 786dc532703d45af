"""What polling for Ctrl-C costs compiled code: each workload compiled twice, as `@trace`
compiles it (its loops poll for signals, so that Ctrl-C interrupts them) and with the polls
left out (as in exported libraries, which run no Python), timed in turns in this run.

The workloads: the three of `loops.py` (a float `while` whose trip count depends on x, a
`for` over a range of libm calls, an int `while` with a branch), and small loops where a poll
would weigh most: a one-add int `for` (`s += i`), the same as a `while i < n: ... i += 1`, a
float `for`, two nested `for`s of an int multiply-add, and an elementwise `for` over a NumPy
array. Compiled loops poll in strips (codegen.lower.lower_counted_loop): a loop that counts up
to a bound runs its iterations without polls, and counts their work, polling if it ran out,
before each strip of them.

    python examples/bench/signal_polls.py [--repeat 7]

Prints per workload the best time of each (per call of the workload's loop) and the cost of the
polls in percent.
"""
import argparse
import os
import sys
import time
import types

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from loops import make_workloads

import codegen.jit
from tracer import trace


def int_sum(n):
    s = 0
    for i in range(n):
        s += i
    return s


def while_sum(n):
    s = 0
    i = 0
    while i < n:
        s += i
        i += 1
    return s


def float_sum(n):
    s = 0.0
    for i in range(n):
        s += i * 0.5
    return s


def nested(n):
    s = 0
    for i in range(n):
        for j in range(n):
            s += i * j
    return s


def scale(a, out):
    for i in range(a.shape[0]):
        out[i] = a[i] * 2.0 + 1.0
    return out


def small_loops():
    """(name, function, argument tuples) of the small loops."""
    a, out = np.linspace(0.0, 1.0, 1_000_000), np.zeros(1_000_000)
    return [("int_sum", int_sum, [(5_000_000,)]), ("while_sum", while_sum, [(5_000_000,)]),
            ("float_sum", float_sum, [(2_000_000,)]), ("nested", nested, [(1_500,)]),
            ("scale", scale, [(a, out)])]


def fresh(fn):
    return types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)


def compiled(fn, calls, polls: bool):
    """trace(fn), compiled on the first of `calls`, with or without polls for signals."""
    saved = codegen.jit.JIT_MEMORY
    if not polls:
        codegen.jit.JIT_MEMORY = saved._replace(check_signals=None)
    try:
        f = trace(fresh(fn))
        f(*calls[0])
    finally:
        codegen.jit.JIT_MEMORY = saved
    return f


def best_times(functions, calls, repeat):
    """The best time of one pass over `calls` of each function, the functions taking turns."""
    best = [float("inf")] * len(functions)
    for _ in range(repeat):
        for i, f in enumerate(functions):
            start = time.perf_counter()
            for args in calls:
                f(*args)
            best[i] = min(best[i], time.perf_counter() - start)
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=7)
    options = parser.parse_args()
    cases = [(w.name, w.fn, [args for args, _ in w.calls()]) for w in make_workloads()] + small_loops()
    print(f"{'workload':14s} {'with polls':>12s} {'without':>12s} {'cost':>8s}")
    for name, fn, calls in cases:
        polled, plain = compiled(fn, calls, True), compiled(fn, calls, False)
        for args in calls[:50]:
            want = plain(*args)
            got = polled(*args)
            assert type(got) is type(want), name
            if not isinstance(want, np.ndarray):
                assert got == want, (name, got, want)
        on, off = best_times([polled, plain], calls, options.repeat)
        print(f"{name:14s} {on * 1e3:9.2f} ms {off * 1e3:9.2f} ms {100 * (on / off - 1):+7.1f}%")


if __name__ == "__main__":
    main()
