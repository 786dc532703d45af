"""Complex arrays as their parts: NumPy's complex64 and complex128 are storage dtypes only.

    complex_parts(z)        a view of complex array z[...] as a float array x[2, ...]: x[0] are
                            the real parts, x[1] the imaginary ones (f64 parts for c128, f32
                            for c64); the same memory, a first axis of stride 8 or 4
    complex_from_parts(x)   the complex array whose parts are x[..., 2] (a view: x's last axis
                            must be contiguous, as it is in an array traced code makes)

Traced code computes on the two part arrays (tracer.frontend.complex_arrays); these two ops are
where complex arrays come in (arguments) and go out (results, stores).
"""
from __future__ import annotations

from tracer.ir.registry import define
from tracer.ir.types import C64, C128, COMPLEX, F32, F64, PART_TYPE, ArrayType


def _parts_type(t, a):
    if len(t) != 1 or not isinstance(t[0], ArrayType) or t[0].dtype not in COMPLEX:
        raise TypeError(f"complex_parts takes a complex array, not {', '.join(map(str, t))}")
    return ArrayType(PART_TYPE[t[0].dtype], (2,) + t[0].shape)


def _from_parts_type(t, a):
    x = t[0] if len(t) == 1 else None
    if not isinstance(x, ArrayType) or x.dtype not in (F32, F64) or x.rank < 1 or x.shape[-1] != 2:
        raise TypeError(f"complex_from_parts takes a float array whose last axis has size 2, not "
                        f"{', '.join(map(str, t))}")
    return ArrayType(C128 if x.dtype == F64 else C64, x.shape[:-1])


def _parts(z):
    import numpy
    return numpy.stack([z.real, z.imag])


def _from_parts(x):
    return x[..., 0] + 1j * x[..., 1] if x.dtype.itemsize == 8 else (x[..., 0] + 1j * x[..., 1]).astype("complex64")


define("complex_parts", "a view of a complex array as its parts: x[0] real, x[1] imaginary",
       _parts_type, _parts)
define("complex_from_parts", "a view of parts x[..., 2] (last axis contiguous) as a complex array",
       _from_parts_type, _from_parts)
