"""NumPy's elementwise math as its own ops (registered into `tracer.ir.ops.OPS`), where NumPy's
results are not CPython's `math` results: `np_exp`, np.exp of a float64 array.

NumPy computes np.exp with SIMD kernels of its own (not the C library's exp, which CPython's
math.exp calls); so does `np_exp`, in a form LLVM vectorizes: x = n ln2 + r with
n = rint(x / ln2) and r in [-ln2/2, ln2/2] (ln2 in two parts, each step one fused
multiply-add), e^r by its Taylor polynomial to r^13 (Horner, one fma per step), scaled by 2^n
in two multiplications by powers of two (so an overflow raises the CPU's overflow flag, and
NumPy's "overflow encountered in exp" comes from the Python function, codegen.fpflags; a
result past the smallest normal double is rounded once). The op itself never fails. Non-finite x: exp(inf) = inf,
exp(-inf) = 0.0, exp(nan) = nan, without a flag. Measured against CPython's math.exp (the C
library's, correctly rounded but for rare cases) the result is at most 1 ulp off
(tests/codegen/test_numpy_math.py), as NumPy's own AVX-512 exp is.

The evaluator computes the same sequence of IEEE operations (fused_multiply_add is one rounding),
so the IR interpreter and compiled code agree bit for bit.
"""
from __future__ import annotations

import math

from tracer.ir.registry import define, signature
from tracer.ir.scalar_ops import fused_multiply_add
from tracer.ir.types import F64

LOG2E = 1.4426950408889634             # 1 / ln 2, rounded
LN2_HI = 0.6931471805599453            # ln 2 rounded to a double
LN2_LO = 2.3190468138462996e-17        # ln 2 - LN2_HI, rounded
EXP_COEFFICIENTS = tuple(1.0 / math.factorial(i) for i in range(13, -1, -1))   # r^13 ... r^0
EXP_CLAMP = 1100.0                     # beyond it e^x is inf or 0 in double; keeps 2^n two normal powers


def scale_parts(n: int) -> tuple[int, int]:
    """n as two exponents, each a normal double's (|n| <= EXP_CLAMP)."""
    first = n >> 1
    return first, n - first


def exp_of(x: float) -> float:
    """np_exp's value, as the compiled code computes it."""
    if math.isnan(x):
        return x
    if math.isinf(x):
        return x if x > 0 else 0.0
    x = min(max(x, -EXP_CLAMP), EXP_CLAMP)
    n = float(round(x * LOG2E))          # (Python's round: half to even, as rint)
    r = fused_multiply_add(-n, LN2_HI, x)
    r = fused_multiply_add(-n, LN2_LO, r)
    p = EXP_COEFFICIENTS[0]
    for c in EXP_COEFFICIENTS[1:]:
        p = fused_multiply_add(p, r, c)
    first, second = scale_parts(int(n))
    try:
        return p * math.ldexp(1.0, first) * math.ldexp(1.0, second)
    except OverflowError:
        return math.inf


define("np_exp", "np.exp(a) of a float64 array's elements: NumPy's result to 1 ulp, computed as NumPy does, "
       "vectorizable (see tracer/ir/numpy_math_ops.py); never fails: an overflow is inf, and raises the "
       "CPU's overflow flag (over arrays, codegen.fpflags makes that NumPy's warning)",
       signature(((F64,), F64)), exp_of, vjp=(lambda ct, out, x: ct * out,))
