"""Loops whose trip counts depend on the data: the tracer against numba `@njit` and plain Python.

Three plain-Python scalar workloads, each called from Python one call at a time:

  - `newton_sqrt(x)`: Newton's iteration for sqrt(x), `while abs(y*y - x) > 1e-12 * x` (a float
    condition: the trip count depends on x), over 2,000 x spread log-uniformly in [1e-3, 1e6];
  - `integrate(x0, v0, dt, n)`: a damped pendulum, x'' = -sin(x) - 0.05 x', integrated by
    semi-implicit Euler for `n = 10_000` steps (`for i in range(n)`, n an int argument), returning
    the final energy; 8 starting points per loop;
  - `collatz_steps(n)`: the Collatz trip count of an int, a `while` with an if/else on `n % 2`,
    over 2,000 n in [1, 10**6).

For each: the time per call of the tracer's `trace(fn)`, of numba's `njit(fn)` and of the plain
function, all in this run, with the ratios tracer/numba and python/tracer; and the first call
(compile + run) of a fresh function object under each compiler (the best of 3, timed with
time.perf_counter in this process after each compiler's one-time start-up, which is printed
separately: numba's first compile in a process costs ~0.6 s more). The bars: tracer within 1.5x of
numba per call, and its first call within 1.5x of numba's.

All methods are checked on every input before anything is timed: ints exactly, floats to a
relative 1e-12 (the tracer fuses multiply-adds by default, so its last bits may differ). Timings
are the best of --repeat samples, each sample at least --min-sample seconds of whole loops, the
methods taking turns so that a slow spell on the machine hits them alike. numba is optional (a
line says it was skipped). The tracer is not: where it cannot compile a workload (or compiles it
only by specializing on the loop bound's value, i.e. unrolling), its line says FAILED, the others
are still timed, and the script ends by raising that error (exit status 1).

    python examples/bench/loops.py [--repeat 5] [--min-sample 0.1]

(To compare against numba, run it with an interpreter whose environment has numba installed;
the tracer's C extension must be built for that interpreter.)
"""
import argparse
import math
import os
import platform
import random
import sys
import time
import types

import one_thread  # noqa: F401  (the compile cache off: first calls compile)

REPEAT = 5
MIN_SAMPLE = 0.1        # seconds: each timed sample runs whole loops for at least this long
COMPILE_REPEAT = 3      # fresh function objects compiled per compiler; the fastest first call is kept
REL = 1e-12
BAR = 1.5               # tracer / numba, per call and first call

N_STEPS = 10_000
DT = 0.005


# ---------------------------------------------------------------- the workloads
def newton_sqrt(x):
    y = 0.5 * (x + 1.0)             # >= sqrt(x): the iteration decreases monotonically
    while abs(y * y - x) > 1e-12 * x:
        y = 0.5 * (y + x / y)
    return y


def integrate(x0, v0, dt, n):
    x = x0
    v = v0
    for _ in range(n):
        v += dt * (-math.sin(x) - 0.05 * v)
        x += dt * v
    return 0.5 * v * v + (1.0 - math.cos(x))


