"""Arrays at the kernel ABI (codegen.arrays): NumPy's layout, read through `dim` and `load`.

IR functions that read arrays are built by hand here and called through their kernel ABI with
ctypes, on NumPy arrays and views (strided, reversed, transposed, broadcast with stride 0,
unaligned): the compiled result must equal what the ops' evaluators give (`tracer.ir.ops.run`,
which indexes the NumPy array itself) and what NumPy computes.
"""
from __future__ import annotations

import ctypes

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from codegen.jit import compile_function
from tracer import ir
from tracer.errors import OpFailure, Status
from tracer.ir import BOOL, F64, I64, ArrayType, ops

CTYPES = {F64: ctypes.c_double, I64: ctypes.c_int64, BOOL: ctypes.c_bool}
DTYPES = {F64: np.float64, I64: np.int64, BOOL: np.bool_}


class ArrayKernel:
    """A compiled IR function called through its kernel ABI: ("ok", value) or ("fail", status)."""

    def __init__(self, fn: ir.Function):
        self.fn = fn
        self.compiled = compile_function(fn, None)
        argtypes = []
        for p in fn.params:
            if isinstance(p.type, ArrayType):
                argtypes += [ctypes.c_void_p] + [ctypes.c_int64] * (2 * p.type.rank)
            else:
                argtypes.append(CTYPES[p.type])
        argtypes.append(ctypes.POINTER(CTYPES[fn.result_type]))
        self.call = ctypes.CFUNCTYPE(ctypes.c_int32, *argtypes)(self.compiled.kernel_address)

    def __call__(self, *args):
        flat = []
        for p, a in zip(self.fn.params, args):
            if isinstance(p.type, ArrayType):
                assert a.dtype == DTYPES[p.type.dtype] and a.ndim == p.type.rank
                flat += [a.ctypes.data, *a.shape, *a.strides]
            else:
                flat.append(a)
        out = CTYPES[self.fn.result_type]()
        status = self.call(*flat, ctypes.byref(out))
        return ("ok", out.value) if status == Status.OK else ("fail", Status(status))


def reference(fn, args):
    try:
        return ("ok", ops.run(fn, list(args)))
    except OpFailure as exc:
        return ("fail", exc.status)


def emit(block, op, *args, **attrs):
    v = ir.Value(op, args, ops.OPS[op].result_type(tuple(a.type for a in args), attrs), attrs)
    block.values.append(v)
    return v


def loop(block, inits, build_body):
    """A loop op: `build_body(body, *params)` returns (continue, *next)."""
    body = ir.Block()
    params = [body.add_param(a.type) for a in inits]
    body.results = list(build_body(body, *params))
    v = ir.Value("loop", tuple(inits), ir.TupleType(tuple(a.type for a in inits)))
    v.regions = [body]
    block.values.append(v)
    return v


def element_sum(dtype=F64) -> ir.Function:
    """sum(x[i] for i in range(len(x))) (as f64), a native loop over a rank-1 array (len >= 1)."""
    x = ir.make_param(0, "x", ArrayType(dtype, (None,)))
    b = ir.Block()
    n, zero, one = emit(b, "dim", x, axis=0), emit(b, "const", value=0), emit(b, "const", value=1)
    def body(body, i, acc):
        e = emit(body, "load", x, i)
        e = e if dtype == F64 else emit(body, "to_f64", e)
        nxt = emit(body, "add", i, one)
        return emit(body, "lt", nxt, n), nxt, emit(body, "add", acc, e)
    total = loop(b, [zero, emit(b, "const", value=0.0)], body)
    b.results = [emit(b, "getitem", total, index=1)]
    return ir.verify(ir.Function("element_sum", [x], b))


def matrix_element() -> ir.Function:
    """a[i, j] * 2.0 + a.shape[0] * 10 + a.shape[1]: indexing a rank-2 array, negatives included."""
    a = ir.make_param(0, "a", ArrayType(F64, (None, None)))
    i, j = ir.make_param(1, "i", I64), ir.make_param(2, "j", I64)
    b = ir.Block()
    x = emit(b, "mul", emit(b, "load", a, i, j), emit(b, "const", value=2.0))
    rows = emit(b, "to_f64", emit(b, "dim", a, axis=0))
    cols = emit(b, "to_f64", emit(b, "dim", a, axis=1))
    shape = emit(b, "add", emit(b, "mul", rows, emit(b, "const", value=10.0)), cols)
    b.results = [emit(b, "add", x, shape)]
    return ir.verify(ir.Function("matrix_element", [a, i, j], b))


SUM, SUM_INT, ELEMENT = element_sum(), element_sum(I64), matrix_element()
KERNELS: dict = {}


def kernel(fn) -> ArrayKernel:
    if fn.name + str(fn.params[0].type) not in KERNELS:
        KERNELS[fn.name + str(fn.params[0].type)] = ArrayKernel(fn)
    return KERNELS[fn.name + str(fn.params[0].type)]


