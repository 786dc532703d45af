"""Copies between arrays (codegen.arrays.copy_elements), arrays whose writes cover them before any
read (`full` with unread=True: np.roll, np.concatenate), NumPy's sort on the rows of the result
(codegen.sorts), maps written over an operand that is dead after them and copies of such arrays
(codegen.ownership): NumPy is the oracle, and the IR shows which ops reuse memory."""
from __future__ import annotations

import numpy as np
import pytest

import tracer
from codegen.ownership import memory_reuse

RNG = np.random.default_rng(25)


def optimized(compiled):
    (spec,) = compiled.specializations
    return spec.optimized


def layouts(a):
    """a C-contiguous, Fortran-ordered, reversed along the last axis, and every other row."""
    return [a, np.asfortranarray(a), a[..., ::-1], a[::2]]


# ------------------------------------------------------------------------------- copies
def store_rows(x, y):
    out = x * 2.0
    out[1:] = y[:-1]
    return out


def store_columns(x, y):
    out = x * 1.0
    out[:, 1:] = y[:, :-1]
    return out


def store_bools(x):
    mask = x > 0.0
    out = np.zeros(x.shape, dtype=np.bool_)
    out[::2] = mask[::2]
    return out


@pytest.mark.parametrize("shape", [(0, 3), (1, 1), (7, 5), (64, 33)])
def test_stores_of_every_layout_are_numpys(shape):
    a = RNG.standard_normal(shape)
    for x in layouts(a):
        for y in layouts(a * 3.0):
            if y.shape != x.shape:
                continue
            np.testing.assert_array_equal(tracer.trace(store_rows)(x, y), store_rows(x, y))
            np.testing.assert_array_equal(tracer.trace(store_columns)(x, y), store_columns(x, y))
        got = tracer.trace(store_bools)(x)
        assert got.dtype == np.bool_ and np.array_equal(got, store_bools(x))


def shift_in_place(x):
    x[1:] = x[:-1]
    return x


def test_an_overlapping_store_is_numpys():
    a = np.arange(40.0)
    assert np.array_equal(tracer.trace(shift_in_place)(a.copy()), shift_in_place(a.copy()))


# ------------------------------------------------------------------- roll and concatenate
def rolls(x, s):
    return np.roll(x, s), np.roll(x, s, axis=0), np.roll(x, (s, -2 * s), axis=(0, 1)), np.roll(x, 0, axis=1)


def joins(x, y):
    return np.concatenate([x, y]), np.concatenate([y, x], axis=1), np.hstack([x, x[:, :1]])


@pytest.mark.parametrize("shape", [(0, 4), (1, 1), (5, 3), (40, 17)])
@pytest.mark.parametrize("shift", [0, 1, -3, 41])
def test_rolls_are_numpys(shape, shift):
    x = RNG.integers(-50, 50, shape)
    for a in layouts(x):
        for got, want in zip(tracer.trace(rolls)(a, shift), rolls(a, shift)):
            assert got.dtype == want.dtype and np.array_equal(got, want)


@pytest.mark.parametrize("shape", [(0, 4), (3, 1), (9, 6)])
def test_concatenations_are_numpys(shape):
    x = RNG.standard_normal(shape)
    for a in layouts(x):
        for got, want in zip(tracer.trace(joins)(a, a + 1.0), joins(a, a + 1.0)):
            np.testing.assert_array_equal(got, want)


def test_the_pieces_of_a_roll_cover_an_array_never_filled():
    compiled = tracer.trace(lambda x: np.roll(x, 2, axis=0))
    x = RNG.standard_normal((6, 3))
    np.testing.assert_array_equal(compiled(x), np.roll(x, 2, axis=0))
    fills = [v for v in optimized(compiled).walk() if v.op == "full"]
    assert fills and all(v.attrs.get("unread") for v in fills)


# -------------------------------------------------------------------- sorts and unique
def sorts(x):
    return np.sort(x), np.argsort(x, kind="stable"), np.sort(x, axis=0)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
@pytest.mark.parametrize("shape", [(0,), (1,), (33,), (4, 0), (5, 40), (3, 4, 17)])
def test_sorts_of_rows_in_place_are_numpys(dtype, shape):
    x = np.round(RNG.standard_normal(shape) * 5.0).astype(dtype)
    if dtype != np.int64 and x.size:
        x.flat[::7] = np.nan
    for a in layouts(x) if x.ndim > 1 else [x, x[::-1], x[::2]]:
        for got, want in zip(tracer.trace(sorts)(a), sorts(a)):
            assert got.dtype == want.dtype and np.array_equal(got, want, equal_nan=True)


