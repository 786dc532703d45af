"""NumPy's complex64 and complex128 arrays in traced code, checked against NumPy: arithmetic (bit for
bit where NumPy's loop is the same sequence of IEEE operations), promotion, reductions, indexing,
writes into arguments, ufuncs, and NumPy's warnings on the inputs where it gives them."""
import warnings

import numpy as np
import pytest

from tracer import trace
from tracer.errors import UnsupportedError

RNG = np.random.default_rng(7)


def _complex(shape, dtype=np.complex128):
    return (RNG.normal(size=shape) + 1j * RNG.normal(size=shape)).astype(dtype)


Z, W = _complex((6, 5)), _complex((6, 5))
X = RNG.normal(size=(6, 5))
V = _complex(9)


def _same(expected, got, exact=False):
    if isinstance(expected, tuple):
        assert isinstance(got, tuple) and len(got) == len(expected)
        for e, g in zip(expected, got):
            _same(e, g, exact)
        return
    e, g = np.asarray(expected), np.asarray(got)
    assert e.dtype == g.dtype and e.shape == g.shape, (e.dtype, g.dtype, e.shape, g.shape)
    if exact:
        np.testing.assert_array_equal(g, e)
    else:
        rtol = 1e-5 if e.dtype in (np.complex64, np.float32) else 1e-13
        np.testing.assert_allclose(g, e, rtol=rtol, atol=rtol * 1e-3)


