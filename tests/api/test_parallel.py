"""`trace(parallel=True)`: maps over arrays run on the runtime's thread pool (codegen.parallel,
tracer/csrc/pool.c), cut into chunks along their first axis. The results are bit for bit those of
the same function compiled for one thread (an element's computation does not depend on the
thread), at every size, layout and pool size; failures and NumPy's warnings are the same too."""
import multiprocessing
import threading
import warnings

import numpy as np
import pytest
from oracle import array_bits

from tracer import native, trace

RNG = np.random.default_rng(7)
SIZES = [0, 1, 5, 40_000, 65_536, 300_001]


def chain(a, b):
    return np.sqrt(a * a + b * b) * 0.5 + np.tanh(a) - b / 3.0


def scaled_rows(x, s):
    return np.exp(-x) * s + x[:, :1]


def in_place(a, b):
    a *= 2.0
    a += b
    return a


def integer_mix(a, b):
    return (a * 3 + b) // 2 - (a > b)


def floor_divide(a, b):
    return a // b + 1


def logs(a):
    return np.log(a) * 2.0


def uses_the_pool(compiled) -> bool:
    return any("__tracer_parallel_for" in s.compiled.optimized_ir for s in compiled.specializations)


@pytest.mark.parametrize("n", SIZES)
def test_a_chain_gives_one_thread_s_bits(n, pool_size, python_runs):
    a, b = RNG.random(n), RNG.random(n) - 0.5
    one, every = trace(chain), trace(chain, parallel=True)
    assert array_bits(every(a, b)) == array_bits(one(a, b))
    assert np.allclose(every(a, b), chain(a, b))
    assert uses_the_pool(every) and not uses_the_pool(one)
    assert python_runs == []


@pytest.mark.parametrize("shape", [(3, 50_000), (50_000, 3), (700, 700)])
def test_two_dimensional_maps_views_and_broadcasts(shape, pool_size):
    x = RNG.random(shape)
    one, every = trace(scaled_rows), trace(scaled_rows, parallel=True)
    for view in (x, x[::2], x.T, np.broadcast_to(x[:1], x.shape)):
        assert array_bits(every(view, 1.5)) == array_bits(one(view, 1.5))
        assert np.array_equal(every(view, 1.5), scaled_rows(view, 1.5))


def test_in_place_updates_of_arguments(pool_size):
    a, b = RNG.random(200_000), RNG.random(200_000)
    expected = in_place(a.copy(), b)
    got = a.copy()
    trace(in_place, parallel=True)(got, b)
    assert array_bits(got) == array_bits(expected)


def test_integer_maps_and_their_failures(pool_size, python_runs):
    a = RNG.integers(-1000, 1000, 100_000)
    b = RNG.integers(-1000, 1000, 100_000)
    every = trace(integer_mix, parallel=True)
    assert array_bits(every(a, b)) == array_bits(integer_mix(a, b))
    assert python_runs == []