def test_types_print_and_verify():
    assert str(ArrayType(F64, (None, 3))) == "f64[?, 3]"
    assert "load" in str(SUM) and "f64[?]" in str(SUM)
    with pytest.raises(ir.VerificationError):
        bad = ir.Block()
        a = ir.make_param(0, "a", ArrayType(F64, (None,)))
        bad.values.append(ir.Value("load", (a,), F64))   # one index missing
        bad.results = [bad.values[0]]
        ir.verify(ir.Function("bad", [a], bad))


VIEWS = {
    "contiguous": lambda a: a,
    "strided": lambda a: a[::3],
    "reversed": lambda a: a[::-1],
    "reversed strided": lambda a: a[-2::-4],
    "broadcast (stride 0)": lambda a: np.broadcast_to(a[:1], (7,)),
    "unaligned": lambda a: np.frombuffer(b"\0" + a.tobytes(), dtype=a.dtype, offset=1, count=a.size),
}


@pytest.mark.parametrize("view", VIEWS.values(), ids=VIEWS)
def test_sum_of_a_view_matches_numpy(view):
    base = np.random.default_rng(0).standard_normal(37)
    x = view(base)
    got = kernel(SUM)(x)
    assert got == reference(SUM, [x])
    expected = 0.0
    for e in x:                     # the loop's own order: left to right
        expected += float(e)
    assert got == ("ok", expected)


def test_int64_elements():
    x = np.arange(-20, 45, dtype=np.int64)[::-2]
    assert kernel(SUM_INT)(x) == ("ok", float(x.sum())) == reference(SUM_INT, [x])


@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=2, max_dims=2, min_side=1, max_side=6),
                  elements=st.floats(allow_nan=False, width=64)),
       st.integers(-8, 8), st.integers(-8, 8), st.booleans())
@settings(max_examples=200, deadline=None)
def test_matrix_element_matches_numpy(a, i, j, transpose):
    """In bounds: NumPy's element (negative indices from the end). Out of bounds: SHAPE_MISMATCH,
    so the Python function runs and raises NumPy's IndexError itself."""
    a = a.T if transpose else a
    got = kernel(ELEMENT)(a, i, j)
    assert got == reference(ELEMENT, [a, i, j])
    rows, cols = a.shape
    if -rows <= i < rows and -cols <= j < cols:
        assert got == ("ok", float(a[i, j]) * 2.0 + (rows * 10.0 + cols))
    else:
        assert got == ("fail", Status.SHAPE_MISMATCH)
        with pytest.raises(IndexError):
            a[i, j]


def test_an_unused_out_of_bounds_read_still_fails():
    """DCE keeps a load nothing reads: `x[5]` on 3 elements raises in Python even when unused."""
    from tracer.transforms.passes import optimize
    x = ir.make_param(0, "x", ArrayType(F64, (None,)))
    b = ir.Block()
    emit(b, "load", x, emit(b, "const", value=5))
    b.results = [emit(b, "const", value=1.0)]
    fn = optimize(ir.verify(ir.Function("unused_read", [x], b)))
    assert any(v.op == "load" for v in fn.walk())
    assert ArrayKernel(fn)(np.zeros(3)) == ("fail", Status.SHAPE_MISMATCH)
    assert ArrayKernel(fn)(np.zeros(6)) == ("ok", 1.0)


def sliced_sum() -> ir.Function:
    """sum(x[start:stop:step]) with run-time bounds: the `slice` view's offset, size and stride."""
    x = ir.make_param(0, "x", ArrayType(F64, (None,)))
    start, stop = ir.make_param(1, "start", I64), ir.make_param(2, "stop", I64)
    b = ir.Block()
    view = emit(b, "slice", x, start, stop, steps=(-3,), shape=(None,))
    b.results = [emit(b, "reduce", view, kind="sum", axes=(0,), keepdims=False)]
    return ir.verify(ir.Function("sliced_sum", [x, start, stop], b))


SLICED = sliced_sum()
BOUNDS = st.one_of(st.integers(-12, 12), st.sampled_from([ir.I64_MIN, ir.I64_MAX, ir.I64_MIN + 1]))


@given(st.integers(0, 9), BOUNDS, BOUNDS)
@settings(max_examples=200, deadline=None)
def test_slice_bounds_follow_python(n, start, stop):
    """Negative bounds count from the end and bounds past either end are clamped, as in
    Python's slice.indices (here with step -3), down to the int64 extremes."""
    x = np.arange(1.0, n + 1.0)[::-1] * 1.5
    got = kernel(SLICED)(x, start, stop)
    assert got == reference(SLICED, [x, start, stop])
    expected = 0.0
    for e in x[start:stop:-3]:
        expected += float(e)
    assert got == ("ok", expected)