def _run(f, *args, exact=False, fma=False):
    expected = f(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
    got = trace(fullgraph=True, fuse_fma=fma)(f)(*args)
    _same(expected, got, exact)
    return got


# functions whose NumPy loop is plain IEEE arithmetic in one order: equal bit for bit (FMA fusion off)
EXACT = {
    "add": lambda z, w: z + w,
    "sub": lambda z, w: z - w,
    "div": lambda z, w: z / w,
    "div_real": lambda z, w: z / w.real,
    "real_div": lambda z, w: w.real / z,
    "neg": lambda z, w: -z,
    "conj": lambda z, w: np.conj(z) - w.conjugate(),
    "parts": lambda z, w: z.real * 2.0 + w.imag,
    "scalar": lambda z, w: z * 2.0 + (1 - 2j),
    "pow5": lambda z, w: z ** 5,
    "pow_neg": lambda z, w: w ** -3,
    "pow0": lambda z, w: z ** 0,
    "exp": lambda z, w: np.exp(z),
    "sqrt": lambda z, w: np.sqrt(z),
    "eq": lambda z, w: z == w,
    "ne": lambda z, w: z != np.where(z.real > 0, z, w),
    "where": lambda z, w: np.where(np.abs(z) > 1.0, z, 0),
    "slice": lambda z, w: z[1:4, ::2] + w[:3, ::2],
    "transpose": lambda z, w: z.T + w.T,
    "reshape": lambda z, w: z.reshape(5, 6) + w.ravel().reshape((5, 6)),
    "concatenate": lambda z, w: np.concatenate([z, w.real], axis=1),
    "roll": lambda z, w: np.roll(z, 2, axis=0),
    "cumsum": lambda z, w: np.cumsum(w, axis=1),
    "isnan": lambda z, w: np.isnan(z / w) | np.isinf(z) | ~np.isfinite(w),
    "element": lambda z, w: z[2, 3] * w[1, 1],
    "abs": lambda z, w: np.abs(z) + abs(w[::-1]),
}


def _check(table, name, dtype, **how):
    _run(table[name], Z.astype(dtype), W.astype(dtype), **how)


# functions that only move elements run on each part
MOVES = {
    "array_split": lambda z, w: np.array_split(z, 2)[1], "atleast_3d": lambda z, w: np.atleast_3d(z),
    "broadcast_to": lambda z, w: np.broadcast_to(z[0], (3, 5)) * 1, "column_stack": lambda z, w: np.column_stack([z, w]),
    "diag": lambda z, w: np.diag(z), "diff": lambda z, w: np.diff(z, axis=0), "flip": lambda z, w: np.flip(z),
    "hstack": lambda z, w: np.hstack([z, w]), "moveaxis": lambda z, w: np.moveaxis(z, 0, 1),
    "repeat": lambda z, w: np.repeat(z, 2, axis=0), "stack": lambda z, w: np.stack([z, w]),
    "swapaxes": lambda z, w: z.swapaxes(0, 1), "take": lambda z, w: np.take(z, np.array([0, 2])),
    "tile": lambda z, w: np.tile(z, 2), "tril": lambda z, w: np.tril(z), "vstack": lambda z, w: np.vstack([z, w.real]),
    "copy": lambda z, w: z.copy(), "astype": lambda z, w: z.astype(np.complex64), "ones": lambda z, w: np.ones(3, complex),
    "zeros": lambda z, w: np.zeros((2, 2), dtype=np.complex64), "empty_like": lambda z, w: np.empty_like(w).shape,
}


@pytest.mark.parametrize("name", sorted(MOVES))
def test_functions_that_move_elements(name, python_runs):
    _run(MOVES[name], Z, W, exact=True)
    assert python_runs == []


@pytest.mark.parametrize("name", sorted(EXACT) + sorted(MOVES))
def test_no_operation_raises_in_the_trace(name):
    """Nothing the complex code emits fails its type rules (a failure would be compiled as an
    exception, and every call would run the Python function instead)."""
    f = EXACT.get(name) or MOVES[name]
    for dtype in (np.complex128, np.complex64):
        text = trace(f).dump(Z.astype(dtype), W.astype(dtype), stage="ir")
        assert " raise " not in text, text


def test_export_refuses_complex_arrays(tmp_path):
    import tracer
    from tracer.aot.toolchain import ExportError

    def double(z):
        return z * 2
    with pytest.raises(ExportError, match="complex arrays"):
        tracer.export(double, Z, name="cz", out_dir=str(tmp_path))


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
@pytest.mark.parametrize("name", sorted(EXACT))
def test_arithmetic_equals_numpy_bit_for_bit(name, dtype, python_runs):
    _check(EXACT, name, dtype, exact=True)
    assert python_runs == []            # the compiled code gave it


# functions NumPy computes another way (a complex pairwise sum, BLAS, its SIMD atan2, a SIMD
# multiply that may fuse): equal to rounding
CLOSE = {
    "mul": lambda z, w: z * w,
    "mul_real": lambda z, w: z * w.real,
    "pow2": lambda z, w: z ** 2,
    "square": lambda z, w: np.square(z),
    "angle": lambda z, w: np.angle(z) + np.angle(w, deg=True),
    "sum": lambda z, w: z.sum(),
    "sum_axis": lambda z, w: np.sum(z, axis=0) + w.sum(axis=1, keepdims=True),
    "mean": lambda z, w: np.mean(z),
    "mean_axis": lambda z, w: z.mean(axis=1),
    "matmul": lambda z, w: z @ w.T,
    "matmul_real": lambda z, w: z.real @ w.T + z @ w.real.T,
    "dot": lambda z, w: np.dot(z[0], w[0]),
    "vdot": lambda z, w: np.vdot(z, w),
    "energy": lambda z, w: np.sum(np.abs(z) ** 2),
}


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
@pytest.mark.parametrize("name", sorted(CLOSE))
def test_arithmetic_equals_numpy_to_rounding(name, dtype, python_runs):
    _check(CLOSE, name, dtype, fma=True)
    assert python_runs == []


def test_numpy_complex_scalars():
    """Elements and sums are np.complex128: NumPy's arithmetic (its division multiplies by a
    reciprocal, where Python's complex divides), and NumPy's warning for a division by zero."""
    def ratios(z):
        a, b = z[0, 0], z[1, 1]
        return a / b, a - b * 2, a / 3, 2 / b, a == b, (a + 1j).real
    _run(ratios, Z, exact=True)
    zero = Z.copy()
    zero[1, 1] = 0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = trace(ratios)(zero)
        assert str(got) == str(ratios(zero)) and caught


def test_promotion_follows_nep50():
    z64 = Z.astype(np.complex64)
    _run(lambda z, x: z * x, z64, X)                                   # complex64 * float64: complex128
    _run(lambda z, x: z * x, z64, X.astype(np.float32))               # complex64 * float32: complex64
    _run(lambda z: z * 0.1 + 1j, z64)                                  # Python numbers are weak
    _run(lambda z, w: z + w, z64, W)                                   # complex64 + complex128
    _run(lambda x: x * 1j, X.astype(np.int32))                         # an int array times 1j: complex128
    _run(lambda x: x.astype(np.complex64) * 2, X)


def test_made_from_real_arrays():
    def dft(x):
        n = x.shape[0]
        k = np.arange(n)
        m = np.exp(-2j * np.pi * k[:, None] * k[None, :] / n)
        return m @ x
    x = RNG.normal(size=16)
    got = trace(fullgraph=True)(dft)(x)
    np.testing.assert_allclose(got, np.fft.fft(x), atol=1e-12)
    _run(dft, x)

    def phasor(theta, r):
        return r * np.exp(1j * theta)
    _run(phasor, RNG.normal(size=50), RNG.uniform(size=50), exact=True)

    def made(n):
        a = np.zeros(n, dtype=complex)
        b = np.ones((n, 2), dtype=np.complex64)
        for i in range(n):
            a[i] = complex(i, -i)
        return a, b, np.zeros_like(a), np.ones_like(b)
    _run(made, 5, exact=True)


def test_writes_into_an_argument():
    def rotate(z, w):
        z *= 1j
        z[0] = 5 - 1j
        z[1, :] = w[1]
        z[2:4] += w[2:4]
        return z.sum()
    expected_z, got_z = Z.copy(), Z.copy()
    expected = rotate(expected_z, W)
    got = trace(fullgraph=True)(rotate)(got_z, W)
    np.testing.assert_allclose(got, expected, rtol=1e-13)
    np.testing.assert_array_equal(got_z, expected_z)

    read_only = Z.copy()
    read_only.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        trace(rotate)(read_only, W)


def test_loops_and_branches():
    def mandelbrot(c, n):
        z = np.zeros_like(c)
        count = np.zeros(c.shape)
        for _ in range(n):
            z = z * z + c
            count += np.abs(z) < 2
        return count
    _run(mandelbrot, 0.2 * Z, 30, exact=True)

    def rows(z):
        total = 0j
        for row in z:
            total += row.sum()
        return total
    _run(rows, Z)

    def chosen(z, w, flag):
        a = z if flag > 0 else w
        return a * 2
    for flag in (1.0, -1.0):
        _run(chosen, Z, W, flag, exact=True)


def test_numpy_warnings_and_edge_values():
    """Where NumPy warns (a division by zero, an overflow), the Python function runs: NumPy's
    answer and its warning."""
    def divide(z, w):
        return z / w
    zero = W.copy()
    zero[1, 2] = 0
    f = trace(divide)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = f(Z, zero)
    with warnings.catch_warnings(record=True) as expected_caught:
        warnings.simplefilter("always")
        expected = divide(Z, zero)
    np.testing.assert_array_equal(got, expected)
    assert [str(w.message) for w in caught] == [str(w.message) for w in expected_caught]

    edges = np.array([800 + 1j, -np.inf + 2j, np.inf + 0j, complex(np.nan, 0), 1e308 + 1e308j, 1e-310j, -4 + 0j,
                      -0.0 - 0j, 3 - 0j])
    for fn in (np.exp, np.sqrt):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = fn(edges)
            got = trace(lambda z: fn(z))(edges)
        np.testing.assert_array_equal(got, expected)
        assert [np.signbit(v.imag) for v in got] == [np.signbit(v.imag) for v in expected]


def test_log_is_glibcs_clog(python_runs):
    """np.log of complex128 arrays is glibc's clog (which NumPy calls) bit for bit: near the unit
    circle through x^2 + y^2 - 1 computed without cancellation; of complex64, equal to rounding
    (clogf's float atan2 and log1p)."""
    rng = np.random.default_rng(11)
    n = 4000
    samples = [rng.normal(size=n) * 10.0 ** rng.integers(-8, 8, n) + 1j * rng.normal(size=n) * 10.0 ** rng.integers(-8, 8, n),
               np.exp(1j * rng.uniform(-3.2, 3.2, n)) * (1 + rng.normal(size=n) * 1e-9),
               rng.uniform(0.5, 1.0, n) + 1j * rng.uniform(-1.0, 1.0, n),
               rng.uniform(1.0, 2.0, n) + 1j * rng.uniform(-1.0, 1.0, n) * 1e-17]
    f = trace(fullgraph=True, fuse_fma=False)(lambda z: np.log(z))
    for z in samples:
        np.testing.assert_array_equal(f(z), np.log(z))
        _same(np.log(z.astype(np.complex64)), f(z.astype(np.complex64)))
    assert python_runs == []            # near the unit circle too: compiled, not handed to Python
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        edges = np.array([0j, -0.0 + 0j, np.inf + 1j, complex(np.nan, 1), 1e308 + 1e308j, 1e-310 + 1e-310j, 1 + 0j])
        np.testing.assert_array_equal(f(edges), np.log(edges))


def test_refusals_are_clear():
    with pytest.raises(UnsupportedError, match="np.sin of a complex array"):
        trace(fullgraph=True)(lambda z: np.sin(z))(Z)
    with pytest.raises(UnsupportedError, match="complex"):
        trace(fullgraph=True)(lambda z, w: z < w)(Z, W)

    def add_into_real(x, z):
        x += z
        return x
    with pytest.raises(TypeError, match="Cannot cast ufunc 'add' output from dtype\\('complex128'\\)"):
        trace(fullgraph=True)(add_into_real)(X.copy(), Z)
    # without fullgraph, what does not compile runs as Python
    assert np.array_equal(trace(lambda z: np.sin(z))(Z), np.sin(Z))


def test_specializations_by_dtype():
    f = trace(lambda z: z * z)
    for z in (Z, Z.astype(np.complex64), V):
        _same(z * z, f(z))
    assert len(f.specializations) == 3


def test_numpy_complex_scalar_arguments():
    def f(c, z):
        return (c * z).sum() + c, c * c / (1 - c), z * c
    for c in (np.complex128(2 - 1j), np.complex64(0.3 + 0.2j)):
        for z in (V, V.astype(np.complex64)):
            expected, got = f(c, z), trace(fullgraph=True, fuse_fma=False)(f)(c, z)
            for e, g in zip(expected, got):
                assert type(e) is type(g)
            _same(expected[1], got[1], exact=True)
            _same(expected[2], got[2])