def test_a_failing_element_in_one_chunk(pool_size, python_runs):
    a = RNG.integers(-1000, 1000, 200_000)
    b = RNG.integers(1, 9, 200_000)
    every = trace(floor_divide, parallel=True)
    assert array_bits(every(a, b)) == array_bits(floor_divide(a, b)) and python_runs == []
    b[170_000] = 0                             # NumPy: 0 and its divide-by-zero warning
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = every(a, b)
    assert [str(w.message) for w in caught] == ["divide by zero encountered in floor_divide"]
    assert python_runs == ["floor_divide"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert array_bits(got) == array_bits(floor_divide(a, b))


def test_numpy_s_warnings_where_one_chunk_warns(pool_size, python_runs):
    a = RNG.random(200_000) + 0.5
    a[150_000] = 0.0                           # log(0): NumPy's divide-by-zero warning
    every = trace(logs, parallel=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = every(a)
    assert [str(w.message) for w in caught] == ["divide by zero encountered in log"]
    assert python_runs == ["logs"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert array_bits(got) == array_bits(np.log(a) * 2.0)
    python_runs.clear()
    assert array_bits(every(a + 1.0)) == array_bits(trace(logs)(a + 1.0)) and python_runs == []


def test_threads_calling_parallel_code_at_once():
    every = trace(chain, parallel=True)
    a, b = RNG.random(300_000), RNG.random(300_000)
    expected = array_bits(trace(chain)(a, b))
    every(a, b)
    results = []

    def work():
        for _ in range(20):
            results.append(array_bits(every(a, b)))
    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 80 and set(results) == {expected}


def _child(queue):
    every = trace(chain, parallel=True)
    a = np.linspace(0.0, 1.0, 300_000)
    queue.put(array_bits(every(a, a)))


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="no fork")
def test_a_forked_child_has_a_pool_of_its_own():
    every = trace(chain, parallel=True)
    a = np.linspace(0.0, 1.0, 300_000)
    expected = array_bits(every(a, a))           # the parent's pool has started
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_child, args=(queue,))
    child.start()
    got = queue.get(timeout=120)
    child.join(timeout=60)
    assert child.exitcode == 0 and got == expected


def test_pool_size_is_checked():
    with pytest.raises(ValueError, match="from 1 to"):
        native.set_num_threads(0)
    assert native.get_num_threads() >= 1


def total(a):
    return a.sum()


def mean_square(a):
    return np.mean(a * a + 1.0)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n", [7, 1000, 65_537, 1_000_003])
def test_sums_on_the_pool_are_numpy_s_pairwise_sums_bit_for_bit(n, dtype, pool_size, python_runs):
    a = RNG.random(n).astype(dtype)
    every = trace(total, parallel=True)
    assert array_bits(every(a)) == array_bits(a.sum()) and type(every(a)) is type(a.sum())
    assert array_bits(every(a[::3])) == array_bits(a[::3].sum())
    fused = trace(mean_square, parallel=True)
    assert array_bits(fused(a)) == array_bits(trace(mean_square)(a))
    assert array_bits(trace(mean_square, parallel=True, fuse_fma=False)(a)) == array_bits(mean_square(a))
    assert python_runs == []


def extremes(a):
    return a.max(), np.min(a)


def uses_reduce_pieces(compiled) -> bool:
    return any(".reduce" in s.compiled.optimized_ir for s in compiled.specializations)


@pytest.mark.parametrize("make", [
    lambda: RNG.random(1_000_003),
    lambda: RNG.random((3000, 70)),
    lambda: RNG.random((700, 900))[:, ::3],
    lambda: RNG.random(500_000).astype(np.float32),
    lambda: RNG.integers(-10**12, 10**12, 800_000),
], ids=["f64", "rows", "strided", "f32", "int64"])
def test_max_and_min_on_the_pool_are_numpy_s(make, pool_size, python_runs):
    a = make()
    every = trace(extremes, parallel=True)
    got = every(a)
    assert array_bits(got) == array_bits(extremes(a)) and type(got[0]) is type(a.max())
    assert uses_reduce_pieces(every) and not uses_reduce_pieces(trace(extremes))
    assert python_runs == []


def test_max_and_min_on_the_pool_with_nans_and_signed_zeros(pool_size):
    every, one = trace(extremes, parallel=True), trace(extremes)
    a = RNG.random(600_000)
    a[450_000] = np.nan
    assert array_bits(every(a)) == array_bits(one(a))
    assert np.isnan(every(a)[0]) and np.isnan(every(a)[1])
    zeros = np.zeros(600_000)
    zeros[::3] = -0.0
    assert array_bits(every(zeros)) == array_bits(one(zeros))
    with pytest.raises(ValueError):
        every(np.zeros(0))


def row_reductions(a):
    return (a.sum(axis=1), a.max(axis=1), np.min(a, axis=-1), a.mean(axis=1), a.prod(axis=1),
            a.sum(axis=0), a.max(axis=0), a.mean(axis=0, keepdims=True))


def kept_axes(x):
    return (x.sum(axis=(1, 2)), x.sum(axis=2, keepdims=True), x.max(axis=1), (x > 0.5).sum(axis=2),
            x.sum(axis=0), x.sum(axis=(0, 2)), np.min(x, axis=(0, 1)))


@pytest.mark.parametrize("make", [
    lambda: RNG.random((5000, 40)),
    lambda: RNG.random((40, 5000)),
    lambda: np.asfortranarray(RNG.random((3000, 50))),
    lambda: RNG.random((200, 3000)).T,
    lambda: RNG.random((6000, 30))[::2, ::3],
    lambda: np.broadcast_to(RNG.random((1, 400)), (500, 400)),
    lambda: RNG.random((3000, 40)).astype(np.float32),
    lambda: RNG.integers(-3, 4, (4000, 25)),
], ids=["rows", "wide", "fortran", "transposed", "strided", "broadcast", "f32", "int64"])
def test_reductions_that_keep_an_axis_give_one_thread_s_bits(make, pool_size, python_runs):
    a = make()
    every, one = trace(row_reductions, parallel=True), trace(row_reductions)
    assert array_bits(every(a)) == array_bits(one(a))
    for got, want in zip(every(a), row_reductions(a)):
        assert np.allclose(got, want, rtol=1e-12, atol=0.0) and got.dtype == want.dtype
    assert any("reduce_rows" in s.compiled.optimized_ir for s in every.specializations)
    x = RNG.random((300, 40, 50))
    every3, one3 = trace(kept_axes, parallel=True), trace(kept_axes)
    assert array_bits(every3(x)) == array_bits(one3(x)) == array_bits(kept_axes(x))
    assert python_runs == []


def int_row_sums(a):
    return a.sum(axis=1)


def test_an_int_row_sum_past_64_bits_wraps_as_numpy_s(python_runs):
    a = RNG.integers(0, 10, (100_000, 4))
    a[77_777, 1:3] = 2**62
    every = trace(int_row_sums, parallel=True)
    with np.errstate(over="ignore"):
        assert array_bits(every(a)) == array_bits(int_row_sums(a))
