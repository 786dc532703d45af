"""Whole-array NumPy code compiled by the tracer: every function of `tests/support/array_corpus.py`.

For each corpus entry and each seed (the seed also draws the shapes):
- `trace(fn)` against the plain function run by NumPy, twice (the call that compiles and a native
  one): results within 1e-12 (the compiled code may sum in another order), arrays of NumPy's
  type, dtype and shape, tuples element by element, and arguments the function mutates equal to
  what NumPy leaves in them; once more (seed 0) on arguments that are not C-contiguous;
- entries with grad_argnums: `grad(fn, argnums)` against central finite differences of the plain
  function, element by element over array arguments;
- with JAX installed: the same gradient from `jax.grad` of the function re-bound to `jax.numpy`.
"""
from __future__ import annotations

import copy
import types
import zlib

import array_corpus
import numpy as np
import pytest
from array_corpus import CORPUS

from tracer import grad, trace

SEEDS = (0, 1, 2)
RTOL = ATOL = 1e-12
FD_STEP, FD_RTOL, FD_ATOL = 1e-6, 1e-6, 1e-6
JAX_RTOL, JAX_ATOL = 1e-10, 1e-12

# (function name, seed or None for every seed) -> reason: not compiled yet (a clear UnsupportedError)
_STORE_GRAD = "not yet: gradients through writes into an array (out[i] = v) are an UnsupportedError"
XFAIL: dict = {}
GRAD_XFAIL = {
    ("conv1d_energy", None): _STORE_GRAD,
}
# functions JAX cannot run as written (they assign into arrays)
NOT_FOR_JAX = {"conv1d_energy"}


def _cases(entries, xfail):
    for fn, factory, argnums in entries:
        for seed in SEEDS:
            marks = ()
            reason = xfail.get((fn.__name__, seed)) or xfail.get((fn.__name__, None))
            if reason:
                marks = (pytest.mark.xfail(reason=reason, strict=True),)
            yield pytest.param(fn, factory, argnums, seed, id=f"{fn.__name__}-{seed}", marks=marks)


VALUE_CASES = list(_cases(CORPUS, XFAIL))
GRAD_CASES = list(_cases([e for e in CORPUS if e[2] is not None], GRAD_XFAIL))

_COMPILED: dict = {}


def compiled(fn, kind="trace", argnums=None):
    """One compiled callable per function and transform, shared by the seeds."""
    key = (fn, kind, argnums)
    if key not in _COMPILED:
        _COMPILED[key] = trace(fn) if kind == "trace" else grad(fn, argnums=argnums)
    return _COMPILED[key]


def draw(fn, factory, seed):
    """The arguments for one case: the seed mixed with the name, so shapes vary between functions."""
    return factory(np.random.default_rng([seed, zlib.crc32(fn.__name__.encode())]))


def check_same(got, expected, where="result"):
    """Compiled vs NumPy: same structure and types, values within RTOL/ATOL."""
    if isinstance(expected, tuple):
        assert isinstance(got, tuple) and len(got) == len(expected), f"{where}: {got!r} vs {expected!r}"
        for k, (g, e) in enumerate(zip(got, expected)):
            check_same(g, e, f"{where}[{k}]")
        return
    if expected is None:
        assert got is None, f"{where}: {got!r} where NumPy gives None"
        return
    if isinstance(expected, np.ndarray):
        assert isinstance(got, np.ndarray), f"{where}: {type(got).__name__} where NumPy gives an ndarray"
        assert got.dtype == expected.dtype, f"{where}: dtype {got.dtype} vs {expected.dtype}"
        assert got.shape == expected.shape, f"{where}: shape {got.shape} vs {expected.shape}"
    elif isinstance(expected, (bool, np.bool_)):
        assert isinstance(got, (bool, np.bool_)), f"{where}: {type(got).__name__} vs {type(expected).__name__}"
    elif isinstance(expected, (int, np.integer)):
        assert isinstance(got, (int, np.integer)) and not isinstance(got, (bool, np.bool_)), \
            f"{where}: {type(got).__name__} vs {type(expected).__name__}"
    else:
        assert isinstance(expected, float), f"{where}: unexpected NumPy result {expected!r}"
        assert isinstance(got, float), f"{where}: {type(got).__name__} vs {type(expected).__name__}"
    np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL, err_msg=where)


def fresh(args, layout=None):
    """Copies of `args`; arrays in `layout` (a function of an array) when given."""
    return tuple(layout(a.copy()) if layout and isinstance(a, np.ndarray) else copy.deepcopy(a) for a in args)


