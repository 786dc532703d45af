"""Loop fusion (tracer.transforms.passes.fuse): chains of elementwise array ops become one `map`.

The oracle is NumPy (bit for bit with FMA fusion off: a map computes each element with the same
scalar ops, in the same order) and the IR interpreter running the fused IR.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from ir_builder import Builder

from tracer import ir, trace
from tracer.dump import dump_function
from tracer.ir.ops import run
from tracer.transforms.passes import count_maps, fuse_elementwise


def maps(compiled):
    return count_maps(compiled.specializations[-1].optimized)


def layer(x, w, b, m):
    return np.tanh(np.exp(x - m) * w + b) / 2.0


def test_a_chain_is_one_loop_with_numpy_bits():
    """(np.tanh is a kernel of its own, within 2 ulps of math.tanh as NumPy's is within 3: the rest
    of the chain is NumPy's bits, so the chain's result is within a few ulps of NumPy's.)"""
    x, w, b = np.linspace(-1, 1, 7), np.linspace(0, 2, 7), 0.25
    f = trace(layer, fuse_fma=False)
    np.testing.assert_allclose(f(x, w, b, 0.5), layer(x, w, b, 0.5), rtol=4e-16, atol=0)
    np.testing.assert_array_equal(f(x, w, b, 0.5), run(f.specializations[0].optimized, (x, w, b, 0.5)))
    assert maps(f) == 1
    fn = f.specializations[0].optimized
    (m,) = [v for v in fn.body.values if v.op == "map"]
    assert [a.name for a in m.args] == ["x", "w"]             # each array read once, no temporaries
    assert [v.op for v in m.regions[0].values] == ["sub", "np_exp", "mul", "add", "np_tanh", "div"]


def test_a_value_used_twice_is_computed_once():
    def f(x):
        t = np.exp(x)
        return t * t + t.sum()

    g = trace(f, fuse_fma=False)
    x = np.linspace(0, 1, 5)
    np.testing.assert_array_equal(g(x), f(x))
    fn = g.specializations[0].optimized
    assert sum(1 for v in fn.walk() if v.op == "np_exp") == 1       # t is its own map, read by two users


def test_fusion_does_not_move_a_read_past_a_write():
    def f(x):
        y = x + 0.0                  # a copy of x...
        t = y * 2.0                  # ...read before the write below
        y[0] = 100.0
        return t + 1.0

    x = np.arange(4.0)
    np.testing.assert_array_equal(trace(f)(x), f(x))


def test_shapes_known_only_at_run_time_are_checked():
    def f(x, y):
        return np.sin(x) + np.cos(y)

    g = trace(f)
    np.testing.assert_array_equal(g(np.ones(3), np.ones(3)), f(np.ones(3), np.ones(3)))
    with pytest.raises(ValueError, match="could not be broadcast"):
        g(np.ones(3), np.ones(4))


@settings(max_examples=30, deadline=None)
@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4),
                  elements=st.floats(-3, 3, width=64)), st.floats(-2, 2))
def test_fused_ir_runs_like_the_compiled_code(x, m):
    f = trace(layer)
    got = f(x, x[::-1] if x.ndim else x, 0.5, m)
    fn = f.specializations[-1].optimized
    np.testing.assert_array_equal(run(fn, [x, x[::-1], 0.5, m]), got)


def test_the_pass_on_hand_built_ir():
    b = Builder(ir.ArrayType(ir.F64, (None,)), ir.F64)
    x, s = b.params
    fn = b.function(b.op("add", b.op("exp", b.op("mul", x, s)), x))
    fused = ir.verify(fuse_elementwise(fn))
    assert count_maps(fused) == 1 and len(fused.body.values) == 1
    values = np.array([0.0, 1.0, -2.0])
    np.testing.assert_array_equal(run(fused, [values, 3.0]), np.exp(values * 3.0) + values)
    assert "element(%" in str(fused) and " of p0" in str(fused)


def test_the_verifier_checks_maps():
    b = Builder(ir.ArrayType(ir.F64, (None,)))
    fn = b.function(b.op("neg", b.params[0]))
    fused = fuse_elementwise(fn)
    (m,) = fused.body.values
    m.type = ir.ArrayType(ir.I64, (None,))
    with pytest.raises(ir.VerificationError, match="is not the array.s. of what its region yields"):
        ir.verify(fused)


def test_dump_shows_the_fused_loop():
    out = dump_function(layer, (np.ones(3), np.ones(3), 0.5, 0.1), stage="opt")
    assert "  map " in out and "element(" in out and "fused loops (map): 1" in out


def test_an_outer_product_fuses_into_the_update_with_matmuls_bits():
    """x.T @ d with one row each is a broadcast product: it fuses into `W -= lr * ...`, with the
    bits of the matmul kernel and NumPy's outer product (signed zeros included)."""
    def update(W, x, d, lr):
        W -= lr * (x.T @ d)

    def outer(x, d):
        return x.T @ d
    rng = np.random.default_rng(0)
    x = rng.normal(size=(1, 7))
    x[0, 2] = -0.0
    d = rng.normal(size=(1, 5))
    d[0, 1] = 0.0
    compiled = trace(outer)
    assert np.array_equal(compiled(x, d), np.outer(x, d))
    assert np.array_equal(np.signbit(compiled(x, d)), np.signbit(np.outer(x[0], d[0])))
    W = rng.normal(size=(7, 5))
    expected = W - 0.1 * np.outer(x, d)
    step = trace(update, fuse_fma=False)
    step(W, x, d, 0.1)
    assert np.array_equal(W, expected)
    fn = step.specializations[0].optimized
    assert not any(v.op == "matmul" for v in fn.walk())
    assert count_maps(fn) == 1
