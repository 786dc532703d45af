"""Start-up: how long a new process takes to get its first result, with an empty compile cache
(cold) and with the cache a previous process filled (warm), for the tracer, numba (`cache=True`)
and JAX (its persistent compilation cache), each in fresh processes of its own.

Workloads: `fma` (three floats), a Collatz loop (ints), the 784-50-10 MLP train step of B3 (NumPy,
`grad` of the loss traced through, SGD in place; JAX: `jit` of the same step with `jax.grad`), and
the list-MLP step of examples/train_lists.py (weights in lists of lists). Times are measured inside
each child process: `import` (the library), `first call` (decorating and the first call, which
compiles or loads); the process's whole wall time is shown too. Every library imports from its
`.pyc` files, as an installed package does (an untimed run first writes them). numba has no
gradients and JAX no Python-list loops: those cells say n/a. Peers that are not installed are
skipped.

    python examples/bench/startup.py [--rounds 3]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

FMA = '''
def fma(x, y, z):
    return x * y + z
'''

LOOP = '''
def collatz(n):
    total = 0
    for i in range(1, n):
        k = i
        while k != 1:
            if k % 2 == 0:
                k = k // 2
            else:
                k = 3 * k + 1
            total += 1
    return total
'''

TRAIN_NUMPY = '''
import numpy as np

def loss(W1, b1, W2, b2, X, T):
    H = np.maximum(X @ W1 + b1, 0.0)
    O = H @ W2 + b2
    M = O.max(axis=1, keepdims=True)
    lse = M[:, 0] + np.log(np.sum(np.exp(O - M), axis=1))
    return np.mean(lse - np.sum(O * T, axis=1))
'''

TRAIN_TRACER = TRAIN_NUMPY + '''
def step(W1, b1, W2, b2, X, T, lr):
    gW1, gb1, gW2, gb2 = grad(loss, argnums=(0, 1, 2, 3))(W1, b1, W2, b2, X, T)
    W1 -= lr * gW1
    b1 -= lr * gb1
    W2 -= lr * gW2
    b2 -= lr * gb2
'''

TRAIN_JAX = TRAIN_NUMPY.replace("import numpy as np", "import jax.numpy as np") + '''
def step(W1, b1, W2, b2, X, T, lr):
    gW1, gb1, gW2, gb2 = jax.grad(loss, argnums=(0, 1, 2, 3))(W1, b1, W2, b2, X, T)
    return W1 - lr * gW1, b1 - lr * gb1, W2 - lr * gW2, b2 - lr * gb2
'''

TRAIN_ARGS = '''
import numpy
rng = numpy.random.default_rng(0)
args = (rng.normal(0, 0.05, (784, 50)), numpy.zeros(50), rng.normal(0, 0.05, (50, 10)), numpy.zeros(10),
        rng.random((1, 784)), numpy.eye(10)[[3]], 0.01)
'''

# the child: `import` (the library) is timed first, then the definitions and the first call; the
# arguments are made in between (NumPy's import and the arrays are not the library's start-up)
CHILD = {
    ("tracer", "fma"): ("from tracer import trace", FMA + "fn = trace(fma)", "fn(3.0, -1.0, 2.0)"),
    ("tracer", "loop"): ("from tracer import trace", LOOP + "fn = trace(collatz)", "fn(3000)"),
    ("tracer", "train step"): ("from tracer import grad, trace", TRAIN_TRACER + "fn = trace(step)", "fn(*args)"),
    ("tracer", "list-MLP step"): ("from tracer import grad, trace", "import train_lists as m\nimport random\n"
                                  "rng = random.Random(0)\nparams = m.init([2, 16, 16, 1], rng)\nfn = m.step",
                                  "fn(*params, [0.5, -0.25], 1.0, 0.05)"),
    ("numba", "fma"): ("import numba", FMA + "fn = numba.njit(cache=True)(fma)", "fn(3.0, -1.0, 2.0)"),
    ("numba", "loop"): ("import numba", LOOP + "fn = numba.njit(cache=True)(collatz)", "fn(3000)"),
    ("jax", "fma"): ("import jax", FMA + "fn = jax.jit(fma)", "fn(3.0, -1.0, 2.0).block_until_ready()"),
    ("jax", "train step"): ("import jax", TRAIN_JAX + "fn = jax.jit(step)", "jax.block_until_ready(fn(*args))"),
}

PEERS = ("tracer", "numba", "jax")
WORKLOADS = ("fma", "loop", "train step", "list-MLP step")


def child_source(peer: str, workload: str, cache: str) -> str:
    imports, definitions, call = CHILD[(peer, workload)]
    setup = ""
    if peer == "jax":
        setup = (f"jax.config.update('jax_compilation_cache_dir', {cache!r})\n"
                 "jax.config.update('jax_persistent_cache_min_compile_time_secs', 0)\n"
                 "jax.config.update('jax_persistent_cache_min_entry_size_bytes', -1)\n"
                 "jax.config.update('jax_enable_x64', True)\n")
    # numba's cache is kept beside the source file: the child's file lives in the cache folder
    arguments = TRAIN_ARGS if workload == "train step" else ""
    return (f"import time, json, sys\nsys.path.insert(0, {os.path.join(ROOT, 'examples')!r})\n"
            f"t0 = time.perf_counter()\n{imports}\nt_import = time.perf_counter() - t0\n{setup}{arguments}"
            f"t1 = time.perf_counter()\n{definitions}\nresult = {call}\nt2 = time.perf_counter()\n"
            f"print(json.dumps({{'import': t_import, 'first': t2 - t1}}))\n")


def run_child(peer: str, workload: str, folder: str) -> dict:
    path = os.path.join(folder, f"child_{peer}_{workload.replace(' ', '_').replace('-', '_')}.py")
    with open(path, "w") as f:
        f.write(child_source(peer, workload, os.path.join(folder, "jax-cache")))
    env = {**os.environ, "TRACER_CACHE_DIR": os.path.join(folder, "tracer-cache"), "TRACER_CACHE": "1",
           "NUMBA_CACHE_DIR": os.path.join(folder, "numba-cache"), "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
           "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)     # every library imports from its .pyc files, as installed
    start = time.perf_counter()
    done = subprocess.run([sys.executable, path], env=env, capture_output=True, text=True, timeout=600)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{peer} {workload}: {done.stderr.strip().splitlines()[-1:]}")
    times = json.loads(done.stdout.strip().splitlines()[-1])
    return {**times, "process": wall}


def installed(peer: str) -> bool:
    import importlib.util
    return importlib.util.find_spec(peer) is not None


def measure(rounds: int) -> dict:
    """{(peer, workload): {"cold": [...], "warm": [...]}}: each round a new cache folder."""
    found = {}
    for peer in PEERS:
        if not installed(peer):
            print(f"({peer} is not installed: skipped)")
            continue
        for workload in WORKLOADS:
            if (peer, workload) not in CHILD:
                continue
            with tempfile.TemporaryDirectory() as folder:       # (writes the .pyc files of an editable install)
                run_child(peer, workload, folder)
            runs = {"cold": [], "warm": []}
            for _ in range(rounds):
                with tempfile.TemporaryDirectory() as folder:
                    runs["cold"].append(run_child(peer, workload, folder))
                    runs["warm"].append(run_child(peer, workload, folder))
            found[(peer, workload)] = runs
    return found


def cell(runs: list, key: str) -> str:
    return f"{statistics.median(r[key] for r in runs) * 1e3:8.1f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    found = measure(options.rounds)
    print(f"\nmedians of {options.rounds} rounds, ms (import | first call | whole process), Python "
          f"{sys.version.split()[0]}")
    print(f"{'workload':15} {'peer':7} {'cold import':>11} {'first':>8} {'process':>8}   {'warm import':>11} "
          f"{'first':>8} {'process':>8}")
    for workload in WORKLOADS:
        for peer in PEERS:
            runs = found.get((peer, workload))
            if runs is None:
                if installed(peer):
                    print(f"{workload:15} {peer:7} {'n/a':>11}")
                continue
            cold, warm = runs["cold"], runs["warm"]
            print(f"{workload:15} {peer:7} {cell(cold, 'import'):>11} {cell(cold, 'first')} {cell(cold, 'process')}   "
                  f"{cell(warm, 'import'):>11} {cell(warm, 'first')} {cell(warm, 'process')}")


if __name__ == "__main__":
    main()