def collatz_steps(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


def newton_iterations(x):
    """The trip count of newton_sqrt's loop (for the description line only)."""
    y, k = 0.5 * (x + 1.0), 0
    while abs(y * y - x) > 1e-12 * x:
        y, k = 0.5 * (y + x / y), k + 1
    return k


# One loop per workload: the whole input list, one call per element (the loops differ only in how
# the arguments are spelled, so that no peer pays for `f(*args)`).
def loop_newton(f, xs):
    for x in xs:
        f(x)


def loop_integrate(f, starts):
    for x0, v0 in starts:
        f(x0, v0, DT, N_STEPS)


def loop_collatz(f, ns):
    for n in ns:
        f(n)


class Workload:
    def __init__(self, fn, loop, inputs, probes, describe):
        self.fn = fn                # the plain Python function
        self.loop = loop            # loop(f, inputs) calls f once per input
        self.inputs = inputs
        self.probes = probes        # two small argument tuples that must share one specialization
        self.describe = describe    # inputs -> a line saying what one call does

    @property
    def name(self):
        return self.fn.__name__

    def calls(self):
        """[(args, plain Python's result)] for every call of one loop."""
        if self.fn is integrate:
            args = [(x0, v0, DT, N_STEPS) for x0, v0 in self.inputs]
        else:
            args = [(a,) for a in self.inputs]
        return [(a, self.fn(*a)) for a in args]


def make_workloads(seed: int = 7) -> list:
    rng = random.Random(seed)
    xs = [10.0 ** rng.uniform(-3.0, 6.0) for _ in range(2_000)]
    starts = [(rng.uniform(0.5, 2.5), rng.uniform(-1.0, 1.0)) for _ in range(8)]
    ns = [rng.randrange(1, 10 ** 6) for _ in range(2_000)]

    def newton_line(xs):
        its = [newton_iterations(x) for x in xs]
        return (f"{len(xs):,} x log-uniform in [1e-3, 1e6]; {min(its)}-{max(its)} iterations per call "
                f"(mean {sum(its) / len(its):.1f})")

    def integrate_line(starts):
        return (f"{len(starts)} starts (x0 in [0.5, 2.5], v0 in [-1, 1]), n = {N_STEPS:,} steps of "
                f"dt = {DT} per call")

    def collatz_line(ns):
        steps = [collatz_steps(n) for n in ns]
        return (f"{len(ns):,} n in [1, 10**6); {min(steps)}-{max(steps)} iterations per call "
                f"(mean {sum(steps) / len(steps):.1f})")

    return [
        Workload(newton_sqrt, loop_newton, xs, [(2.0,), (3.0e5,)], newton_line),
        Workload(integrate, loop_integrate, starts, [(1.0, 0.0, DT, 3), (1.0, 0.0, DT, 5)], integrate_line),
        Workload(collatz_steps, loop_collatz, ns, [(27,), (97,)], collatz_line),
    ]


def fresh(fn):
    """A new function object over the same code, so no compiler can reuse an earlier compile."""
    return types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)


# ---------------------------------------------------------------- checking
class TracerFailure(Exception):
    """The tracer did not compile a workload the way this benchmark needs."""


def agree(got, want) -> bool:
    if type(want) is int:
        return type(got) is int and got == want
    return type(got) is float and math.isclose(got, want, rel_tol=REL, abs_tol=0.0)


def check(name: str, f, calls) -> None:
    for args, want in calls:
        got = f(*args)
        if not agree(got, want):
            raise AssertionError(f"{name}: {got!r} for {args!r}, plain Python gives {want!r}")


def tracer_for(w: Workload, calls):
    """trace(w.fn), compiled and checked against plain Python on every input; or raises.

    Two small probes come first: if they need two specializations, the tracer has specialized on
    the value of an int that bounds the loop (unrolling it), which would not finish for
    n = 10,000 and is not what this benchmark measures."""
    from tracer import trace
    traced = trace(fresh(w.fn))
    for args in w.probes:
        traced(*args)
    if len(traced.specializations) != 1:
        raise TracerFailure(
            f"{w.name}: the probes {w.probes} compiled {len(traced.specializations)} specializations: the "
            f"tracer specialized on the values of the ints that drive the loop (one compile per value, "
            f"the loop unrolled) instead of compiling a loop over traced values")
    check(f"tracer {w.name}", traced, calls)
    if len(traced.specializations) != 1:
        raise TracerFailure(f"{w.name}: {len(traced.specializations)} specializations for one argument type "
                            f"signature: the tracer specialized on values")
    return traced


# ---------------------------------------------------------------- timing
def first_call_ms(compile_, fn, args) -> float:
    """The fastest first call (compile + run) of COMPILE_REPEAT fresh function objects."""
    best = math.inf
    for _ in range(COMPILE_REPEAT):
        f = compile_(fresh(fn))
        t = time.perf_counter()
        f(*args)
        best = min(best, time.perf_counter() - t)
    return best * 1e3


def best_us_per_call(peers, w: Workload, repeat: int, min_sample: float) -> dict:
    """{name: µs per call}: the best of `repeat` samples, each `number` whole loops lasting at
    least `min_sample` seconds (timeit's way); the peers take turns sample by sample."""
    numbers = {}
    for name, f in peers:
        t = time.perf_counter()
        w.loop(f, w.inputs)
        once = time.perf_counter() - t
        numbers[name] = max(1, math.ceil(min_sample / max(once, 1e-9)))
    best = {name: math.inf for name, _ in peers}
    for _ in range(repeat):
        for name, f in peers:
            number = numbers[name]
            t = time.perf_counter()
            for _ in range(number):
                w.loop(f, w.inputs)
            best[name] = min(best[name], (time.perf_counter() - t) / number)
    return {name: t / len(w.inputs) * 1e6 for name, t in best.items()}


def bar(ratio: float) -> str:
    return f"bar <= {BAR}x: {'met' if ratio <= BAR else 'NOT met'}"


