"""np.linalg.eig and eigvals in traced code (tracer.frontend.numpy_linalg, codegen.linalg's geev)
against NumPy itself, bit for bit: geev with NumPy's arguments and workspace on the same
column-major copy, and the complex eigenvectors built from its real ones as NumPy builds them.

NumPy returns float64 arrays where every eigenvalue is real and complex128 ones otherwise; the
compiled code gives the complex ones, and where all are real the Python function runs (so the
result is NumPy's float64 one): `python_runs` counts those runs.
"""
from __future__ import annotations

import numpy as np
import pytest
from oracle import array_bits

import tracer
import tracer.api
from tracer.errors import TracerError, UnsupportedError
from tracer.ir.linalg_ops import lapack_library

pytestmark = pytest.mark.skipif(lapack_library() is None, reason="NumPy without its bundled 64-bit OpenBLAS")


def eig(a):
    w, v = np.linalg.eig(a)
    return w, v


def eigvals(a):
    return np.linalg.eigvals(a)


def complex_spectrum(rng, n, *lead):
    """A matrix with a complex conjugate pair of eigenvalues (a rotation block), and others."""
    a = rng.normal(size=(*lead, n, n))
    a[..., 0, 1] += 3.0
    a[..., 1, 0] -= 3.0
    return a


@pytest.mark.parametrize("fn", [eig, eigvals])
def test_complex_spectra_are_numpys_bit_for_bit(fn, python_runs):
    traced = tracer.trace(fn, fullgraph=True)
    rng = np.random.default_rng(0)
    for n in (2, 3, 5, 8, 40):
        for _ in range(2):
            a = complex_spectrum(rng, n)
            want = fn(a)
            assert np.iscomplexobj(want[0] if isinstance(want, tuple) else want)
            assert array_bits(traced(a)) == array_bits(want), n
    assert python_runs == []
    assert len(traced.specializations) == 1


@pytest.mark.parametrize("fn", [eig, eigvals])
def test_stacks_views_and_int_matrices(fn, python_runs):
    traced = tracer.trace(fn, fullgraph=True)
    rng = np.random.default_rng(1)
    stack = complex_spectrum(rng, 4, 3)
    assert array_bits(traced(stack)) == array_bits(fn(stack))
    deeper = complex_spectrum(rng, 3, 2, 2)
    assert array_bits(tracer.trace(fn, fullgraph=True)(deeper)) == array_bits(fn(deeper))
    a = complex_spectrum(rng, 6)
    a[0, 2] += 3.0                 # (a pair in the strided view a[::2, ::2] too)
    a[2, 0] -= 3.0
    assert array_bits(traced(a.T)) == array_bits(fn(a.T))
    assert array_bits(traced(a[::2, ::2])) == array_bits(fn(a[::2, ::2]))
    ints = np.array([[0, -2, 1], [3, 1, 0], [1, 1, 2]])
    assert array_bits(tracer.trace(fn, fullgraph=True)(ints)) == array_bits(fn(ints))
    assert python_runs == []


@pytest.mark.parametrize("fn", [eig, eigvals])
def test_a_real_spectrum_has_numpys_dtype(fn, python_runs):
    """NumPy before 2.5 gives float64 where every eigenvalue is real: that call runs Python."""
    traced = tracer.trace(fn, fullgraph=True)
    rng = np.random.default_rng(2)
    b = rng.normal(size=(4, 4))
    always_complex = np.iscomplexobj(np.linalg.eigvals(np.eye(1)))     # NumPy 2.5 on
    for a in (b + b.T, np.triu(b), np.eye(3), np.array([[2.0]])):
        want = fn(a)
        assert array_bits(traced(a)) == array_bits(want)
        assert np.iscomplexobj(want[0] if isinstance(want, tuple) else want) == always_complex
    assert len(python_runs) == (0 if always_complex else 4)
    stack = np.stack([b + b.T, complex_spectrum(rng, 4)])      # one complex matrix: complex, compiled
    assert array_bits(traced(stack)) == array_bits(fn(stack))
    assert len(python_runs) == (0 if always_complex else 4)


def test_results_in_further_complex_arithmetic(python_runs):
    def spectral_radius(a):
        return np.max(np.abs(np.linalg.eigvals(a)))

    def residual(a):
        w, v = np.linalg.eig(a)
        return np.sum(v.real * w.real - v.imag * w.imag)

    rng = np.random.default_rng(3)
    for fn in (spectral_radius, residual):
        a = complex_spectrum(rng, 5)
        assert tracer.trace(fn)(a) == fn(a)


def test_numpys_errors():
    traced = tracer.trace(eig)
    bad = np.eye(3)
    bad[1, 2] = np.nan
    for a in (bad, np.full((2, 2), np.inf)):
        with pytest.raises(np.linalg.LinAlgError, match="Array must not contain infs or NaNs"):
            traced(a)
    with pytest.raises(np.linalg.LinAlgError, match="square"):
        traced(np.ones((2, 3)))
    with pytest.raises(np.linalg.LinAlgError, match="at least two-dimensional"):
        tracer.trace(eigvals)(np.ones(3))


def test_float32_is_refused_and_there_is_no_gradient():
    a = complex_spectrum(np.random.default_rng(4), 3)
    with pytest.raises(TracerError, match="float32"):
        tracer.trace(eigvals, fullgraph=True)(a.astype(np.float32))
    with pytest.raises(UnsupportedError, match="linalg_eig"):
        tracer.grad(lambda a: np.sum(np.linalg.eigvals(a).real))(a)
