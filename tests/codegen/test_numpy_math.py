"""NumPy's own elementwise math (tracer/ir/numpy_math_ops.py, codegen/numpy_math.py): np.exp and
np.log of float64 arrays against CPython's math.exp and math.log in ulps (at most 1, as NumPy's
own), against NumPy on special values and warnings, compiled against the IR interpreter bit for
bit, and vectorized."""
from __future__ import annotations

import importlib.util
import math
import pathlib
import platform
import re
import shutil
import warnings

import numpy as np
import pytest

from codegen.jit import assembly_for
from tracer import export, grad, trace
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


POW = trace(lambda a, b: a ** b)


def _pow_samples(n: int) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(29)
    near_one = 1.0 + rng.uniform(-1e-6, 1e-6, n)
    return [
        (rng.uniform(0.0, 3.0, n), rng.uniform(-5.0, 5.0, n)),
        (np.exp(rng.uniform(-700.0, 700.0, n)), rng.uniform(-1.0, 1.0, n)),            # all exponents of x
        (rng.uniform(0.5, 2.0, n), rng.uniform(-1000.0, 1000.0, n)),                   # results near the ends
        (near_one, rng.uniform(-6e8, 6e8, n)),                                         # y log x from a tiny log
        (rng.uniform(0.7, 1.4, n), rng.uniform(-2000.0, 2000.0, n)),                   # each entry of the table
        (5e-324 * rng.integers(1, 2 ** 52, n).astype(float), rng.uniform(-0.2, 1.0, n)),   # subnormal x
        (rng.uniform(0.01, 0.1, n), rng.uniform(300.0, 330.0, n)),                      # subnormal results
        (-rng.uniform(0.1, 10.0, n), rng.integers(-300, 300, n).astype(float)),         # negative x, whole y
    ]


