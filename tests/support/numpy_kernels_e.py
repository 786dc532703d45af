"""NumPy kernels, part E: complex numbers as signal processing, physics and numerics use them
(Fourier sums, I/Q demodulation, AC circuits, wave functions, fractals, polynomial roots of
unity, Hermitian matrices, complex64 radio samples). Assembled with parts A to D in
`numpy_kernels.py`.

Each kernel is plain NumPy code written the way scientific Python code is written (no tracer
import, nothing shaped around what the tracer compiles), registered with `@kernel(make_args)`:
`make_args()` gives a fresh tuple of deterministic example arguments on every call.
"""
from __future__ import annotations

import numpy as np
from kernel_registry import Kernels, rng

KERNELS = Kernels()
kernel = KERNELS.register


def _signal(n, seed):
    t = np.arange(n) / n
    return np.sin(2 * np.pi * 5 * t) + 0.5 * np.cos(2 * np.pi * 12 * t) + 0.1 * rng(seed).standard_normal(n)


def _complex(shape, seed, dtype=np.complex128):
    g = rng(seed)
    return (g.standard_normal(shape) + 1j * g.standard_normal(shape)).astype(dtype)


@kernel(lambda: (_signal(64, 300),))
def naive_dft(x):
    """The discrete Fourier transform as a matrix product, and the power spectrum."""
    n = x.shape[0]
    k = np.arange(n)
    basis = np.exp(-2j * np.pi * np.outer(k, k) / n)
    spectrum = basis @ x
    power = np.abs(spectrum) ** 2 / n
    return spectrum, power


@kernel(lambda: (_signal(200, 301), 5.0, 200.0))
def goertzel_bin_power(x, freq, rate):
    """The power of one frequency bin: a single-bin DFT."""
    n = np.arange(x.shape[0])
    phasor = np.exp(-2j * np.pi * freq * n / rate)
    coefficient = np.sum(x * phasor)
    return np.abs(coefficient) ** 2 / x.shape[0], np.angle(coefficient)


@kernel(lambda: (_signal(256, 302), 5.0, 256.0, 16))
def iq_demodulate(x, carrier, rate, window):
    """Mix down to baseband, low-pass with a moving average, and take amplitude and phase."""
    t = np.arange(x.shape[0]) / rate
    mixed = x * np.exp(-2j * np.pi * carrier * t)
    c = np.cumsum(mixed)
    smooth = (c[window:] - c[:-window]) / window
    return 2 * np.abs(smooth), np.angle(smooth)


@kernel(lambda: (np.linspace(10.0, 1000.0, 50), 100.0, 0.05, 2e-5, 230.0))
def rlc_frequency_response(freqs, r, inductance, capacitance, volts):
    """A series RLC circuit: impedance, current, real power and phase at each frequency."""
    w = 2 * np.pi * freqs
    z = r + 1j * w * inductance + 1 / (1j * w * capacitance)
    current = volts / z
    power = np.real(volts * np.conj(current))
    return np.abs(current), power, np.angle(z, deg=True)


@kernel(lambda: (np.linspace(-10, 10, 128), 0.05, 40))
def wavepacket_phase_evolution(x, dt, steps):
    """A Gaussian wave packet in a harmonic potential, evolved by the potential's phase factor
    with renormalization each step; returns the density and the mean position."""
    psi = np.exp(-(x - 1.0) ** 2) * np.exp(2j * x)
    potential = 0.5 * x ** 2
    dx = x[1] - x[0]
    for _ in range(steps):
        psi = psi * np.exp(-1j * potential * dt)
        psi = psi / np.sqrt(np.sum(np.abs(psi) ** 2) * dx)
    density = np.abs(psi) ** 2
    return density, np.sum(x * density) * dx


@kernel(lambda: (np.linspace(-2.0, 0.6, 40), np.linspace(-1.2, 1.2, 30), 40))
def mandelbrot_escape(xs, ys, max_iter):
    """Escape-time counts of the Mandelbrot set on a grid."""
    c = xs[None, :] + 1j * ys[:, None]
    z = np.zeros_like(c)
    counts = np.zeros(c.shape, dtype=np.int64)
    for _ in range(max_iter):
        inside = np.abs(z) <= 2.0
        z = np.where(inside, z * z + c, z)
        counts += inside
    return counts


@kernel(lambda: (rng(303).standard_normal(7), 16))
def polynomial_on_unit_circle(coefficients, n):
    """A polynomial (Horner) at the n-th roots of unity, and its largest modulus there."""
    roots = np.exp(2j * np.pi * np.arange(n) / n)
    p = np.zeros(n, dtype=complex)
    for c in coefficients:
        p = p * roots + c
    return p, np.max(np.abs(p))


@kernel(lambda: (_complex((12, 12), 304), _complex(12, 305), 30))
def hermitian_power_iteration(a, v, iterations):
    """The dominant eigenvalue of the Hermitian part of a: power iteration and Rayleigh quotient."""
    h = (a + a.conj().T) / 2
    for _ in range(iterations):
        v = h @ v
        v = v / np.sqrt(np.vdot(v, v).real)
    return np.vdot(v, h @ v).real


@kernel(lambda: (_complex(500, 306, np.complex64), _complex(500, 307, np.complex64)))
def cross_correlation_lag0_complex64(samples, reference):
    """Radio samples stored as complex64: the normalized correlation with a reference and the
    per-sample power in dB."""
    product = samples * np.conj(reference)
    power_db = 10 * np.log10(np.abs(samples) ** 2 + 1e-12)
    norm = np.sqrt(np.sum(np.abs(samples) ** 2) * np.sum(np.abs(reference) ** 2))
    return np.abs(product.sum()) / norm, power_db
