"""np.split and friends, np.column_stack, np.logspace and np.einsum in traced code, against NumPy:
the same pieces (views along the axis, cut where NumPy cuts, also for sizes known only at run
time), the same shapes and dtypes, values within 1e-13 where a sum or a power is computed.
"""
from __future__ import annotations

import numpy as np
import pytest

import tracer

RTOL = 1e-13


def same(got, expected, rtol=0.0) -> bool:
    if isinstance(expected, (list, tuple)):
        return type(got) is type(expected) and len(got) == len(expected) and all(
            same(g, e, rtol) for g, e in zip(got, expected))
    if isinstance(expected, np.ndarray):
        return (isinstance(got, np.ndarray) and got.dtype == expected.dtype and got.shape == expected.shape
                and np.allclose(got, expected, rtol=rtol, atol=0.0))
    return type(got) is type(expected) and abs(got - expected) <= rtol * abs(expected)


def check(fn, *args, rtol=0.0):
    try:
        expected = fn(*args)
    except Exception as exc:    # the exception is compared
        with pytest.raises(type(exc), match=str(exc)[:30].replace("(", r"\(").replace(")", r"\)")):
            tracer.trace(fn, fullgraph=True)(*args)
        return
    got = tracer.trace(fn, fullgraph=True)(*args)
    assert same(got, expected, rtol), (got, expected)


SPLITS = {
    "split_sections": lambda a: np.split(a, 2),
    "split_indices": lambda a: np.split(a, [1, 3]),
    "array_split_uneven": lambda a: np.array_split(a, 3),
    "array_split_axis1": lambda a: np.array_split(a.reshape(2, -1), 3, axis=1),
    "hsplit": lambda a: np.hsplit(a.reshape(2, -1), 2),
    "vsplit": lambda a: np.vsplit(a.reshape(2, -1), 2),
    "column_stack": lambda a: np.column_stack([a, a * 2.0]),
    "column_stack_2d": lambda a: np.column_stack([a.reshape(-1, 2), a.reshape(-1, 2)]),
    "pieces_used": lambda a: sum(float(p.sum()) * (k + 1) for k, p in enumerate(np.array_split(a, 4))),
}


@pytest.mark.parametrize("n", [8, 12, 10])
@pytest.mark.parametrize("fn", list(SPLITS.values()), ids=list(SPLITS))
def test_splits(fn, n):
    check(fn, np.arange(float(n)))


def test_split_sizes_known_at_run_time_share_one_compile():
    f = tracer.trace(lambda a: np.array_split(a, 3), fullgraph=True)
    for n in (9, 10, 11, 2):
        a = np.arange(float(n))
        assert same(f(a), np.array_split(a, 3))
    g = tracer.trace(lambda a: np.split(a, 2), fullgraph=True)
    g(np.arange(4.0))
    with pytest.raises(ValueError, match="array split does not result in an equal division"):
        g(np.arange(5.0))


LOGSPACES = {
    "decades": lambda s: np.logspace(0.0, 3.0, 7) * s,
    "base2": lambda s: np.logspace(-1, 2, 5, base=2.0) + s,
    "no_endpoint": lambda s: np.logspace(0, 1, 4, endpoint=False) + s,
}


@pytest.mark.parametrize("fn", list(LOGSPACES.values()), ids=list(LOGSPACES))
def test_logspace(fn):
    check(fn, 1.5, rtol=RTOL)


rng = np.random.default_rng(0)
A, B, V = rng.standard_normal((4, 5)), rng.standard_normal((5, 3)), rng.standard_normal(5)
C, D = rng.standard_normal((2, 4, 5)), rng.standard_normal((2, 5, 3))
EINSUMS = [("ij,jk->ik", A, B), ("ij,jk", A, B), ("ij->ji", A), ("ij->", A), ("i,i->", V, V), ("i,i", V, V),
           ("ij,j->i", A, V), ("i,j->ij", V, V), ("bij,bjk->bik", C, D), ("ij,ij->i", A, A), ("ij", A), ("ji", A),
           ("ijk->k", C), ("ij,ik->jk", A, A), ("ij,jk->ik", A.astype(np.int64), B.astype(np.int64))]


@pytest.mark.parametrize("case", EINSUMS, ids=[c[0] for c in EINSUMS])
def test_einsum(case):
    subscripts, *operands = case
    check(lambda *ops: np.einsum(subscripts, *ops), *operands, rtol=RTOL)


def test_einsum_errors():
    check(lambda a: np.einsum("ij,jk->ik", a), A)                    # fewer operands than terms
    check(lambda a: np.einsum("ijk->i", a), A)                        # too many subscripts
    with pytest.raises(tracer.UnsupportedError, match="diagonal"):
        tracer.trace(lambda a: np.einsum("ii->i", a), fullgraph=True)(np.eye(3))
    with pytest.raises(tracer.UnsupportedError, match=r"'\.\.\.'"):
        tracer.trace(lambda a: np.einsum("...i->...", a), fullgraph=True)(A)
