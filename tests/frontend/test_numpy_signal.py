"""np.pad, np.convolve and np.correlate (tracer.frontend.numpy_signal), and np.array of an
array or an input list, against NumPy."""
import numpy as np
import pytest

from tracer import trace
from tracer.errors import UnsupportedError

rng = np.random.default_rng(7)


@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("n, m", [(10, 3), (1, 1), (8, 4), (3, 10)])
def test_sliding_sums_are_numpys(name, mode, n, m):
    """The kernel comes from a list (its length known at trace time), the signal is an argument
    array (its length known at run time; shorter than the kernel, the Python function runs)."""
    fn = getattr(np, name)

    def f(a, v):
        return fn(a, np.array(v), mode=mode)
    compiled = trace(f, fullgraph=True)
    a, v = rng.standard_normal(n), [float(t) for t in rng.standard_normal(m)]
    got, expected = compiled(a, v), f(a, v)
    assert got.shape == expected.shape and np.allclose(got, expected, rtol=1e-13, atol=1e-14)
    ai, vi = rng.integers(-5, 5, n), [int(t) for t in rng.integers(-5, 5, m)]
    got, expected = compiled(ai, vi), f(ai, vi)
    assert got.dtype == expected.dtype and np.array_equal(got, expected)


def test_both_sizes_known_only_at_run_time_is_a_clear_error():
    with pytest.raises(UnsupportedError, match="sizes are known only at run time"):
        trace(lambda a, v: np.convolve(a, v), fullgraph=True)(np.ones(4), np.ones(2))


@pytest.mark.parametrize("mode", ["constant", "edge", "wrap", "reflect", "symmetric"])
@pytest.mark.parametrize("width", [2, ((2, 0), (1, 3)), ((0, 0), (0, 1)), 4])
def test_pad_is_numpys(mode, width):
    def f(x):
        return np.pad(x, width, mode=mode)
    x = rng.standard_normal((3, 4))
    try:
        expected = f(x)
    except ValueError as exc:
        with pytest.raises(type(exc)):
            trace(f, fullgraph=True)(x)
        return
    got = trace(f, fullgraph=True)(x)
    assert got.shape == expected.shape and np.array_equal(got, expected)


def test_pad_constant_values():
    def f(x):
        return np.pad(x, (2, 1), constant_values=(-1.5, 7))
    x = rng.standard_normal(5)
    assert np.array_equal(trace(f, fullgraph=True)(x), f(x))


def test_np_array_of_an_array_is_a_copy():
    def f(a):
        b = np.array(a)
        b[0] = 99.0
        return b.sum()
    a = np.ones(3)
    assert trace(f)(a) == 101.0 and np.array_equal(a, np.ones(3))


@pytest.mark.parametrize("xs", [[1.0, 2.0, 3.0], [float(i) for i in range(200)], [1, 2, 3]])
def test_np_array_of_an_input_list(xs):
    def f(xs):
        a = np.array(xs)
        a[0] = 5
        return a * 2, np.asarray(xs, dtype=np.float32)[1], xs[0]
    got, expected = trace(f, fullgraph=True)(xs), f(xs)
    assert np.array_equal(got[0], expected[0]) and got[0].dtype == expected[0].dtype and got[1:] == expected[1:]


def moving_average(x, m):
    k = np.ones(m) / m
    return np.convolve(x, k, mode="valid")


def windowed_sinc(x, cutoff, ntaps):
    n = np.arange(ntaps) - (ntaps - 1) / 2
    taps = 2 * cutoff * np.sinc(2 * cutoff * n) * np.hamming(ntaps)
    taps /= taps.sum()
    return np.convolve(x, taps, mode="same")


@pytest.mark.parametrize("fn, args", [(moving_average, (5,)), (moving_average, (3,)), (windowed_sinc, (0.1, 21)),
                                      (windowed_sinc, (0.2, 11))])
def test_a_kernel_whose_length_is_an_int_argument(fn, args):
    """Its length is pinned (one compile per length), the signal's is known at run time."""
    x = np.sin(np.linspace(0.0, 20.0, 60))
    compiled = trace(fn, fullgraph=True)
    assert np.allclose(compiled(x, *args), fn(x, *args), rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("rtol, atol", [(1e-5, 1e-8), (1e-2, 0.0), (0.0, 0.0), (1e-5, 1), (float("inf"), 0.0)])
def test_closeness_with_tolerances_that_are_arguments(rtol, atol):
    """(np.isclose and np.allclose, here with the other NumPy functions this file adds to the
    tracer's list); a tolerance that is not finite runs the Python function (NumPy warns)."""
    import warnings

    def f(a, b, rtol, atol):
        return np.allclose(a, b, rtol=rtol, atol=atol), int(np.isclose(a, b, rtol, atol).sum())
    a = np.array([1.0, 2.0, 3.0])
    b = a + np.array([1e-6, 1e-3, 0.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert trace(f, fullgraph=True)(a, b, rtol, atol) == f(a, b, rtol, atol)
