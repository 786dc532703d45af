"""Ops that use their operand's memory (codegen.ownership), flat loops over C-contiguous arrays
(codegen.arrays.map_elements) and branch-free masks (codegen.masks): NumPy is the oracle."""
from __future__ import annotations

import numpy as np
import pytest

import tracer
from codegen.ownership import memory_reuse
from tracer import ir
from tracer.ir import F64, I64, ArrayType, ops


def emit(block, op, *args, **attrs):
    v = ir.Value(op, args, ops.OPS[op].result_type(tuple(a.type for a in args), attrs), attrs)
    block.values.append(v)
    return v


def _update_after(read_after: bool) -> tuple[ir.Function, ir.Value]:
    """y = x * 2.0; z = index_update(y, idx, 1.0); return z (+ y.sum() if read_after)."""
    x = ir.make_param(0, "x", ArrayType(F64, (None,)))
    idx = ir.make_param(1, "idx", ArrayType(I64, (None,)))
    b = ir.Block()
    y = emit(b, "mul", x, emit(b, "const", value=2.0))
    z = emit(b, "index_update", y, idx, emit(b, "const", value=1.0))
    if read_after:
        total = emit(b, "reduce", y, kind="sum", axes=(0,), keepdims=False)
        b.results = [emit(b, "tuple", z, total)]
    else:
        b.results = [z]
    return ir.verify(ir.Function("update", [x, idx], b)), z


def test_an_update_writes_into_a_dead_array_only():
    fn, z = _update_after(read_after=False)
    assert z in memory_reuse(fn)
    fn, z = _update_after(read_after=True)
    assert z not in memory_reuse(fn)


def test_a_view_read_after_keeps_the_copy():
    x = ir.make_param(0, "x", ArrayType(F64, (None,)))
    idx = ir.make_param(1, "idx", ArrayType(I64, (None,)))
    b = ir.Block()
    y = emit(b, "mul", x, emit(b, "const", value=2.0))
    view = emit(b, "transpose", y, perm=(0,))
    z = emit(b, "index_update", y, idx, emit(b, "const", value=1.0))
    b.results = [emit(b, "tuple", z, emit(b, "reduce", view, kind="sum", axes=(0,), keepdims=False))]
    fn = ir.verify(ir.Function("update", [x, idx], b))
    assert z not in memory_reuse(fn)


def one_hot(labels, n):
    out = np.zeros((len(labels), n))
    out[np.arange(len(labels)), labels] = 1.0
    return out


def twice_updated(x, idx):
    y = x * 2.0
    y[idx] = -1.0
    z = y.reshape(-1)
    return z, y.sum()


def reflect(pos, L):
    low = pos < 0.0
    high = pos > L
    pos[low] = -pos[low]
    pos[high] = 2.0 * L - pos[high]
    return pos[low | high], pos


def masked_fill(x, t):
    y = x + 1.0
    y[y > t] = 0.0
    return y


def flat_of(x):
    return x.reshape(-1) + x.reshape(-1)[::-1]


def map_2d(a, b):
    return np.maximum(a, b) * 3.0


@pytest.mark.parametrize("n", [0, 1, 7, 1000])
def test_one_hot(n):
    labels = np.random.default_rng(n).integers(0, 5, n)
    assert np.array_equal(tracer.trace(one_hot)(labels, 5), one_hot(labels, 5))


def test_an_update_whose_array_is_read_after():
    x = np.arange(12.0)
    got, want = tracer.trace(twice_updated)(x, np.array([1, 5])), twice_updated(x, np.array([1, 5]))
    assert np.array_equal(got[0], want[0]) and got[1] == want[1]


@pytest.mark.parametrize("fraction", [0.0, 0.02, 0.5, 1.0])
@pytest.mark.parametrize("layout", ["c", "transposed"])
def test_masks_dense_and_sparse(fraction, layout):
    rng = np.random.default_rng(3)
    pos = rng.uniform(0.0, 10.0, (300, 2))
    pos[rng.random((300, 2)) < fraction] *= -1.0
    if layout == "transposed":
        pos = np.ascontiguousarray(pos.T).T
    got = tracer.trace(reflect)(pos.copy(), 9.0)
    want = reflect(pos.copy(), 9.0)
    assert all(np.array_equal(g, w) for g, w in zip(got, want))
    assert np.array_equal(tracer.trace(masked_fill)(pos, 5.0), masked_fill(pos, 5.0))


@pytest.mark.parametrize("shape", [(0, 3), (5, 1), (40, 3)])
def test_reshape_views_and_flat_maps(shape):
    a = np.random.default_rng(1).standard_normal(shape)
    for x in (a, np.asfortranarray(a), a[:, ::-1] if shape[1] > 1 else a):
        assert np.array_equal(tracer.trace(flat_of)(x), flat_of(x))
        assert np.array_equal(tracer.trace(map_2d)(x, a), map_2d(x, a))
        assert np.array_equal(tracer.trace(map_2d)(x, 2.0), map_2d(x, 2.0))


def test_a_returned_reshape_of_an_argument_is_a_copy():
    def flat(x):
        return x.reshape(-1)
    x = np.arange(6.0).reshape(2, 3)
    y = tracer.trace(flat)(x)
    y[0] = 100.0
    assert x[0, 0] == 0.0 and np.array_equal(y[1:], np.arange(1.0, 6.0))


def centered(X):
    return X - X.mean(axis=-1, keepdims=True)


def scaled_rows(X):
    return X.sum(axis=1, keepdims=True) / 3.0 * 2.0


@pytest.mark.parametrize("shape", [(3, 3), (5, 1), (1, 5), (4, 2)])
def test_maps_of_kept_axes_and_their_broadcasts_are_numpys(shape):
    """A map over an (n, 1) array (a reduction's kept axis: its last stride 0) and a broadcast of
    one: one loop over all the elements only where every array really is contiguous."""
    X = np.arange(np.prod(shape), dtype=np.float64).reshape(shape) ** 1.5
    for fn in (centered, scaled_rows):
        np.testing.assert_array_equal(tracer.trace(fn, fuse_fma=False)(X), fn(X))
