"""Benchmark B2 (shared/BENCHMARKS.md): seed 004's `d(a, b, c)` and its three partial derivatives
over N float64 samples, as arrays in one call.

    d(a, b, c) = -a*b + (c - a/b)*(a + b)*c - (b*c - a)/(a + c) + b*b*c/a

Methods, each timed in the same process (best of --repeat), results checked first:
  - tracer `vectorize(value_and_grad(d, argnums=(0, 1, 2)))`: one native loop, value and
    gradients per sample; also into `out=` buffers (no fresh memory per call), and
    `vectorize(d)` (forward only);
  - JAX `jit(vmap(value_and_grad(d, argnums=(0, 1, 2))))` with x64 (the bar: >= 5x faster);
  - PyTorch eager: tensors with requires_grad, forward, `backward` of the sum;
  - NumPy (forward only) and numba `@vectorize` (forward only).
Peers that are not installed are skipped with a line saying so. Ratios are printed against the
tracer's value-and-grad time; a ratio > 1 means the tracer is faster.

    python examples/bench/batch_grad.py [--sizes 10000 100000 1000000] [--repeat 5]
"""
import argparse
import platform
import time

import numpy as np
import one_thread  # noqa: F401  (before NumPy: every peer on one thread)

from tracer import value_and_grad, vectorize


def d(a, b, c):
    return -a*b + (c - a/b)*(a + b)*c - (b*c - a)/(a + c) + b*b*c/a


def best_times(runners, repeat):
    """The best time of each callable over `repeat` rounds. The rounds interleave the methods
    (each runs once per round), so a slow spell of the machine hits all of them alike."""
    for run in runners:
        run()                                         # warm (compiles on first call)
    times = [[] for _ in runners]
    for _ in range(repeat):
        for run, spent in zip(runners, times):
            t0 = time.perf_counter()
            run()
            spent.append(time.perf_counter() - t0)
    return [min(spent) for spent in times]


def peers(a, b, c, reference):
    """(name, callable, does gradients) for the installed peers, each checked against reference."""
    out = []
    try:
        import jax
        jax.config.update("jax_enable_x64", True)
        f = jax.jit(jax.vmap(jax.value_and_grad(d, argnums=(0, 1, 2))))
        ja, jb, jc = (jax.numpy.asarray(x) for x in (a, b, c))

        def run_jax():
            v, g = f(ja, jb, jc)
            v.block_until_ready()
            return v, g
        v, g = run_jax()
        np.testing.assert_allclose(np.asarray(g[0]), reference[1][0], rtol=1e-9, atol=1e-9)
        out.append(("JAX jit(vmap(value_and_grad))", run_jax, True))
    except ImportError:
        print("  (JAX not installed: skipped)")
    try:
        import torch
        ta, tb, tc = (torch.from_numpy(x) for x in (a, b, c))

        def run_torch():
            xs = [t.clone().requires_grad_(True) for t in (ta, tb, tc)]
            v = d(*xs)
            v.sum().backward()
            return v, tuple(x.grad for x in xs)
        v, g = run_torch()
        np.testing.assert_allclose(g[0].numpy(), reference[1][0], rtol=1e-9, atol=1e-9)
        out.append(("PyTorch eager (forward + backward)", run_torch, True))
    except ImportError:
        print("  (PyTorch not installed: skipped)")
    out.append(("NumPy, forward only", lambda: d(a, b, c), False))
    try:
        import numba
        nd = numba.vectorize(["float64(float64, float64, float64)"])(d)
        np.testing.assert_allclose(nd(a, b, c), reference[0], rtol=1e-12, atol=1e-12)
        out.append(("numba @vectorize, forward only", lambda: nd(a, b, c), False))
    except ImportError:
        print("  (numba not installed: skipped)")
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--repeat", type=int, default=5)
    options = parser.parse_args()
    print(f"B2: d(a, b, c) and its 3 partials over N float64 samples; {platform.processor() or platform.machine()}, "
          f"Python {platform.python_version()}")
    vg = vectorize(value_and_grad(d, argnums=(0, 1, 2)))
    fwd = vectorize(d)
    rng = np.random.default_rng(0)
    for n in options.sizes:
        a, b, c = (rng.uniform(0.5, 2.0, n) for _ in range(3))
        reference = vg(a, b, c)
        np.testing.assert_allclose(reference[0], d(a, b, c), rtol=1e-12, atol=1e-12)   # fma: last bits
        out = (np.empty(n), (np.empty(n), np.empty(n), np.empty(n)))
        others = peers(a, b, c, reference)
        ours, t_out, f, *theirs = best_times([lambda: vg(a, b, c), lambda: vg(a, b, c, out=out),
                                              lambda: fwd(a, b, c)] + [run for _, run, _ in others],
                                             options.repeat)
        print(f"N = {n:,}")
        print(f"  {'tracer vectorize(value_and_grad)':38s} {ours * 1e3:9.3f} ms  "
              f"({ours / n * 1e9:.2f} ns/sample = {ours / n * 1e9:.2f} ms per 1M samples)")
        print(f"  {'tracer, into out= buffers':38s} {t_out * 1e3:9.3f} ms  ({t_out / n * 1e9:.2f} ms per 1M samples)")
        print(f"  {'tracer vectorize(d), forward only':38s} {f * 1e3:9.3f} ms")
        for (name, _, grads), t in zip(others, theirs):
            print(f"  {name:38s} {t * 1e3:9.3f} ms   tracer is {t / ours:6.2f}x faster"
                  f"{'' if grads else ' (peer does forward only)'}")


if __name__ == "__main__":
    main()
