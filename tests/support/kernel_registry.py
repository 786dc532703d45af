"""How the parts of the NumPy kernel corpus (numpy_kernels_a/b/c.py) register their kernels."""
from __future__ import annotations

import numpy as np


class Kernels(list):
    """A part's `(fn, make_args)` pairs; `@kernels.register(make_args)` adds the decorated
    function (unchanged) with its example-arguments maker."""

    def register(self, make_args):
        def register(fn):
            self.append((fn, make_args))
            return fn
        return register


def rng(seed):
    return np.random.default_rng(seed)