def frequencies(labels):
    values, counts = np.unique(labels, return_counts=True)
    return values, counts / counts.sum()


@pytest.mark.parametrize("n", [1, 2, 1000, 100_000])
def test_unique_counts_of_many_labels_are_numpys(n):
    labels = RNG.integers(0, 8, n)
    for got, want in zip(tracer.trace(frequencies)(labels), frequencies(labels)):
        assert got.dtype == want.dtype and np.array_equal(got, want)


# --------------------------------------------------------------- maps over dead operands
def neighbours(board):
    total = np.zeros_like(board)
    for di in (-1, 0, 1):
        for dj in (-1, 0, 1):
            if di or dj:
                total += np.roll(np.roll(board, di, axis=0), dj, axis=1)
    return total


def kept_operand(x):
    y = x * 2.0
    z = y + 1.0
    return z, y.sum()


@pytest.mark.parametrize("shape", [(1, 1), (3, 4), (30, 17)])
def test_maps_over_dead_operands_are_numpys(shape):
    board = RNG.integers(0, 2, shape)
    compiled = tracer.trace(neighbours)
    for b in layouts(board):
        np.testing.assert_array_equal(compiled(b), neighbours(b))
    reused = memory_reuse(optimized(compiled))
    assert any(v.op == "map" for v in reused)
    assert any(v.op == "copy" for v in reused)          # np.roll by 0 of the roll before it


def test_an_operand_read_after_the_map_is_not_written_over():
    x = RNG.standard_normal(50)
    compiled = tracer.trace(kept_operand)
    got, want = compiled(x), kept_operand(x)
    np.testing.assert_array_equal(got[0], want[0])
    assert got[1] == want[1]
    assert not any(v.op == "map" for v in memory_reuse(optimized(compiled)))


def mean_of_numbers(x):
    nan = np.isnan(x)
    kept = np.where(nan, 0.0, x)
    count = ~nan
    return kept.sum() / count.sum()


def test_an_operand_a_later_sum_reads_is_not_written_over():
    """`kept` is summed as it goes, where its sum stands: `count`, made before that, must not be
    written over `nan`, which `kept` reads."""
    x = np.array([np.nan, 1.0, 2.0, np.nan, 4.0])
    compiled = tracer.trace(mean_of_numbers)
    assert compiled(x) == mean_of_numbers(x) == 7.0 / 3.0
    assert compiled(x[::-1]) == mean_of_numbers(x[::-1])


def overflowing(x, big):
    return np.sort(x) * 3 + big


def test_a_map_over_a_dead_operand_that_overflows_is_numpys():
    """The map writes over the sorted copy, and its overflow (FALLBACK) runs the Python function:
    NumPy's wrapped sums."""
    compiled = tracer.trace(overflowing)
    x = np.arange(-5, 5)
    for big in (7, 2 ** 63 - 10):
        np.testing.assert_array_equal(compiled(x, big), overflowing(x, big))
    assert any(v.op == "map" for v in memory_reuse(optimized(compiled)))


def rolled_sum(x):
    return np.roll(x, 1) + x


def test_a_reshape_of_an_argument_stays_a_view_where_only_new_arrays_are_written():
    compiled = tracer.trace(rolled_sum)
    x = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(compiled(x), rolled_sum(x))
    fn = optimized(compiled)
    assert any(v.op == "store" for v in fn.walk())
    assert any(v.op == "reshape" and v.args[0].op == "param" for v in memory_reuse(fn))


# -------------------------------------------------------------------------------- bincount
def counts(x, n):
    return np.bincount(x, minlength=n)


@pytest.mark.parametrize("values", [[0], [3, 1, 3, 0], list(range(20)) * 3])
def test_bincount_is_numpys(values):
    x = np.array(values)
    for n in (0, 5, 30):
        got = tracer.trace(counts)(x, n)
        assert got.dtype == np.int64 and np.array_equal(got, counts(x, n))


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int16, np.uint32, np.int64, np.bool_])
def test_bincount_of_every_int_dtype_is_numpys(dtype):
    x = RNG.integers(0, 2 if dtype == np.bool_ else 100, 500).astype(dtype)
    compiled = tracer.trace(counts, fullgraph=True)
    got = compiled(x, 256)
    assert got.dtype == np.int64 and np.array_equal(got, counts(x, 256))


def test_bincount_of_a_negative_value_is_numpys_error():
    with pytest.raises(ValueError, match="negative"):
        tracer.trace(counts)(np.array([2, -1, 0]), 0)
    np.testing.assert_array_equal(tracer.trace(counts)(np.array([], dtype=np.int64), 3), np.zeros(3, np.int64))
