"""Pickling compiled functions: what a traced function (or grad, value_and_grad, vjp, vectorize of
one) becomes in a pickle, so that it can be called in another process.

Nothing compiled travels: a pickle holds the Python function and the options, and the receiving
process compiles on the first call, as it would for the function written there.

- A traced function bound to its own name in an importable module pickles by reference, like a
  plain module-level function: the receiving process imports the module and takes its function.
- Anything else (a closure, a lambda, `grad(f)`, a function of `__main__` under cloudpickle)
  pickles as a recipe: the Python function, the transform (`tracer.gradients`), the options. The
  pickler carries the Python function as it carries any function: the standard `pickle` by
  reference (for a closure or a lambda, the error it gives for the plain function), cloudpickle
  by value. The
  receiving process makes the compiled function once per Python function and options: a worker
  that receives it with every task compiles it once, if the function itself is by reference.

A Python function shadowed at its name by its traced function (`@trace def f`) is pickled as
that traced function (`function_reference`): pickle's lookup of `module.f` finds the traced one.
"""
from __future__ import annotations

import copyreg
import os
import sys
import types

from tracer import native

_TRACER_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def reduce_dispatcher(d):
    """The pickle of a traced function (a `tracer.native.Dispatcher`): its global name, or the
    recipe `rebuild_dispatcher` makes it again from."""
    py_func = getattr(d, "py_func", None)
    if py_func is None:         # an internal dispatcher, not one `trace` or `grad` returned
        raise TypeError(f"cannot pickle '{type(d).__module__}.{type(d).__qualname__}' object")
    if _pickled_by_reference(d, d.__module__, py_func.__qualname__):
        return py_func.__qualname__     # pickle saves it as module.qualname
    return rebuild_dispatcher, (function_reference(py_func), d.transform, d.fuse_fma, d.max_specializations,
                                d.fullgraph, d.parallel, getattr(d, "cache", False))


def rebuild_dispatcher(source, transform, fuse_fma: bool, max_specializations: int, fullgraph: bool,
                       parallel: bool = False, cache: bool = False):
    """The traced function of `source` (a Python function, or the traced function that stands
    for it) after `transform`: made once per function and options in this process."""
    from tracer.api import made_once, make_dispatcher
    py_func = python_function(source)
    # the transform comes as a new object with each pickle: its description (kinds and argnums)
    # tells which compiled function it is
    key = ("unpickled", None if transform is None else transform.describe(""), fuse_fma, max_specializations,
           fullgraph, parallel, cache)
    return made_once(py_func, key, lambda: make_dispatcher(py_func, transform, fuse_fma, max_specializations,
                                                           fullgraph=fullgraph, parallel=parallel, cache=cache))


def rebuild_transform(cls, source, inner, *options):
    """A transform of `tracer.gradients` (its `__reduce__`) made again for its Python function."""
    return cls(python_function(source), inner, *options)


def rebuild_vectorized(fn, fuse_fma: bool, parallel: bool = False):
    """An unpickled `vectorize(fn)` (its `__reduce__`): made once per function and options in
    this process."""
    # the public function, which tracer/__init__.py loads from tracer.vectorized on first use
    return sys.modules["tracer"].vectorize(fn, fuse_fma=fuse_fma, parallel=parallel)


def function_reference(fn):
    """What stands for the Python function `fn` in a pickle: the traced function bound to fn's
    name in its module, if fn is its `py_func` and the pickler takes it by reference (pickle could
    not name fn itself, its name being taken); otherwise fn, which the pickler carries as it
    carries any function. Anything but a Python function is itself."""
    if not isinstance(fn, types.FunctionType):
        return fn
    bound = _bound_at(fn.__module__, fn.__qualname__)
    if bound is not fn and getattr(bound, "py_func", None) is fn and _pickled_by_reference(
            bound, fn.__module__, fn.__qualname__):
        return bound
    return fn


def python_function(source):
    """The Python function that `function_reference` stood for."""
    return getattr(source, "py_func", source)


def _bound_at(module_name: str | None, qualname: str):
    """The object at `module.qualname` now, or None."""
    obj = sys.modules.get(module_name) if module_name else None
    for part in qualname.split("."):
        if part == "<locals>" or obj is None:
            return None
        obj = getattr(obj, part, None)
    return obj


def _pickled_by_reference(obj, module_name: str | None, qualname: str) -> bool:
    """Whether `obj` is at `module.qualname` and the pickler at work saves it by that name: not
    cloudpickle for a module it pickles by value (`__main__`, those given to
    `register_pickle_by_value`), whose functions the receiving process may not have."""
    if _bound_at(module_name, qualname) is not obj:
        return False
    cloudpickle = _cloudpickle_at_work()
    if cloudpickle is None:
        return True
    by_value = {"__main__", *cloudpickle.list_registry_pickle_by_value()}
    return not any(module_name == name or module_name.startswith(name + ".") for name in by_value)


def _cloudpickle_at_work():
    """cloudpickle's module (cloudpickle, or a copy of it such as Ray's) if the pickler running
    this reduction is its `Pickler`, else None. The C pickler calls a reducer with no frame of its
    own between: the nearest frame outside `tracer` is the pickler's `dump` (cloudpickle's is
    Python), or the caller of `pickle.dumps`."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_TRACER_DIR):
        frame = frame.f_back
    pickler = frame.f_locals.get("self") if frame is not None else None
    for cls in type(pickler).__mro__:
        if cls.__name__ == "Pickler" and cls.__module__.rpartition(".")[2] == "cloudpickle":
            return sys.modules[cls.__module__]
    return None


copyreg.pickle(native.Dispatcher, reduce_dispatcher)
