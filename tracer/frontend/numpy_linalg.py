"""`np.linalg` in traced code: solve, inv, det, slogdet, cholesky, eigh, eigvalsh, qr, svd and lstsq, each one op
(tracer.ir.linalg_ops) that calls the LAPACK routine NumPy calls, from NumPy's own LAPACK, so the
results are NumPy's bit for bit. (`np.linalg.norm` is in numpy_stats.)

They take float64 matrices (int and bool ones are converted to float64, as NumPy does); stacks
of matrices, float32 (NumPy computes that in single precision) and a NumPy without its bundled
64-bit-integer OpenBLAS are refused clearly. A matrix whose sizes the trace knows and that is not
square is NumPy's LinAlgError at trace time; a singular one (solve, inv), or one that is not
positive definite (cholesky), makes the call run the Python function, which raises NumPy's
LinAlgError, as does an SVD that does not converge. `slogdet`, `eigh`, `qr` and `svd` return plain
tuples where NumPy returns named tuples (unpacking them is the same).
"""
from __future__ import annotations

from tracer.frontend import numpy_in_python
from tracer.frontend.arrays import convert, wrap
from tracer.frontend.builder import is_traced
from tracer.frontend.numpy_more import as_array, numpy_function
from tracer.ir import F32, F64, FLOATS, I64
from tracer.ir.linalg_ops import lapack_library


def _matrix(tracer, x, what: str, square: bool = True):
    """x as a float64 matrix value (NumPy's checks of its rank, and squareness)."""
    if lapack_library() is None:
        raise tracer.error(f"{what}: this NumPy does not bundle a 64-bit-integer OpenBLAS to call")
    return _float64(tracer, _checked_matrix(tracer, x, what, square).value, what)


def _checked_matrix(tracer, x, what: str, square: bool):
    """x as an array, with NumPy's checks that it is a matrix (square: and square)."""
    import numpy
    a = as_array(tracer, x, what)
    if a.rank < 2:
        raise numpy.linalg.LinAlgError(f"{a.rank}-dimensional array given. Array must be at least "
                                       f"two-dimensional")
    if a.rank > 2:
        raise tracer.error(f"{what} of a stack of matrices is not supported yet")
    rows, cols = a.type.shape
    if square and rows is not None and cols is not None and rows != cols:
        raise numpy.linalg.LinAlgError("Last 2 dimensions of the array must be square")
    return a


def _float64(tracer, v, what: str):
    if v.type.dtype == F32 or v.type.dtype in FLOATS and v.type.dtype != F64:
        raise tracer.error(f"{what} of a {'float32' if v.type.dtype == F32 else 'float16'} array is not "
                           f"supported yet (NumPy computes it in single precision)")
    return convert(tracer, v, F64)


@numpy_function("linalg.solve", array_result=True)
def solve(tracer, a, b):
    m = _matrix(tracer, a, "np.linalg.solve")
    rhs = as_array(tracer, b, "np.linalg.solve")
    if rhs.rank not in (1, 2):
        raise tracer.error("np.linalg.solve with a stack of right-hand sides is not supported yet")
    return wrap(tracer, tracer.builder.emit("linalg_solve", (m, _float64(tracer, rhs.value, "np.linalg.solve"))))


@numpy_function("linalg.inv", array_result=True)
def inv(tracer, a):
    return wrap(tracer, tracer.builder.emit("linalg_inv", (_matrix(tracer, a, "np.linalg.inv"),)))


@numpy_function("linalg.det")
def det(tracer, a):
    return tracer.builder.emit("linalg_det", (_matrix(tracer, a, "np.linalg.det"),))


@numpy_function("linalg.slogdet")
def slogdet(tracer, a):
    pair = tracer.builder.emit("linalg_slogdet", (_matrix(tracer, a, "np.linalg.slogdet"),))
    return tuple(tracer.builder.emit("getitem", (pair,), index=i) for i in range(2))


@numpy_function("linalg.cholesky", array_result=True)
def cholesky(tracer, a, upper=False):
    if upper:
        raise tracer.error("np.linalg.cholesky(..., upper=True) is not supported yet")
    return wrap(tracer, tracer.builder.emit("linalg_cholesky", (_matrix(tracer, a, "np.linalg.cholesky"),)))


@numpy_function("linalg.eigh")
def eigh(tracer, a, UPLO="L"):
    if UPLO != "L":
        raise tracer.error("np.linalg.eigh(..., UPLO='U') is not supported yet")
    pair = tracer.builder.emit("linalg_eigh", (_matrix(tracer, a, "np.linalg.eigh"),))
    return tuple(wrap(tracer, tracer.builder.emit("getitem", (pair,), index=i)) for i in range(2))


QR_MODES = ("reduced", "complete", "r")


