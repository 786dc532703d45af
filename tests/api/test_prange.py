"""`for i in tracer.prange(n)` (codegen.prange): under `trace(parallel=True)` the loop's iterations
run in chunks on the thread pool, its `s += x` accumulators combined per chunk in a fixed order.
A numba-style corpus, each kernel against the same function run as plain Python (where prange
is range): disjoint writes give the same bits; float reductions are close to the sequential
result and the same on every run and every pool size. Loops that cannot be outlined run as
plain loops, and parallel=False compiles what it always did."""
import math

import numpy as np
import pytest
from oracle import array_bits

from codegen.entry import releases_gil
from tracer import native, prange, trace

RNG = np.random.default_rng(11)


def row_normalise(a):
    out = np.empty_like(a)
    for i in prange(a.shape[0]):
        s = 0.0
        for j in range(a.shape[1]):
            s += a[i, j]
        for j in range(a.shape[1]):
            out[i, j] = a[i, j] / s
    return out


def pairwise_distances(x):
    n = x.shape[0]
    out = np.empty((n, n))
    for i in prange(n):
        for j in range(n):
            d = 0.0
            for k in range(x.shape[1]):
                t = x[i, k] - x[j, k]
                d += t * t
            out[i, j] = math.sqrt(d)
    return out


def energy(a, b):
    """A reduction with no histogram: sums, a difference and a product, over one prange."""
    s = 0.0
    neg = 1.0
    c = 0
    scale = 1.0
    for i in prange(len(a)):
        s += a[i] * b[i]
        neg -= a[i]
        c += i % 7
        scale *= 1.0 + b[i] * 1e-6
    return s, neg, c, scale


def stencil(a):
    out = np.zeros_like(a)
    for i in prange(1, a.shape[0] - 1):
        for j in range(1, a.shape[1] - 1):
            out[i, j] = 0.25 * (a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1]) - a[i, j]
    return out


def scaled_rows(a, w):
    """A body that makes an array per iteration (a row times a number)."""
    out = np.empty_like(a)
    total = 0.0
    for i in prange(a.shape[0]):
        row = a[i] * w[i]
        out[i] = row
        total += row.sum()
    return out, total


def strided(a, start):
    out = np.zeros(len(a))
    for i in prange(start, len(a), 3):
        out[i] = a[i] * 2.0 + i
    return out


def time_steps(a, steps):
    """A prange inside a sequential loop, each step a new array."""
    for _ in range(steps):
        b = np.empty_like(a)
        for i in prange(len(a)):
            b[i] = 0.5 * (a[i] + a[(i + 1) % len(a)])
        a = b
    return a


def last_index(a):
    """The loop variable after the loop is Python's (its last value, or what it was before)."""
    i = -1
    s = 0.0
    for i in prange(len(a)):
        s += a[i]
    return i, s


def uses_prange(compiled) -> bool:
    assert compiled.specializations and all(hasattr(s, "compiled") for s in compiled.specializations)
    return any(".prange" in s.compiled.optimized_ir for s in compiled.specializations)


def test_prange_is_range_in_python():
    assert list(prange(5)) == list(range(5))
    assert list(prange(2, 11, 3)) == list(range(2, 11, 3))
    assert list(prange(5, 0, -2)) == list(range(5, 0, -2))
    with pytest.raises(ValueError):
        prange(1, 5, 0)


@pytest.mark.parametrize("kernel, args", [
    (row_normalise, lambda: (RNG.random((3000, 40)) + 0.5,)),
    (pairwise_distances, lambda: (RNG.random((300, 3)),)),
    (stencil, lambda: (RNG.random((400, 300)),)),
    (strided, lambda: (RNG.random(100_000), 2)),
    (time_steps, lambda: (RNG.random(100_000), 4)),
], ids=lambda x: getattr(x, "__name__", ""))
def test_disjoint_writes_give_python_s_bits(kernel, args, pool_size, python_runs):
    values = args()
    compiled = trace(kernel, parallel=True)
    assert array_bits(compiled(*values)) == array_bits(kernel(*values))
    assert uses_prange(compiled)
    assert python_runs == []


@pytest.mark.parametrize("n", [0, 1, 7, 5000, 300_001])
def test_reductions_are_close_to_python_and_deterministic(n, pool_size, python_runs):
    a, b = RNG.random(n), RNG.random(n) - 0.5
    compiled = trace(energy, parallel=True)
    got = compiled(a, b)
    want = energy(a, b)
    assert got[2] == want[2] and type(got[2]) is int          # ints: exact
    for g, w in zip(got[:2] + got[3:], want[:2] + want[3:]):
        assert math.isclose(g, w, rel_tol=1e-12, abs_tol=1e-9)
    for _ in range(3):
        assert compiled(a, b) == got
    assert uses_prange(compiled) and python_runs == []


@pytest.mark.parametrize("n", [0, 1, 100_000])
def test_the_loop_variable_after_the_loop(n, python_runs):
    a = RNG.random(n)
    compiled = trace(last_index, parallel=True)
    (i, s), (want_i, want_s) = compiled(a), last_index(a)
    assert i == want_i and math.isclose(s, want_s, rel_tol=1e-12)
    assert python_runs == []


