"""A corpus of NumPy kernels in the style of real scientific Python code, for
`tests/api/test_numpy_kernel_corpus.py` and `examples/numpy_corpus_report.py`.

`KERNELS` lists `(fn, make_args)`: `fn` is a plain NumPy function (distances and norms, stencils,
image filters, statistics, histograms, physics steps, small solvers, signal processing, masks and
grouping), `make_args()` a fresh tuple of deterministic example arguments. The kernels use what
such code uses, whether or not the tracer compiles it yet; they are in `numpy_kernels_a.py`
(distances to statistics), `numpy_kernels_b.py` (physics to grouping), `numpy_kernels_c.py`
(models and numerical methods; float32 and int64 data) and `numpy_kernels_d.py` (images, audio
and indices in NumPy's narrow dtypes, NumPy scalars, and np.linalg).
"""
from __future__ import annotations

import numpy_kernels_a
import numpy_kernels_b
import numpy_kernels_c
import numpy_kernels_d
import numpy_kernels_e

KERNELS = numpy_kernels_a.KERNELS + numpy_kernels_b.KERNELS + numpy_kernels_c.KERNELS + numpy_kernels_d.KERNELS + numpy_kernels_e.KERNELS

_names = [fn.__name__ for fn, _ in KERNELS]
assert len(set(_names)) == len(_names), "two kernels share a name"
