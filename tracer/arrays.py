"""NumPy arrays in traced code: what the interpreter does with a `TracedArray`.

So far, reading float64 and int64 arrays: elements become `load` ops, sizes `dim` ops (run-time
values: a new size does not recompile). Errors are NumPy's: too many indices and non-integer
indices raise IndexError at trace time; an index out of bounds falls back to Python at run time,
which raises NumPy's IndexError with its message.

An element is a NumPy scalar (np.float64, np.int64). Its arithmetic is Python's float and int
arithmetic wherever both succeed with the same value; where they differ, Python's raises
(1.0 / 0.0, an int past 64 bits, a complex power) and NumPy's gives inf, nan or a wrapped int.
So a compiled function with array arguments runs the Python function for any call where an op
fails (codegen.entry): that call gets NumPy's exact result, warnings included. Not yet exact:
results come back as Python floats and ints (np.float64 and np.int64 are subclasses, equal in
value), and np.int64 compared with a float compares exactly where NumPy rounds the int first.
"""
from __future__ import annotations

from .builder import is_traced
from .ir import BOOL, F64, I64, NUMPY_DTYPE_NAMES
from .objects import TracedArray

READABLE_DTYPES = (F64, I64)   # bool arrays wait for NumPy's bool arithmetic (not Python's)


def is_ndarray(obj) -> bool:
    """Whether `obj` is exactly a numpy.ndarray (without importing numpy for programs that never
    use it)."""
    return type(obj).__name__ == "ndarray" and type(obj).__module__ == "numpy"


def readable_dtype(array):
    """The IR dtype of a NumPy array traced code can read (builtin descriptor, native byte
    order), or None."""
    import numpy
    for t in READABLE_DTYPES:
        if array.dtype is numpy.dtype(NUMPY_DTYPE_NAMES[t]):
            return t
    return None
SUPPORTED = ("element reads (x[i], x[i, j], x[i][j]), `for v in x`, len(x), x.shape, x.ndim, x.size "
             "and x.dtype")


def unsupported(tracer, what: str):
    return tracer.error(f"{what} of a NumPy array is not supported yet (traced code supports {SUPPORTED})")


def _index(tracer, i):
    """An index as an i64 value or int; NumPy's IndexError for anything else."""
    b = tracer.builder
    if type(i) is int:
        return b.const(i)
    if is_traced(i) and i.type == I64:
        return i
    if i is None or isinstance(i, (slice, type(Ellipsis))):
        raise unsupported(tracer, "slicing")
    if type(i) is bool or (is_traced(i) and i.type == BOOL):
        raise unsupported(tracer, "indexing with a bool")
    raise IndexError("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and "
                     "integer or boolean arrays are valid indices")


def subscript(tracer, array: TracedArray, index):
    indices = index if type(index) is tuple else (index,)
    if len(indices) > array.rank:
        rank = array.value.type.rank
        raise IndexError(f"too many indices for array: array is {rank}-dimensional, "
                         f"but {len(array.prefix) + len(indices)} were indexed")
    full = array.prefix + tuple(_index(tracer, i) for i in indices)
    if len(full) < array.value.type.rank:
        _check_bounds(tracer, array, full)
        return TracedArray(tracer, array.value, full)
    return tracer.builder.emit("load", (array.value, *full))


def _check_bounds(tracer, array: TracedArray, indices: tuple) -> None:
    """`W[j]` reads nothing yet, but NumPy checks j there: out of bounds, the call runs the
    Python function, which raises NumPy's IndexError (a full `load` checks its own indices)."""
    from .branches import NeedsPython
    b = tracer.builder
    for axis in range(len(array.prefix), len(indices)):
        i, n = indices[axis], b.emit("dim", (array.value,), axis=axis)
        below = b.compare("lt", i, b.binary("sub", b.const(0), n))
        out = b.emit("select", (below, b.const(True), b.compare("ge", i, n)))
        b.raise_if(out, NeedsPython("index out of bounds: NumPy raises its own IndexError"))


def length(tracer, array: TracedArray):
    if array.rank == 0:
        raise TypeError("len() of unsized object")
    return tracer.builder.emit("dim", (array.value,), axis=len(array.prefix))


def attribute(tracer, array: TracedArray, name: str):
    b = tracer.builder
    first = len(array.prefix)
    if name == "shape":
        return tuple(b.emit("dim", (array.value,), axis=a) for a in range(first, array.value.type.rank))
    if name == "ndim":
        return array.rank
    if name == "size":
        size = b.const(1)
        for a in range(first, array.value.type.rank):
            size = b.binary("mul", size, b.emit("dim", (array.value,), axis=a))
        return size
    if name == "dtype":
        import numpy
        return numpy.dtype(NUMPY_DTYPE_NAMES[array.value.type.dtype])
    raise unsupported(tracer, f"the attribute .{name}")


def iterate(tracer, array: TracedArray):
    """`for v in x`: a loop over the first axis (elements, or rows read element by element)."""
    from .branches import RangeIter
    if array.rank == 0:
        raise TypeError("iteration over a 0-d array")
    b = tracer.builder
    return RangeIter(0, length(tracer, array), 1, b.const(0), array)
