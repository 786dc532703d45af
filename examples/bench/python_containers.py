"""Plain-Python programs built on growing lists, dicts and sets: the tracer against plain Python
(and PyPy, when a `pypy3` is on the PATH: the same programs run there in a child process).

  - `histogram(xs)`: `counts[x] = counts.get(x, 0) + 1` over 200,000 ints with --keys distinct
    values, then the most common one (a dict of run-time size);
  - `primes(count)`: the first 5,000 primes by trial division against the list as it grows;
  - `cycles(perm)`: the cycle lengths of a permutation of 20,000, with a `seen` set.

Each is checked against plain Python on its input before anything is timed. The times are the
best of --repeat calls (after one call that compiles), in this process, one thread; the table
prints the ratios python/tracer (and pypy/tracer).

    python examples/bench/python_containers.py [--repeat 5] [--keys 2000]
"""
import argparse
import json
import random
import shutil
import subprocess
import sys
import time

from tracer import trace


def histogram(xs):
    counts = {}
    for x in xs:
        counts[x] = counts.get(x, 0) + 1
    best = max(counts, key=lambda k: (counts[k], -k))
    return len(counts), best, counts[best]


def primes(count):
    found = [2]
    candidate = 3
    while len(found) < count:
        for p in found:
            if p * p > candidate:
                found.append(candidate)
                break
            if candidate % p == 0:
                break
        candidate += 2
    return found[-1], sum(found)


def cycles(perm):
    seen = set()
    lengths = []
    for start in range(len(perm)):
        if start in seen:
            continue
        k, n = start, 0
        while k not in seen:
            seen.add(k)
            k = perm[k]
            n += 1
        lengths.append(n)
    return len(lengths), max(lengths), sum(lengths)


def workloads(keys: int):
    rng = random.Random(7)
    xs = [rng.randrange(keys) for _ in range(200_000)]
    perm = list(range(20_000))
    rng.shuffle(perm)
    return [(histogram, (xs,)), (primes, (5_000,)), (cycles, (perm,))]


def best_time(fn, args, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn(*args)
        best = min(best, time.perf_counter() - t0)
    return best


PYPY_SCRIPT = """
import json, sys, time
sys.path.insert(0, {here!r})
source = open({path!r}).read().replace("from tracer import trace", "trace = None")
ns = {{}}
exec(compile(source, {path!r}, "exec"), ns)
out = {{}}
for fn, args in ns["workloads"]({keys}):
    fn(*args)
    out[fn.__name__] = ns["best_time"](fn, args, {repeat})
print(json.dumps(out))
"""


def pypy_times(keys: int, repeat: int):
    pypy = shutil.which("pypy3")
    if pypy is None:
        return None
    code = PYPY_SCRIPT.format(here=sys.path[0], path=__file__, keys=keys, repeat=repeat)
    out = subprocess.run([pypy, "-c", code], capture_output=True, text=True, timeout=600)
    return json.loads(out.stdout) if out.returncode == 0 else None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--keys", type=int, default=2000)
    options = parser.parse_args()
    pypy = pypy_times(options.keys, options.repeat)
    print(f"Python {sys.version.split()[0]}; pypy3: {'yes' if pypy else 'not found'}")
    print(f"{'program':<12} {'tracer':>10} {'compile':>9} {'python':>10} {'python/tracer':>14}"
          + (f" {'pypy/tracer':>12}" if pypy else ""))
    for fn, args in workloads(options.keys):
        compiled = trace(fullgraph=True)(fn)
        t0 = time.perf_counter()
        got = compiled(*args)
        first = time.perf_counter() - t0
        assert got == fn(*args), (fn.__name__, got, fn(*args))
        t_tracer = best_time(compiled, args, options.repeat)
        t_python = best_time(fn, args, options.repeat)
        line = (f"{fn.__name__:<12} {t_tracer * 1e3:>8.2f}ms {first:>8.2f}s {t_python * 1e3:>8.2f}ms "
                f"{t_python / t_tracer:>13.1f}x")
        if pypy:
            line += f" {pypy[fn.__name__] / t_tracer:>11.2f}x"
        print(line)


if __name__ == "__main__":
    main()
