"""NumPy's own elementwise math (tracer/ir/numpy_math_ops.py, codegen/numpy_math.py): np.exp and
np.log of float64 arrays against CPython's math.exp and math.log in ulps (at most 1, as NumPy's
own), against NumPy on special values and warnings, compiled against the IR interpreter bit for
bit, and vectorized."""
from __future__ import annotations

import math
import pathlib
import platform
import re
import warnings

import numpy as np
import pytest

from codegen.jit import assembly_for
from tracer import grad, trace
from tracer.ir.numpy_math_ops import exp_of, log_of
from tracer.ir.ops import run

EXP = trace(lambda a: np.exp(a))
RNG = np.random.default_rng(17)


def ulps(got: np.ndarray, want: np.ndarray) -> float:
    return float(np.max(np.abs(got - want) / np.spacing(np.abs(want))))


@pytest.mark.parametrize("low, high", [(-745.0, 709.7), (-2.0, 2.0), (-1e-8, 1e-8), (700.0, 709.78), (-745.1, -700.0)])
def test_exp_is_within_one_ulp_of_math_exp(low, high):
    x = RNG.uniform(low, high, 50_000)
    want = np.array([math.exp(v) for v in x])
    assert ulps(EXP(x), want) <= 1.0
    assert ulps(np.exp(x), want) <= 1.0           # (NumPy's own, on this machine, for the record)


def test_exp_of_special_values_and_overflow_is_numpys():
    x = np.array([0.0, -0.0, 1.0, np.nan, np.inf, -np.inf, -745.2, -800.0, 709.78, -708.4, 1e-310, -1e-310])
    with warnings.catch_warnings():
        warnings.simplefilter("error")           # none of these warns in NumPy
        got = EXP(x)
    assert np.array_equal(got, np.exp(x), equal_nan=True)
    for big in (np.array([710.0, 1.0]), np.array([1e308])):
        with pytest.warns(RuntimeWarning, match="overflow encountered in exp"):
            got = EXP(big)
        with pytest.warns(RuntimeWarning, match="overflow encountered in exp"):
            assert np.array_equal(got, np.exp(big))


def test_compiled_exp_is_the_evaluators_bit_for_bit():
    x = np.concatenate([RNG.uniform(-745, 709, 300), RNG.uniform(-1, 1, 100), [np.nan, np.inf, -np.inf, 0.0]])
    got = EXP(x)
    assert np.array_equal(got, np.array([exp_of(v) for v in x]), equal_nan=True)
    spec = EXP.specializations[0]
    assert np.array_equal(run(spec.optimized, [x[:40]]), EXP(x[:40]), equal_nan=True)


def test_exp_in_a_chain_vectorizes_and_differentiates():
    f = trace(lambda a: np.sum(np.exp(a) * 2.0 + 1.0))
    x = RNG.uniform(-3, 3, 1000)
    assert f(x) == pytest.approx(np.sum(np.exp(x) * 2.0 + 1.0), rel=1e-14)
    if platform.machine() == "x86_64" and " fma " in pathlib.Path("/proc/cpuinfo").read_text():
        spec = f.specializations[0]
        assert re.search(r"vfmadd\d+pd", assembly_for(spec.optimized, spec.entry_args))   # packed: vectorized
    g = grad(lambda a: np.sum(np.exp(a)))(x)
    assert np.allclose(g, np.exp(x), rtol=1e-15)


LOG = trace(lambda a: np.log(a))


@pytest.mark.parametrize("sample", [
    lambda n: RNG.uniform(0.0, 2.0, n), lambda n: np.exp(RNG.uniform(-700, 700, n)),
    lambda n: RNG.uniform(0.7, 1.4, n), lambda n: 5e-324 * RNG.integers(1, 2 ** 52, n).astype(float),
], ids=["0-2", "wide", "near-1", "subnormal"])
def test_log_is_within_one_ulp_of_math_log(sample):
    x = sample(50_000)
    want = np.array([math.log(v) for v in x])
    assert ulps(LOG(x), want) <= 1.0
    assert ulps(np.log(x), want) <= 1.0


def test_log_of_special_values_warnings_and_the_evaluator():
    x = np.array([1.0, np.nan, np.inf, 2.0, 1e-310, 0.5, 5e-324, 1.7976931348623157e308])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = LOG(x)
    assert np.array_equal(got, np.log(x), equal_nan=True)
    assert np.array_equal(got, np.array([log_of(v) for v in x]), equal_nan=True)
    for bad, message in [(np.array([0.0, 1.0]), "divide by zero"), (np.array([-0.0]), "divide by zero"),
                         (np.array([-1.0, 2.0]), "invalid value"), (np.array([-np.inf]), "invalid value")]:
        with pytest.warns(RuntimeWarning, match=f"{message} encountered in log"):
            got = LOG(bad)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert np.array_equal(got, np.log(bad), equal_nan=True)
    y = RNG.uniform(0, 3, 500)
    assert np.array_equal(LOG(y), np.array([log_of(v) for v in y]))
    spec = LOG.specializations[0]
    assert np.array_equal(run(spec.optimized, [y[:40]]), LOG(y[:40]))
    assert np.allclose(grad(lambda a: np.sum(np.log(a)))(y + 0.5), 1.0 / (y + 0.5), rtol=1e-15)


CUBE, INVERSE_SQUARE = trace(lambda x: x ** 3), trace(lambda x: x ** -2.0)


@pytest.mark.parametrize("low, high", [(1e-3, 10.0), (-1e100, 1e100), (1e-100, 1e-90)])
def test_integer_powers_by_multiplication_are_within_one_ulp_of_math_pow(low, high):
    """x ** 3 is (x * x) * x and x ** -2 is 1 / (x * x) (issue: NumPy's SIMD pow is as far)."""
    x = np.random.default_rng(3).uniform(low, high, 20_000)
    for compiled, n in ((CUBE, 3), (INVERSE_SQUARE, -2)):
        want = np.array([math.pow(v, n) for v in x])
        assert ulps(compiled(x), want) <= 1.0
    i = np.arange(-3000, 3000)
    assert np.array_equal(trace(lambda a: a ** 3)(i), i ** 3)          # ints: NumPy's exactly


TANH = trace(lambda a: np.tanh(a))


@pytest.mark.parametrize("low, high", [(-25.0, 25.0), (-1.0, 1.0), (0.6, 0.65), (-1e-6, 1e-6), (21.0, 23.0)])
def test_tanh_is_within_two_ulps_of_math_tanh_and_is_the_evaluators(low, high):
    """np_tanh: a rational form below 0.625, 1 - 2 / (np_exp(2|x|) + 1) above (NumPy's own SIMD
    tanh is up to 3 ulps from math.tanh on this machine)."""
    from tracer.ir.numpy_math_ops import tanh_of
    x = RNG.uniform(low, high, 50_000)
    got = TANH(x)
    assert ulps(got, np.array([math.tanh(v) for v in x])) <= 2.0
    assert got.tobytes() == np.array([tanh_of(v) for v in x]).tobytes()


def test_tanh_of_special_values_raises_nothing():
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -1e-310, 1e300, -1e300, 22.0, -30.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = TANH(x)
    assert got.tobytes() == np.tanh(x).tobytes()
    assert grad(lambda a: np.sum(np.tanh(a)))(np.array([0.5, -2.0]))[1] == pytest.approx(1 - math.tanh(2.0) ** 2)