def startup_ms(compile_) -> float:
    """The first compile in this process of a trivial function (the compiler's one-time start-up)."""
    def fma(x, y, z):
        return x * y + z
    f = compile_(fma)
    t = time.perf_counter()
    f(3.0, -1.0, 2.0)
    return (time.perf_counter() - t) * 1e3


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=REPEAT, help=f"timed samples per method, best kept (default {REPEAT})")
    parser.add_argument("--min-sample", type=float, default=MIN_SAMPLE,
                        help=f"seconds each sample runs at least (default {MIN_SAMPLE})")
    args = parser.parse_args()

    import llvmlite

    from tracer import trace
    versions = [f"llvmlite {llvmlite.__version__}"]
    startup = {"tracer": startup_ms(trace)}
    try:
        import numba
        njit = numba.njit
        versions.append(f"numba {numba.__version__}")
        startup["numba"] = startup_ms(njit)
    except ImportError:
        njit = None

    print(f"Data-dependent loops, one call at a time from Python: best of {args.repeat} samples of "
          f">= {args.min_sample:g} s; Python {sys.version.split()[0]} on {platform.machine()} "
          f"({os.cpu_count()} CPUs), {', '.join(versions)}")
    if njit is None:
        print("numba: not installed, skipped (the bars, which compare with numba, are not evaluated)")
    print("  one-time start-up (first compile in this process, a trivial function; not counted below): "
          + ", ".join(f"{k} {v:.0f} ms" for k, v in startup.items()))

    failures = []
    met = {"per call": [], "first call": []}
    for w in make_workloads():
        calls = w.calls()
        print(f"\n{w.name}: {w.describe(w.inputs)}")
        peers = []
        try:
            traced = tracer_for(w, calls)
        except Exception as e:      # recorded and raised at the end, after the peers are timed
            failures.append(e)
            first = str(e).strip().splitlines()[0] if str(e).strip() else ""
            print(f"  tracer @trace: FAILED: {type(e).__name__}: {first}")
            traced = None
        else:
            spec = traced.specializations
            path = "native entry" if all(s.fast for s in spec) else "NOT the native entry"
            peers.append(("tracer @trace", traced))
        if njit is not None:
            nb = njit(fresh(w.fn))
            check(f"numba {w.name}", nb, calls)
            peers.append(("numba @njit", nb))
        peers.append(("plain Python", w.fn))
        compiled = [name for name, _ in peers[:-1]]
        checked = " and ".join(compiled) + (" agree" if len(compiled) > 1 else " agrees") if compiled else "nothing compiled"
        print(f"  ({checked} with plain Python on all {len(calls):,} calls: ints exactly, floats to "
              f"rel {REL:g}" + (f"; tracer: {len(spec)} specialization, {path})" if traced else ")"))

        times = best_us_per_call(peers, w, args.repeat, args.min_sample)
        python_us = times["plain Python"]
        for name, us in times.items():
            rel = "" if name == "plain Python" else f"   {python_us / us:7.2f}x faster than plain Python"
            print(f"  {name:<16} {us:11.3f} µs/call{rel}")
        if traced is not None:
            t_us = times["tracer @trace"]
            line = f"  python/tracer per call: {python_us / t_us:.2f}x"
            if njit is not None:
                ratio = t_us / times["numba @njit"]
                met["per call"].append(ratio <= BAR)
                line += f"; tracer/numba per call: {ratio:.2f}x ({bar(ratio)})"
            print(line)

        args0 = calls[0][0]
        firsts = {}
        if traced is not None:
            firsts["tracer"] = first_call_ms(trace, w.fn, args0)
        if njit is not None:
            firsts["numba"] = first_call_ms(njit, w.fn, args0)
        line = ", ".join(f"{k} {v:.1f} ms" for k, v in firsts.items())
        print(f"  first call (compile + run) of a fresh function, best of {COMPILE_REPEAT}: {line}")
        if len(firsts) == 2:
            ratio = firsts["tracer"] / firsts["numba"]
            met["first call"].append(ratio <= BAR)
            print(f"  tracer/numba first call: {ratio:.2f}x ({bar(ratio)})")

    if met["per call"] or met["first call"]:
        print(f"\nbars (tracer within {BAR}x of numba): " + "; ".join(
            f"{what} met on {sum(m)} of {len(m)} workload(s) measured" for what, m in met.items()))
    if failures:
        print(f"\nFAILED: the tracer could not compile {len(failures)} of 3 workloads; the first error "
              f"follows", file=sys.stderr)
        raise failures[0]


if __name__ == "__main__":
    main()
