"""Arrays that differ between the paths of a data-dependent branch or the iterations of a loop
(tracer.frontend.states.ArraySlot): `u = f(u)` time steps, `while` loops to a tolerance, arrays
chosen by a branch, returned from inside loops, carried in pairs and as views; compared with
NumPy bit for bit (FMA fusion off), and a loop that makes an array per iteration runs in the
memory of a few (codegen.lower._lower_body frees what each iteration made)."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from tracer import UnsupportedError, grad, trace

RNG = np.random.default_rng(3)


def jacobi(u, n):
    for _ in range(n):
        u = 0.5 * (np.roll(u, 1) + np.roll(u, -1))
    return u


def halve_until(x, tol):
    while np.abs(x).max() > tol:
        x = x * 0.5
    return x


def choose(x):
    if x.sum() > 0:
        y = x * 2
    else:
        y = x - 1
    return y


def nested(x, n, m):
    for _ in range(n):
        y = x * 0.0
        for j in range(m):
            y = y + x * j
        x = y / (m * m) + 1.0
    return x


def branch_in_loop(x, n):
    acc = np.zeros_like(x)
    for i in range(n):
        if i % 3 == 0:
            t = x * i
        else:
            t = acc - 1.0
        acc = acc + t
    return acc


def until_converged(x, tol):
    steps = 0
    while True:
        x = np.sqrt(x)
        steps += 1
        if np.abs(x - 1.0).max() < tol or steps > 100:
            break
    return x, steps


def reversed_views(x, n):
    y = x
    for _ in range(n):
        y = y[::-1] * 1.0
    return y


def swap(a, b, n):
    for _ in range(n):
        a, b = b + 1.0, a * 2.0
    return a, b


def rows(a, n):
    out = a[0]
    for i in range(n):
        out = out + a[i % a.shape[0]]
    return out


CASES = [
    (jacobi, (RNG.random(1000), 50)), (jacobi, (RNG.random(4), 0)), (halve_until, (RNG.random(5) * 100, 0.1)),
    (halve_until, (np.zeros(3), 0.1)), (choose, (RNG.random(4),)), (choose, (-RNG.random(4),)),
    (nested, (RNG.random(100), 4, 5)), (branch_in_loop, (RNG.random(50), 20)),
    (until_converged, (RNG.random(10) * 100 + 1, 1e-9)), (reversed_views, (RNG.random(7), 5)),
    (swap, (np.ones(3), np.zeros(3), 7)), (rows, (RNG.random((3, 4)), 5)),
    (choose, (RNG.random((2, 3)).astype(np.float32),)),
]


@pytest.mark.parametrize("fn, args", CASES, ids=[f"{fn.__name__}-{i}" for i, (fn, _) in enumerate(CASES)])
def test_matches_numpy(fn, args):
    expected = fn(*args)
    got = trace(fn, fullgraph=True, fuse_fma=False)(*args)
    expected, got = (expected, got) if isinstance(expected, tuple) else ((expected,), (got,))
    for g, e in zip(got, expected):
        assert type(g) is type(e) or not isinstance(e, np.ndarray)
        assert np.array_equal(np.asarray(g), np.asarray(e)) and np.asarray(g).dtype == np.asarray(e).dtype


def write_into_chosen(x, y, c):
    z = x if c > 0 else y
    z[0] = 5.0          # NumPy writes into x or y
    return z


def test_a_chosen_array_is_not_written_in_place():
    with pytest.raises(UnsupportedError, match="writing into an array that a data-dependent branch"):
        trace(write_into_chosen, fullgraph=True)(np.zeros(2), np.ones(2), 1.0)
    x, y = np.zeros(2), np.ones(2)
    assert np.array_equal(trace(write_into_chosen)(x, y, -1.0), [5.0, 1.0])    # (as Python)
    assert np.array_equal(y, [5.0, 1.0]) and np.array_equal(x, [0.0, 0.0])


def test_arrays_of_different_dtypes_do_not_merge():
    def f(x, c):
        y = x if c > 0 else x.astype(np.int64)
        return y * 2
    with pytest.raises(UnsupportedError, match="compiled code needs one dtype and shape"):
        trace(f, fullgraph=True)(np.ones(2), 1.0)


def test_an_array_whose_dtype_the_trip_count_decides_does_not_merge():
    with pytest.raises(UnsupportedError, match="compiled code needs one dtype and shape"):
        trace(jacobi, fullgraph=True)(np.arange(6), 3)       # int64 if n == 0, else float64


def test_gradient_through_a_data_dependent_loop_that_carries_an_array_is_refused():
    def loss(x, tol):
        while np.abs(x).max() > tol:
            x = np.sin(x) * 0.5
        return x.sum()
    with pytest.raises(UnsupportedError, match="cannot differentiate"):
        grad(loss)(np.array([0.3, 0.5, 1.0]), 0.2)


MEMORY = textwrap.dedent("""
    import resource
    import numpy as np
    from tracer import trace

    def jacobi(u, n):
        for _ in range(n):
            u = 0.5 * (np.roll(u, 1) + np.roll(u, -1))
        return u

    g, x = trace(jacobi), np.linspace(0.0, 1.0, 1_000_000)
    assert np.array_equal(g(x, 2), jacobi(x, 2))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    g(x, 200)                                       # 200 steps of 8 MB arrays (4 per step)
    print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024)
""")


def test_a_loop_that_carries_an_array_runs_in_the_memory_of_a_few():
    run = subprocess.run([sys.executable, "-c", MEMORY], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    growth = int(run.stdout.split()[-1])
    assert growth < 100 * 2 ** 20, f"peak resident memory grew by {growth / 2 ** 20:.1f} MB (6.4 GB without frees)"


def known_or_not(x, n):
    y = x[:1] * 2.0                # f64[1] here...
    if n > 0:
        y = x[n:] * 3.0            # ... f64[?] there
    return y


def unpacked(img, lo_pct, hi_pct):
    lo, hi = np.percentile(img, [lo_pct, hi_pct])
    return np.clip((img - lo) / (hi - lo), 0.0, 1.0)


def test_sizes_known_on_one_path_only():
    for n in (0, 1, 3):
        check_same(known_or_not, RNG.random(5), n)


def test_unpacking_a_short_array():
    check_same(unpacked, RNG.random((6, 6)), 10.0, 90.0)
    with pytest.raises(UnsupportedError, match="unpacking"):
        trace(lambda x: tuple(x), fullgraph=True)(np.ones(3))


def check_same(fn, *args):
    expected = fn(*args)
    got = trace(fn, fullgraph=True, fuse_fma=False)(*args)
    assert np.array_equal(got, expected) and got.dtype == expected.dtype


def alias_then_update(x, s):
    t1 = np.zeros_like(x)
    for _ in range(len(x)):
        t1 = x              # t1 is x itself after the loop ...
    x -= s                  # ... so NumPy's t1 sees this update
    return t1 * 1.0


def test_an_array_a_merge_may_alias_is_not_updated_in_place():
    x = np.array([1.5, 709.0])
    expected = alias_then_update(x.copy(), -1.25)
    y = x.copy()
    assert np.array_equal(trace(alias_then_update)(y, -1.25), expected)      # (as Python)
    assert np.array_equal(y, x + 1.25)
    with pytest.raises(UnsupportedError, match="writing into an array that a data-dependent branch"):
        trace(alias_then_update, fullgraph=True)(x.copy(), -1.25)
