"""np.array / np.asarray of a list whose length is known only at run time (a comprehension or
appends in a loop: tracer.frontend.dynlists.DynList) of floats, ints or bools: compiled whole,
NumPy's dtype and values."""
from __future__ import annotations

import numpy as np
import pytest

from tracer import trace


def bin_means(x, edges):
    idx = np.digitize(x, edges[1:-1])
    return np.array([x[idx == b].mean() for b in range(len(edges) - 1)])


def counts(x, n):
    return np.array([int((x < k).sum()) for k in range(n)])


def flags(x, n):
    out = []
    for k in range(n):
        out.append(bool(x[k] > 0.0))
    return np.asarray(out)


def as_floats(x, n):
    return np.array([int(v) for v in x[:n]], dtype=np.float64)


@pytest.mark.parametrize("n", [1, 3, 17])
def test_arrays_of_run_time_lists_are_numpys(n):
    rng = np.random.default_rng(n)
    x = rng.uniform(0.0, 10.0, 200)
    edges = np.linspace(0.0, 10.0, n + 1)
    cases = [(bin_means, (x, edges)), (counts, (x, n)), (flags, (x - 5.0, n)), (as_floats, (x, n))]
    for fn, args in cases:
        got, want = trace(fn, fullgraph=True)(*args), fn(*args)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)


def test_an_empty_run_time_list_is_numpys():
    x = np.arange(5.0)
    got = trace(counts)(x, 0)
    assert got.dtype == counts(x, 0).dtype and got.shape == (0,)