@numpy_function("linalg.qr")
def qr(tracer, a, mode="reduced"):
    if mode not in QR_MODES:
        if mode in ("raw", "economic", "e", "full", "f"):
            raise tracer.error(f"np.linalg.qr(..., mode={mode!r}) is not supported (modes: {', '.join(QR_MODES)})")
        raise ValueError(f"Unrecognized mode '{mode}'")
    matrix = _matrix(tracer, a, "np.linalg.qr", square=False)
    pair = tracer.builder.emit("linalg_qr", (matrix,), complete=mode == "complete")
    q, r = (wrap(tracer, tracer.builder.emit("getitem", (pair,), index=i)) for i in range(2))
    return r if mode == "r" else (q, r)


@numpy_function("linalg.svd")
def svd(tracer, a, full_matrices=True, compute_uv=True, hermitian=False):
    if hermitian:
        raise tracer.error("np.linalg.svd(..., hermitian=True) is not supported yet")
    if type(full_matrices) is not bool or type(compute_uv) is not bool:
        raise tracer.error("np.linalg.svd's full_matrices and compute_uv must be True or False")
    matrix = _matrix(tracer, a, "np.linalg.svd", square=False)
    if not compute_uv:
        return wrap(tracer, tracer.builder.emit("linalg_svd", (matrix,), jobz="N"))
    triple = tracer.builder.emit("linalg_svd", (matrix,), jobz="A" if full_matrices else "S")
    return tuple(wrap(tracer, tracer.builder.emit("getitem", (triple,), index=i)) for i in range(3))


@numpy_function("linalg.svdvals", array_result=True)
def svdvals(tracer, x):
    return wrap(tracer, tracer.builder.emit("linalg_svd", (_matrix(tracer, x, "np.linalg.svdvals", square=False),),
                                            jobz="N"))


@numpy_function("linalg.lstsq")
def lstsq(tracer, a, b, rcond=None):
    import numpy
    matrix = _matrix(tracer, a, "np.linalg.lstsq", square=False)
    rhs = as_array(tracer, b, "np.linalg.lstsq")
    if rhs.rank not in (1, 2):
        raise numpy.linalg.LinAlgError(f"{rhs.rank}-dimensional array given. Array must be two-dimensional")
    m, rows = matrix.type.shape[0], rhs.type.shape[0]
    if m is not None and rows is not None and m != rows:
        raise numpy.linalg.LinAlgError("Incompatible dimensions")
    bld = tracer.builder
    if rcond is None:                       # NumPy's default: eps * max(m, n)
        sizes = [bld.emit("dim", (matrix,), axis=i) for i in range(2)]
        largest = bld.emit("select", (bld.compare("gt", *sizes), *sizes))
        rcond = bld.binary("mul", float(numpy.finfo(numpy.float64).eps), bld.convert(largest, F64))
    rcond = bld.convert(bld.value(rcond), F64)
    four = bld.emit("linalg_lstsq", (matrix, _float64(tracer, rhs.value, "np.linalg.lstsq"), rcond))
    x, residuals, rank, s = (bld.emit("getitem", (four,), index=i) for i in range(4))
    return wrap(tracer, x), wrap(tracer, residuals), rank, wrap(tracer, s)


@numpy_function("linalg.eigvalsh", array_result=True)
def eigvalsh(tracer, a, UPLO="L"):
    if UPLO != "L":
        raise tracer.error("np.linalg.eigvalsh(..., UPLO='U') is not supported yet")
    return wrap(tracer, tracer.builder.emit("linalg_eigvalsh", (_matrix(tracer, a, "np.linalg.eigvalsh"),)))


@numpy_function("linalg.cond")
def cond(tracer, x, p=None):
    if p not in (None, 2, -2):
        raise tracer.error(f"np.linalg.cond(x, p={p!r}) is not supported yet (p None, 2 or -2: singular values)")
    _checked_matrix(tracer, x, "np.linalg.cond", square=False)
    r = tracer.call(numpy_in_python.cond, [x, p], {})
    if is_traced(r):
        tracer.numpy_scalars.add(r)          # (np.float64, as NumPy's, on every path)
    return r


@numpy_function("linalg.matrix_rank")
def matrix_rank(tracer, A, tol=None, hermitian=False, *, rtol=None):
    if hermitian:
        raise tracer.error("np.linalg.matrix_rank(..., hermitian=True) is not supported yet")
    if tol is not None and rtol is not None:
        raise ValueError("`tol` and `rtol` can't be both set.")
    a = as_array(tracer, A, "np.linalg.matrix_rank")
    if a.rank < 2:
        return tracer.call(numpy_in_python.vector_rank, [a], {})
    _checked_matrix(tracer, a, "np.linalg.matrix_rank", square=False)
    return tracer.call(numpy_in_python.matrix_rank, [a, tol, rtol], {})


@numpy_function("linalg.matrix_power", array_result=True)
def matrix_power(tracer, a, n):
    import numpy
    m = _checked_matrix(tracer, a, "np.linalg.matrix_power", square=True)
    if is_traced(n) and n.type == I64:
        n = tracer.builder.concretize(n, "the exponent of np.linalg.matrix_power")
    if type(n) not in (int, bool) and not isinstance(n, numpy.integer):
        raise TypeError("exponent must be an integer")
    return tracer.call(numpy_in_python.matrix_power, [m, int(n)], {})