def conditional(a):
    """Accumulators updated on some paths only (`continue`, an if/else), counts among them."""
    s, c, d = 0.0, 0, 0.0
    out = np.zeros(len(a))
    for i in prange(len(a)):
        if a[i] > 0.9:
            continue
        if a[i] > 0.5:
            s += a[i]
            c += 1
        else:
            d -= 0.25 * a[i]
            d += 1.0
        out[i] = 1.0
    return s, c, d, out


@pytest.mark.parametrize("n", [0, 3, 200_000])
def test_accumulators_updated_on_some_paths(n, pool_size, python_runs):
    a = RNG.random(n)
    compiled = trace(conditional, parallel=True)
    (s, c, d, out), (want_s, want_c, want_d, want_out) = compiled(a), conditional(a)
    assert c == want_c and array_bits(out) == array_bits(want_out)
    assert math.isclose(s, want_s, rel_tol=1e-12, abs_tol=1e-12) and math.isclose(d, want_d, rel_tol=1e-12, abs_tol=1e-12)
    again = compiled(a)
    assert again[:3] == (s, c, d) and array_bits(again[3]) == array_bits(out)
    assert uses_prange(compiled) and python_runs == []


def reads_the_running_sum(a):
    s, m = 0.0, 0.0
    for i in prange(len(a)):
        s += a[i]
        if s > 10.0:
            m += 1.0
    return s, m


def mixes_sum_and_product(a):
    s = 1.0
    for i in prange(len(a)):
        if a[i] > 0.5:
            s *= 1.0000001
        else:
            s += 1.0
    return s


@pytest.mark.parametrize("kernel", [reads_the_running_sum, mixes_sum_and_product], ids=lambda f: f.__name__)
def test_values_that_are_not_accumulators_keep_the_loop_plain(kernel):
    a = RNG.random(100_000)
    compiled = trace(kernel, parallel=True)
    assert compiled(a) == kernel(a)
    assert not uses_prange(compiled)


def test_results_do_not_depend_on_the_pool_size():
    a, b = RNG.random(400_000), RNG.random(400_000)
    before = native.get_num_threads()
    try:
        results = []
        for threads in (1, 2, 3, 4):
            native.set_num_threads(threads)
            results.append(trace(energy, parallel=True)(a, b))
    finally:
        native.set_num_threads(before)
    assert all(r == results[0] for r in results)


def test_a_body_that_makes_arrays(pool_size, python_runs):
    a, w = RNG.random((20_000, 16)), RNG.random(20_000)
    out, total = trace(scaled_rows, parallel=True)(a, w)
    want_out, want_total = scaled_rows(a, w)
    assert array_bits(out) == array_bits(want_out)
    assert math.isclose(total, want_total, rel_tol=1e-12)
    assert python_runs == []


def test_parallel_false_compiles_a_plain_loop():
    a = RNG.random((500, 300))
    compiled = trace(stencil)
    assert array_bits(compiled(a)) == array_bits(stencil(a))
    assert not uses_prange(compiled)


def out_of_bounds(a):
    out = np.zeros(len(a))
    for i in prange(len(a)):
        out[i] = a[i + 1]
    return out


def test_a_failing_iteration_raises_python_s_error():
    a = RNG.random(100_000)
    with pytest.raises(IndexError):
        trace(out_of_bounds, parallel=True)(a)


def overflow(n):
    p = 1
    for _ in prange(n):
        p *= 3
    return p


def test_an_int_reduction_past_64_bits_is_python_s():
    assert trace(overflow, parallel=True)(200_000 // 1000) == 3 ** 200
    assert trace(overflow, parallel=True)(30) == 3 ** 30


def running_value(a):
    out = np.zeros(len(a))
    s = 0.0
    for i in prange(len(a)):
        s += a[i]
        out[i] = s           # reads the running sum: not a reduction, a plain loop
    return out


def appends(a):
    found = []
    for i in prange(len(a)):
        if a[i] > 0.5:
            found.append(i)
    return found


def calls_python(a):
    s = 0.0
    for i in prange(len(a)):
        s += 0.5 * i
        if i == 3:
            print("iteration", i)
    return s


@pytest.mark.parametrize("kernel", [running_value, appends, calls_python], ids=lambda f: f.__name__)
def test_loops_that_cannot_be_outlined_run_as_plain_loops(kernel, capsys):
    a = RNG.random(5000)
    compiled = trace(kernel, parallel=True)
    got, want = compiled(a), kernel(a)
    assert (got == want) if isinstance(want, (list, float)) else array_bits(got) == array_bits(want)
    assert not uses_prange(compiled)
    assert capsys.readouterr().out.count("iteration 3") == (2 if kernel is calls_python else 0)


def test_prange_kernels_release_the_gil():
    a, b = RNG.random(100_000), RNG.random(100_000)
    compiled = trace(energy, parallel=True)
    compiled(a, b)
    [spec] = compiled.specializations
    assert releases_gil(spec.optimized) and uses_prange(compiled)


def triangle(n):
    t = 0
    for i in prange(2, n):
        for j in prange(i):       # an inner prange: its outer loop's total is not an accumulator
            t += j
    return t


def other_uses(n):
    return len(prange(n)), [i * 2 for i in prange(n)], sum(i for i in prange(1, n, 3))


def test_nested_pranges_and_other_uses_of_prange():
    assert trace(triangle, parallel=True)(3000) == triangle(3000)
    assert trace(other_uses, parallel=True)(40) == other_uses(40)
    with pytest.raises(TypeError, match="cannot be interpreted as an integer"):
        trace(other_uses, parallel=True)(2.5)
