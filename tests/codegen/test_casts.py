"""The lowering of `cast` (codegen.casts) against its evaluator (tracer.ir.cast_ops), and the
evaluator against NumPy's own `astype`: every pair of dtypes, checked and not, on edge values.

A kernel takes a float64, int64 or bool, casts it to the source dtype (so every value of the
source type can be reached), then to the target dtype, then back to a wide type to return it.
"""
from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
from ir_builder import Builder
from kernel_calls import Kernel, reference, same

from tracer import ir
from tracer.errors import Status

DTYPES = (ir.BOOL, *ir.INTEGERS, *ir.FLOATS)
FLOAT_VALUES = [0.0, -0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 255.0, 256.0, 300.7, -1.5, -129.0, 65504.0, 65519.9,
                65520.0, -65520.0, 1e-8, 6e-8, 3e-8, 5.960464477539063e-08, 2.0 ** -25, 2049.0000001,
                2051.0, 0.1, 1e10, 5e9 + 1, 3e9, -3e9, 2.0 ** 31, -2.0 ** 31, 2.0 ** 63, 1e19, -1e19,
                1.8e19, 3.4e38, 3.5e38, 1e300, math.inf, -math.inf, math.nan, -math.nan, 5e-324]
INT_VALUES = [0, 1, -1, 127, 128, -128, -129, 255, 256, 300, 32767, 32768, -32769, 65535, 65536, 65504,
              65520, 2 ** 31, -2 ** 31 - 1, 2 ** 32 - 1, 2 ** 32, 2 ** 53 + 1, ir.I64_MAX, ir.I64_MIN]


def wide(t: ir.ScalarType) -> ir.ScalarType:
    return ir.compute_type(t)


def chain(source: ir.ScalarType, to: ir.ScalarType, checked: bool) -> Kernel:
    start = ir.F64 if source in ir.FLOATS else ir.BOOL if source == ir.BOOL else ir.I64
    b = Builder(start)
    x = b.params[0]
    if source != start:
        x = b.op("cast", x, to=ir.NUMPY_DTYPE_NAMES[source])
    y = b.op("cast", x, to=ir.NUMPY_DTYPE_NAMES[to], checked=checked)
    if wide(to) != to:
        y = b.op("cast", y, to=ir.NUMPY_DTYPE_NAMES[wide(to)])
    return b.function(y)


def inputs(source):
    if source == ir.BOOL:
        return [False, True]
    return FLOAT_VALUES if source in ir.FLOATS else INT_VALUES


@pytest.mark.parametrize("source", DTYPES, ids=str)
def test_cast_matches_evaluator(source):
    for to, checked in itertools.product(DTYPES, (False, True)):
        fn = chain(source, to, checked)
        k = Kernel(fn)
        for x in inputs(source):
            got, want = k(x), reference(fn, [x])
            assert got[0] == want[0] and (got[0] == "fail" and got[1] == want[1] or same(got[1], want[1])), \
                (source, to, checked, x, got, want)


def numpy_astype(x, source, to):
    """NumPy's value for x (of dtype source) cast to `to`, or None where it warns."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            a = np.array([x], dtype=ir.NUMPY_DTYPE_NAMES[source])
            return a.astype(ir.NUMPY_DTYPE_NAMES[to])[0].item()
        except (RuntimeWarning, OverflowError):
            return None


@pytest.mark.parametrize("source", DTYPES, ids=str)
def test_evaluator_is_numpy_astype(source):
    """Where the cast succeeds it gives NumPy's value; it fails (FALLBACK) where NumPy warns."""
    for to in DTYPES:
        for x in inputs(source):
            start = numpy_astype(x, ir.compute_type(source) if source != ir.BOOL else source, source)
            if start is None:
                continue
            got = reference("cast", [start], (("to", ir.NUMPY_DTYPE_NAMES[to]),))
            expected = numpy_astype(start, source, to)
            if got == ("fail", Status.FALLBACK):
                continue            # Python runs: NumPy's own value (and warning, if any) comes from there
            assert expected is not None, (source, to, start, got)
            assert same(got[1], expected if to != ir.BOOL else bool(expected)), (source, to, start, got, expected)


def test_float16_rounding_is_numpy_on_every_half_boundary():
    """Each float16's neighbours and the midpoints between them round as NumPy rounds them."""
    b = Builder(ir.F64)
    fn = b.function(b.op("cast", b.op("cast", b.params[0], to="float16"), to="float64"))
    k = Kernel(fn)
    halves = np.arange(0, 0x7C01, 7, dtype=np.uint16).view(np.float16).astype(np.float64)
    points = np.concatenate([halves, np.nextafter(halves, np.inf), np.nextafter(halves, -np.inf),
                             (halves[1:] + halves[:-1]) / 2, -halves])
    for x in points:
        with np.errstate(over="ignore"):
            assert same(k(float(x))[1], float(np.float16(x))), x