def check_call(compiled_fn, fn, args, layout=None):
    """One compiled call against NumPy on copies of `args`: result and what it leaves in them."""
    numpy_args, traced_args = fresh(args), fresh(args, layout)
    with np.errstate(all="ignore"):
        expected = fn(*numpy_args)
    got = compiled_fn(*traced_args)
    check_same(got, expected)
    for k, (g, e) in enumerate(zip(traced_args, numpy_args)):
        if isinstance(e, np.ndarray):
            np.testing.assert_allclose(g, e, rtol=RTOL, atol=ATOL, err_msg=f"argument {k} after the call")


def mutates(fn, args) -> bool:
    after = copy.deepcopy(args)
    with np.errstate(all="ignore"):
        fn(*after)
    return any(isinstance(a, np.ndarray) and not np.array_equal(a, b, equal_nan=True) for a, b in zip(after, args))


@pytest.mark.parametrize("fn, factory, argnums, seed", VALUE_CASES)
def test_compiled_matches_numpy(fn, factory, argnums, seed):
    """Twice: the call that may compile and a native one. A function that updates its arguments
    gets a fresh trace, so that its first call always compiles."""
    args = draw(fn, factory, seed)
    compiled_fn = trace(fn) if mutates(fn, args) else compiled(fn)
    check_call(compiled_fn, fn, args)
    check_call(compiled_fn, fn, args)


def strided(a):
    """The same values in another layout: a column-major matrix, a vector with stride 2."""
    return np.asfortranarray(a) if a.ndim == 2 else np.repeat(a, 2)[::2]


@pytest.mark.parametrize("fn, factory, argnums, seed", [c for c in VALUE_CASES if c.values[3] == 0])
def test_compiled_matches_numpy_on_views(fn, factory, argnums, seed):
    """Array arguments that are not C-contiguous (updates must land in the caller's view)."""
    args = draw(fn, factory, seed)
    compiled_fn = trace(fn) if mutates(fn, args) else compiled(fn)
    check_call(compiled_fn, fn, args, strided)
    check_call(compiled_fn, fn, args, strided)


def central_differences(fn, args, k):
    """d fn / d args[k] by central differences (an array of them for an array argument)."""
    def at(value):
        shifted = list(copy.deepcopy(args))
        shifted[k] = value
        return float(fn(*shifted))

    x = args[k]
    if not isinstance(x, np.ndarray):
        h = FD_STEP * max(1.0, abs(x))
        return (at(x + h) - at(x - h)) / (2 * h)
    out = np.empty_like(x)
    for idx in np.ndindex(x.shape):
        h = FD_STEP * max(1.0, abs(x[idx]))
        up, down = x.copy(), x.copy()
        up[idx] += h
        down[idx] -= h
        out[idx] = (at(up) - at(down)) / (2 * h)
    return out


def check_gradient(got, expected, k, rtol, atol):
    if isinstance(expected, np.ndarray):
        assert isinstance(got, np.ndarray) and got.dtype == np.float64 and got.shape == expected.shape, \
            f"gradient {k}: {got!r}"
    else:
        assert isinstance(got, float), f"gradient {k}: {type(got).__name__}"
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, err_msg=f"gradient for argument {k}")


@pytest.mark.parametrize("fn, factory, argnums, seed", GRAD_CASES)
def test_gradient_matches_finite_differences(fn, factory, argnums, seed):
    args = draw(fn, factory, seed)
    got = compiled(fn, "grad", argnums)(*copy.deepcopy(args))
    assert isinstance(got, tuple) and len(got) == len(argnums)
    for k, g in zip(argnums, got):
        check_gradient(g, central_differences(fn, args, k), k, FD_RTOL, FD_ATOL)


# ------------------------------------------------------------------------------ JAX
def jax_version(fn, jnp):
    """fn and every corpus function it calls, re-bound to globals whose `np` is jax.numpy."""
    namespace = dict(vars(array_corpus), np=jnp)
    for name, value in list(namespace.items()):
        if isinstance(value, types.FunctionType) and value.__module__ == array_corpus.__name__:
            namespace[name] = types.FunctionType(value.__code__, namespace, name, value.__defaults__,
                                                 value.__closure__)
    return namespace[fn.__name__]


@pytest.mark.parametrize("fn, factory, argnums, seed", GRAD_CASES)
def test_gradient_matches_jax(fn, factory, argnums, seed):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    if fn.__name__ in NOT_FOR_JAX:
        pytest.skip("assigns into an array")
    args = draw(fn, factory, seed)
    expected = jax.grad(jax_version(fn, jax.numpy), argnums=argnums)(*copy.deepcopy(args))
    got = compiled(fn, "grad", argnums)(*copy.deepcopy(args))
    for k, g, e in zip(argnums, got, expected):
        e = np.asarray(e) if isinstance(args[k], np.ndarray) else float(e)
        check_gradient(g, e, k, JAX_RTOL, JAX_ATOL)
