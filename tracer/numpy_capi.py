"""NumPy's C API, as compiled code reaches it: the functions of its C API table (the table C
extensions use through numpy/arrayobject.h; its slots are fixed across NumPy versions) and the
sort functions of a builtin dtype (PyArray_ArrFuncs, reached through that table in NumPy 2).

A leaf (it imports nothing of the tracer): codegen links compiled code against these addresses,
and the compile cache describes and finds them again in another process."""
from __future__ import annotations

import ctypes
import functools

GET_ARRFUNCS = 365            # _PyDataType_GetArrFuncs in NumPy 2's C API table


def numpy_api_function(index: int) -> int:
    """The address of function `index` of NumPy's C API table."""
    try:
        from numpy._core import _multiarray_umath as multiarray
    except ImportError:                      # NumPy 1.x
        from numpy.core import _multiarray_umath as multiarray
    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.restype, get_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    table = get_pointer(multiarray._ARRAY_API, None)
    return ctypes.c_void_p.from_address(table + ctypes.sizeof(ctypes.c_void_p) * index).value


@functools.cache
def arrfuncs(dtype_name: str) -> int | None:
    """The address of NumPy's PyArray_ArrFuncs of the builtin dtype `dtype_name` ("float64"...),
    or None before NumPy 2 (no _PyDataType_GetArrFuncs)."""
    import numpy as np
    if int(np.__version__.split(".")[0]) < 2:
        return None
    get = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.py_object)(numpy_api_function(GET_ARRFUNCS))
    return get(np.dtype(dtype_name))