@pytest.mark.parametrize("case", range(8))
def test_pow_is_within_one_ulp_of_math_pow(case):
    """np_pow (x ** y of float64 arrays) against CPython's math.pow (the C library's, correctly
    rounded but for rare cases): at most 1 ulp apart, where NumPy's own SIMD pow is too."""
    x, y = _pow_samples(40_000)[case]
    want = np.array([math.pow(a, b) for a, b in zip(x, y)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")           # no sample overflows or warns
        got = POW(x, y)
    assert ulps(got, want) <= 1.0
    assert ulps(np.power(x, y), want) <= 1.0
    scalar = float(y[0])                         # a run-time scalar exponent: the same kernel
    assert ulps(POW(x, scalar), np.array([math.pow(a, scalar) for a in x])) <= 1.0


SPECIAL = [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 3.0, -3.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324,
           1e308, -1e308, 1e-310, 0.9999999999999999, 1.0000000000000002, 1e154, 1.5e154, 1e-160]


def test_pow_of_special_values_is_numpys_with_its_warnings():
    """Each pair of special values (beside an ordinary one) alone: C's pow's value, and NumPy's
    warning where NumPy warns (then NumPy's own result: the Python function ran)."""
    for a in SPECIAL:
        for b in SPECIAL + [0.25, 1e300, -1e300, 2.0 ** 60, 2.0 ** 53 + 2]:
            x, y = np.array([a, 1.5]), np.array([b, 1.5])
            with warnings.catch_warnings(record=True) as ours:
                warnings.simplefilter("always")
                got = POW(x, y)
            with warnings.catch_warnings(record=True) as numpys:
                warnings.simplefilter("always")
                want = np.power(x, y)
            assert [str(w.message) for w in ours] == [str(w.message) for w in numpys], (a, b)
            if np.isfinite(want[0]) and want[0] != 0.0:     # (NumPy's SIMD pow: within 1 ulp too)
                assert ulps(got, want) <= 1.0 and np.signbit(got[0]) == np.signbit(want[0]), (a, b)
            else:
                assert got.tobytes() == want.tobytes(), (a, b)
    for a, b in [(np.array([-8.0, 2.0]), 1 / 3), (np.array([0.0, 2.0]), -1.0), (np.array([1e300, 2.0]), 2.5),
                 (np.array([-0.0, 4.0]), 0.5), (np.array([-np.inf, 4.0]), 0.5), (np.array([-0.0, 4.0]), np.array([0.5, 0.5]))]:
        with warnings.catch_warnings(record=True) as ours:
            warnings.simplefilter("always")
            got = POW(a, b)
        with warnings.catch_warnings(record=True) as numpys:
            warnings.simplefilter("always")
            want = a ** b
        assert got.tobytes() == want.tobytes()
        assert [str(w.message) for w in ours] == [str(w.message) for w in numpys]


def test_pow_by_run_time_exponents_numpy_computes_exactly():
    """NumPy's power of a scalar exponent 2, 1, 0 is x * x, x, 1: so is np_pow's, bit for bit."""
    x = np.concatenate([RNG.uniform(-1e3, 1e3, 5000), [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, 1e200]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for p in (2.0, 1.0, 0.0):
            assert POW(x, p).tobytes() == (x ** p).tobytes()


def test_compiled_pow_is_the_evaluators_bit_for_bit_and_vectorizes():
    from tracer.ir.numpy_math_ops import pow_of
    special_x = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, 2.0, -2.0, 5e-324, 1e308]     # (none warns)
    special_y = [2.5, np.inf, -2.0, 3.0, 0.0, np.nan, np.inf, 3.0, 0.5, -0.5]
    x = np.concatenate([s[0][:40] for s in _pow_samples(40)] + [np.array(special_x)])
    y = np.concatenate([s[1][:40] for s in _pow_samples(40)] + [np.array(special_y)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = POW(x, y)
    want = np.array([pow_of(a, b) for a, b in zip(x, y)])
    assert got.tobytes() == want.tobytes()
    f = trace(lambda a, p: np.sum(np.abs(a) ** p) ** (1.0 / p))
    a = RNG.standard_normal(1000)
    assert f(a, 3.0) == pytest.approx(np.sum(np.abs(a) ** 3.0) ** (1.0 / 3.0), rel=1e-14)
    spec = f.specializations[0]
    assert np.array_equal(run(spec.optimized, [a[:40], 3.0]), f(a[:40], 3.0))
    if platform.machine() == "x86_64" and " fma " in pathlib.Path("/proc/cpuinfo").read_text():
        assert re.search(r"vfmadd\d+pd", assembly_for(spec.optimized, spec.entry_args))   # packed: vectorized
    g = grad(lambda b: np.sum(b ** 2.5))(a * a + 0.5)
    assert np.allclose(g, 2.5 * (a * a + 0.5) ** 1.5, rtol=1e-14)



def _log_boundaries() -> np.ndarray:
    """x where np_log's reduction changes course, and 3 ulps either side: m's bound sqrt(2), the
    table's bounds and 1 at several exponents (subnormal ones too), and the subnormals' ends."""
    from tracer.ir.numpy_math_ops import NP_LOG_BOUNDS, SQRT_TWO_BITS
    sqrt_two = np.array([SQRT_TWO_BITS], dtype=np.int64).view(np.float64)[0]
    centres = np.array([1.0, sqrt_two, *NP_LOG_BOUNDS, *(b / 2 for b in NP_LOG_BOUNDS)])
    scaled = np.concatenate([centres * 2.0 ** e for e in (-1060, -1022, -600, -1, 0, 1, 300, 1023)])
    around = (scaled[:, None] + np.arange(-3, 4)[None, :] * np.spacing(scaled)[:, None]).ravel()
    smallest_normal = 2.2250738585072014e-308
    ends = [5e-324, 1e-323, smallest_normal, np.nextafter(smallest_normal, 0.0), 1.7976931348623157e308]
    return np.concatenate([around, ends])


def test_log_over_all_exponents_and_its_boundaries_is_within_one_ulp_and_the_evaluators():
    """Random bit patterns of positive finite doubles (every exponent, subnormals too) and the
    reduction's boundaries: within 1 ulp of math.log, equal to it but for 1 in 10^4, and the
    evaluator's bits (the IR interpreter and compiled code agree)."""
    rng = np.random.default_rng(41)
    x = np.concatenate([rng.integers(1, 0x7FF0_0000_0000_0000, 100_000).view(np.float64), _log_boundaries()])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = LOG(x)
    want = np.array([math.log(v) for v in x])
    assert ulps(got, want) <= 1.0
    assert np.mean(got == want) >= 0.9999
    some = np.r_[0:3000, 100_000:x.size]          # (the evaluator is Python: a part of the sample)
    assert got[some].tobytes() == np.array([log_of(v) for v in x[some]]).tobytes()


def test_log_near_one_keeps_its_accuracy():
    """Near 1, where log1p's terms matter most: equal to math.log for at least 99.2% of inputs
    (np_log: 99.28% for this sample; NumPy's own SIMD log on an AVX-512 machine: 99.15%)."""
    x = np.random.default_rng(43).uniform(0.7, 1.4, 100_000)
    want = np.array([math.log(v) for v in x])
    got = LOG(x)
    assert ulps(got, want) <= 1.0 and np.mean(got == want) >= 0.992
    tiny = 1.0 + np.random.default_rng(44).uniform(-1e-3, 1e-3, 20_000)
    assert np.mean(LOG(tiny) == np.array([math.log(v) for v in tiny])) >= 0.999


def test_log_of_special_values_among_ordinary_ones_is_numpys():
    """inf and NaNs (either sign, any payload) among ordinary values: NumPy's values, no warning;
    one zero or negative among them: NumPy's warning and NumPy's values (the Python function ran)."""
    ordinary = np.random.default_rng(47).uniform(0.1, 10.0, 1000)
    quiet = np.array([np.inf, np.nan, -np.nan, np.array([0x7FF8_0000_0000_1234], dtype=np.int64).view(np.float64)[0],
                      np.array([-0x0007_FFFF_FFFF_FFFF], dtype=np.int64).view(np.float64)[0]])   # (a negative NaN)
    x = np.concatenate([ordinary, quiet, ordinary])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = LOG(x)
        want = np.log(x)
    assert np.array_equal(got, want, equal_nan=True)
    assert np.array_equal(np.isnan(got), np.isnan(x))
    for bad, message in [(0.0, "divide by zero"), (-0.0, "divide by zero"), (-5e-324, "invalid value"),
                         (-np.inf, "invalid value"), (-2.5, "invalid value")]:
        y = np.concatenate([ordinary, [bad], ordinary])
        with pytest.warns(RuntimeWarning, match=f"{message} encountered in log"):
            got = LOG(y)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert got.tobytes() == np.log(y).tobytes(), bad


def test_pow_near_halfway_and_whole_exponents_of_two_is_the_evaluators():
    """x ** y with t = y log x near (n + 1/2) ln 2 and near 0, where e^t's n = rint(t / ln 2)
    rounds half to even (one conversion on AVX-512 machines), and near n ln 2 (2.0 ** n: e^t's
    reduced argument tiny, below the correction added to it): the evaluator's bits, within 1 ulp
    of math.pow, and 2.0 ** n exact."""
    from tracer.ir.numpy_math_ops import pow_of
    whole = np.arange(-1074, 1024).astype(float)
    assert POW(np.full(whole.size, 2.0), whole).tobytes() == np.array([math.pow(2.0, n) for n in whole]).tobytes()
    halves = np.arange(-1070, 1023) + 0.5
    x = np.concatenate([np.full(halves.size, 2.0), np.full(8, 1.0000000000000002), np.full(8, 0.9999999999999999)])
    y = np.concatenate([halves, [1.0, -1.0, 0.5, -0.5, 3.0, -3.0, 1e-300, -1e-300] * 2])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = POW(x, y)
    assert got.tobytes() == np.array([pow_of(a, b) for a, b in zip(x, y)]).tobytes()
    ok = got != 0.0
    assert ulps(got[ok], np.array([math.pow(a, b) for a, b in zip(x[ok], y[ok])])) <= 1.0


@pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None, reason="no C compiler to link an export")
def test_exported_log_and_pow_are_the_jits_bit_for_bit(tmp_path):
    """An exported library's kernels (tracer.export: the portable forms, no AVX-512 branch) give the
    JIT's bits: np_log over every exponent, np_pow with e^t's n from rint there, llvm.lrint here."""
    def log(a):
        return np.log(a)

    def power(a, b):
        return a ** b
    rng = np.random.default_rng(53)
    x = np.concatenate([rng.integers(1, 0x7FF0_0000_0000_0000, 20_000).view(np.float64), _log_boundaries()])
    a, b = rng.uniform(0.0, 3.0, 20_000), rng.uniform(-30.0, 30.0, 20_000)
    a[:2000], b[:2000] = 2.0, np.arange(-1000, 1000) + np.where(np.arange(2000) % 2, 0.5, 0.0)
    exported = export([(log, (x,)), (power, (a, b))], out_dir=str(tmp_path), name="numpy_math", grad=False)
    spec = importlib.util.spec_from_file_location("exported_numpy_math", exported.loader)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.log(x).tobytes() == trace(log)(x).tobytes()
    assert module.power(a, b).tobytes() == trace(power)(a, b).tobytes()
