"""A loop that prints its progress: compiled code calling CPython for one statement.

    def relax(n, x):                      # a damped fixed-point iteration
        for i in range(n):
            x = x - 0.25 * (x * x * x - 2.0 * x - 5.0) / (3.0 * x * x - 2.0)
            if i % every == 0:
                print(f"step {i}: x = {x:.12f}")
        return x

The tracer compiles the loop and calls CPython only for the `print` (boxing `i` and `x`); the
rest runs natively. Compared in the same run with plain CPython and, where installed, numba
(whose nopython mode compiles `print` of numbers, not f-strings: its version prints
`print("step", i, x)` instead). Output goes to a StringIO (redirect_stdout) for every method, and
each method's output is checked against CPython's before anything is timed. The bar
(issue 20): at least 5x CPython with a print every 1000 iterations.

    python examples/bench/print_in_loop.py [--n 2000000] [--every 1000] [--repeat 5]
"""
import argparse
import contextlib
import io
import platform
import time

import one_thread  # noqa: F401  (before NumPy: every peer on one thread)

from tracer import explain, trace


def make(every: int):
    def relax(n, x):
        for i in range(n):
            x = x - 0.25 * (x * x * x - 2.0 * x - 5.0) / (3.0 * x * x - 2.0)
            if i % every == 0:
                print(f"step {i}: x = {x:.12f}")
        return x
    return relax


def make_plain_print(every: int):
    def relax(n, x):
        for i in range(n):
            x = x - 0.25 * (x * x * x - 2.0 * x - 5.0) / (3.0 * x * x - 2.0)
            if i % every == 0:
                print("step", i, x)
        return x
    return relax


def timed(fn, n, x, repeat):
    """(best seconds, result, printed text) of fn(n, x), stdout captured."""
    best, result, text = float("inf"), None, ""
    for _ in range(repeat):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            t0 = time.perf_counter()
            result = fn(n, x)
            best = min(best, time.perf_counter() - t0)
        text = out.getvalue()
    return best, result, text


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2_000_000)
    parser.add_argument("--every", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    options = parser.parse_args()
    n, x0 = options.n, 2.5
    plain = make(options.every)
    compiled = trace(make(options.every), fuse_fma=False)
    print(f"# {platform.python_implementation()} {platform.python_version()}, {platform.machine()}; "
          f"n = {n:,}, a print every {options.every} iterations ({n // options.every:,} lines)")
    timed(compiled, 10, x0, 1)                                       # compile
    print("# " + str(explain(compiled, n, x0)).replace("\n", "\n# "))
    t_py, r_py, out_py = timed(plain, n, x0, options.repeat)
    t_tr, r_tr, out_tr = timed(compiled, n, x0, options.repeat)
    assert r_tr == r_py and out_tr == out_py, "the tracer's result or output differs from CPython's"
    print(f"{'CPython':<28} {t_py * 1e3:9.2f} ms")
    print(f"{'tracer (print in CPython)':<28} {t_tr * 1e3:9.2f} ms   {t_py / t_tr:6.1f}x CPython")
    try:
        import numba
    except ImportError:
        print("numba: not installed, skipped")
        return
    plain2 = make_plain_print(options.every)
    jitted = numba.njit(plain2)
    timed(jitted, 10, x0, 1)
    t_p2, r_p2, out_p2 = timed(plain2, n, x0, options.repeat)
    t_nb, r_nb, out_nb = timed(jitted, n, x0, options.repeat)
    same = "same output" if out_nb == out_p2 else "output differs from CPython's (numba formats floats its own way)"
    print(f"{'numba njit (print(i, x))':<28} {t_nb * 1e3:9.2f} ms   {t_p2 / t_nb:6.1f}x CPython ({same})")


if __name__ == "__main__":
    main()
