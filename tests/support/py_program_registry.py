"""How the parts of the plain-Python program corpus (py_programs_a/b/c/d.py) register their programs."""
from __future__ import annotations


class Programs(list):
    """A part's `(name, fn, make_args)` entries; `@programs.register(make_args)` adds the decorated
    function (unchanged) with its example-arguments maker. Stacking the decorator registers the same
    function again with other arguments, under `name` (for example a case that raises)."""

    def register(self, make_args, name=None):
        def register(fn):
            self.append((name or fn.__name__, fn, make_args))
            return fn
        return register
