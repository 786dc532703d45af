"""Linear algebra ops (`np.linalg`): each calls the LAPACK routine NumPy's own `np.linalg` calls,
from the LAPACK NumPy links (its bundled OpenBLAS: `codegen.lapack`), on the same column-major
copy NumPy makes, so results are NumPy's bit for bit. A matrix LAPACK refuses (singular, not
positive definite) fails with FALLBACK: the Python function runs and NumPy raises its LinAlgError.

Each op but lstsq also takes a stack of matrices, f64[..., m, n] (NumPy's gufuncs loop over the
leading axes): its results then have the same leading axes (det's a float64 array of them). The
operands are float64: the front end converts (NumPy computes float32 in float64 too, and rounds).

    linalg_solve(a, b)     x with a @ x = b (b one vector for every matrix, or a stack like a's): gesv
    linalg_inv(a)          gesv on the identity, as NumPy inverts
    linalg_det(a)          sign * exp(logdet) from getrf's factors (NumPy's det goes through slogdet)
    linalg_slogdet(a)      (sign, logdet) from getrf's factors
    linalg_cholesky(a)     the lower factor L (a = L @ L.T): potrf, the upper triangle zeroed
    linalg_eigh(a)         (eigenvalues ascending, eigenvectors as columns) of a symmetric matrix: syevd
    linalg_eigvalsh(a)     the eigenvalues alone (ascending) of a symmetric matrix: syevd without vectors
    linalg_qr(a)           (Q, R): geqrf, then orgqr for Q's columns (min(m, n), or m with attrs['complete'])
    linalg_svd(a)          (U, S, Vh), or S alone (attrs['jobz']: 'A' full, 'S' reduced, 'N' none): gesdd
    linalg_lstsq(a, b, rcond)  (x, residuals, rank, singular values) of min |a @ x - b|: gelsd
    linalg_eig(a)          the eigenvalues' real and imaginary parts, and (attrs['vectors']) the parts of the
                           complex eigenvectors NumPy builds from geev's real ones: geev, jobvl 'N', jobvr 'V'/'N'

Every op but lstsq and eig has derivative rules (tracer.ir.linalg_derivatives).
"""
from __future__ import annotations

import functools
import glob
import os

from tracer.errors import OpFailure, Status
from tracer.ir.linalg_derivatives import VJP
from tracer.ir.registry import define
from tracer.ir.types import F64, I32, ArrayType, TupleType


@functools.cache
def lapack_library():
    """(path, symbol prefix, symbol suffix) of the LAPACK with 64-bit integers that NumPy links
    (its wheels' bundled OpenBLAS: `scipy_dgesv_64_`...), or None where there is none."""
    import numpy
    for path in sorted(glob.glob(os.path.join(os.path.dirname(numpy.__file__) + ".libs", "libscipy_openblas64_*"))):
        return path, "scipy_", "64_"
    return None


LINALG_OPS = ("linalg_solve", "linalg_inv", "linalg_det", "linalg_slogdet", "linalg_cholesky", "linalg_eigh",
              "linalg_eigvalsh", "linalg_qr", "linalg_svd", "linalg_lstsq", "linalg_eig")


def _matrix(t, what: str) -> ArrayType:
    if not isinstance(t, ArrayType) or t.rank != 2 or t.dtype != F64:
        raise TypeError(f"{what} takes a float64 matrix")
    return t


def _square(t, what: str) -> ArrayType:
    """A float64 matrix, or a stack of them (its last two axes)."""
    if not isinstance(t, ArrayType) or t.rank < 2 or t.dtype != F64:
        raise TypeError(f"{what} takes a float64 matrix or a stack of them")
    return t


def _stacked(t: ArrayType, *core) -> ArrayType:
    """A float64 array of t's leading (stack) axes, then `core`."""
    return ArrayType(F64, t.shape[:-2] + tuple(core))


def _per_matrix(t: ArrayType, result):
    """A number per matrix: `result` for one matrix, an array of a stack's axes (of float64)."""
    return result if t.rank == 2 else _stacked(t)


def _smaller(m, n):
    """min(m, n) of two sizes, None (known only at run time) unless both are known."""
    return None if m is None or n is None else min(m, n)


def _qr_type(types, attrs):
    m, n = _square(types[0], "linalg_qr").shape[-2:]
    columns = _smaller(m, n)
    if attrs["complete"] and columns is not None:
        columns = max(m, columns) if m > n else columns
    elif attrs["complete"]:
        columns = None                     # (m or min(m, n): known at run time)
    return TupleType((_stacked(types[0], m, columns), _stacked(types[0], columns, n)))


def _qr(a, complete):
    import numpy
    q, r = numpy.linalg.qr(a, mode="complete" if complete else "reduced")
    return q, r


def _svd_type(types, attrs):
    a = _square(types[0], "linalg_svd")
    m, n = a.shape[-2:]
    k = _smaller(m, n)
    s = _stacked(a, k)
    if attrs["jobz"] == "N":
        return s
    full = attrs["jobz"] == "A"
    return TupleType((_stacked(a, m, m if full else k), s, _stacked(a, n if full else k, n)))


def _svd(a, jobz):
    import numpy
    try:
        if jobz == "N":
            return numpy.linalg.svd(a, compute_uv=False)
        return tuple(numpy.linalg.svd(a, full_matrices=jobz == "A"))
    except numpy.linalg.LinAlgError:
        raise OpFailure(Status.FALLBACK) from None


def _numpy_linalg(name: str):
    def evaluate(*args):
        import numpy
        try:
            return getattr(numpy.linalg, name)(*args)
        except numpy.linalg.LinAlgError:
            raise OpFailure(Status.FALLBACK) from None
    return evaluate


def _solve_type(types, attrs):
    a, b = _square(types[0], "linalg_solve"), types[1]
    if not isinstance(b, ArrayType) or b.rank not in (1, a.rank) or b.dtype != F64:
        raise TypeError("linalg_solve takes a float64 vector on the right, or matrices stacked as a's")
    return _stacked(a, a.shape[-1], *b.shape[-1:] if b.rank > 1 else ())


def _number(x):
    """A float for one matrix's number (a 0-d result), else the array of a stack's."""
    import numpy
    return float(x) if numpy.ndim(x) == 0 else numpy.asarray(x)


def _det(a):
    return _number(_numpy_linalg("det")(a))


def _slogdet(a):
    sign, logdet = _numpy_linalg("slogdet")(a)
    return _number(sign), _number(logdet)


def _eigh(a):
    w, v = _numpy_linalg("eigh")(a)
    return w, v


define("linalg_solve", "x with a @ x = b (LAPACK gesv, as np.linalg.solve)", _solve_type,
       _numpy_linalg("solve"), [Status.FALLBACK, Status.NO_MEMORY], vjp=VJP["linalg_solve"])
define("linalg_inv", "the inverse of a (LAPACK gesv on the identity, as np.linalg.inv)",
       lambda t, a: _square(t[0], "linalg_inv"), _numpy_linalg("inv"), [Status.FALLBACK, Status.NO_MEMORY],
       vjp=VJP["linalg_inv"])
define("linalg_det", "the determinant of a (getrf, then sign * exp(log|det|), as np.linalg.det)",
       lambda t, a: _per_matrix(_square(t[0], "linalg_det"), F64), _det,
       [Status.FALLBACK, Status.NO_MEMORY], vjp=VJP["linalg_det"])
define("linalg_slogdet", "(sign, log|det|) of a (getrf, as np.linalg.slogdet)",
       lambda t, a: TupleType((_per_matrix(_square(t[0], "linalg_slogdet"), F64),) * 2), _slogdet,
       [Status.FALLBACK, Status.NO_MEMORY], vjp=VJP["linalg_slogdet"])
define("linalg_cholesky", "the lower Cholesky factor of a (potrf, as np.linalg.cholesky)",
       lambda t, a: _square(t[0], "linalg_cholesky"), _numpy_linalg("cholesky"), [Status.FALLBACK, Status.NO_MEMORY],
       vjp=VJP["linalg_cholesky"])
define("linalg_eigh", "(ascending eigenvalues, eigenvectors) of symmetric a from its lower triangle "
       "(syevd, as np.linalg.eigh)",
       lambda t, a: TupleType((_stacked(_square(t[0], "linalg_eigh"), t[0].shape[-1]), t[0])), _eigh,
       [Status.FALLBACK, Status.NO_MEMORY], vjp=VJP["linalg_eigh"])
define("linalg_qr", "(Q, R) of a (geqrf, then orgqr, as np.linalg.qr; Q has m columns with "
       "attrs['complete'] when m > n, else min(m, n))", _qr_type, _qr, [Status.FALLBACK, Status.NO_MEMORY],
       attrs=("complete",), vjp=VJP["linalg_qr"])
define("linalg_svd", "(U, S, Vh) of a, or S alone (gesdd with attrs['jobz']: 'A' full matrices, 'S' reduced, "
       "'N' the singular values only, as np.linalg.svd)", _svd_type, _svd, [Status.FALLBACK, Status.NO_MEMORY],
       attrs=("jobz",), vjp=VJP["linalg_svd"])


def _lstsq_type(types, attrs):
    m, n = _matrix(types[0], "linalg_lstsq").shape
    b = types[1]
    if not isinstance(b, ArrayType) or b.rank not in (1, 2) or b.dtype != F64 or types[2] != F64:
        raise TypeError("linalg_lstsq takes a float64 vector or matrix on the right, and a float64 rcond")
    # (the residuals: one per column where the rank is n and m > n, else none: a length known at run time)
    return TupleType((ArrayType(F64, (n,) + b.shape[1:]), ArrayType(F64, (None,)), I32,
                      ArrayType(F64, (_smaller(m, n),))))


def _lstsq(a, b, rcond):
    import numpy
    try:
        x, residuals, rank, s = numpy.linalg.lstsq(a, b, rcond=rcond)
    except numpy.linalg.LinAlgError:
        raise OpFailure(Status.FALLBACK) from None
    return x, residuals, rank, s


define("linalg_lstsq", "(x, residuals, rank as int32, singular values) of the least-squares solution of a @ x = b "
       "(gelsd with rcond, as np.linalg.lstsq; residuals only where the rank is n and m > n)", _lstsq_type, _lstsq,
       [Status.FALLBACK, Status.NO_MEMORY])
define("linalg_eigvalsh", "the ascending eigenvalues of symmetric a from its lower triangle (syevd without "
       "vectors, as np.linalg.eigvalsh)", lambda t, a: _stacked(_square(t[0], "linalg_eigvalsh"), t[0].shape[-1]),
       _numpy_linalg("eigvalsh"), [Status.FALLBACK, Status.NO_MEMORY], vjp=VJP["linalg_eigvalsh"])


def _eig_type(types, attrs):
    a = _square(types[0], "linalg_eig")
    values = _stacked(a, a.shape[-1])
    return TupleType((values, values) + ((a, a) if attrs["vectors"] else ()))


def _eig(a, vectors):
    """NumPy's complex results, as parts (where NumPy returns real arrays, every imaginary part is 0)."""
    import numpy
    try:
        w, v = numpy.linalg.eig(a) if vectors else (numpy.linalg.eigvals(a), None)
    except numpy.linalg.LinAlgError:
        raise OpFailure(Status.FALLBACK) from None
    w = w.astype(numpy.complex128)
    if not vectors:
        return w.real.copy(), w.imag.copy()
    v = v.astype(numpy.complex128)
    return w.real.copy(), w.imag.copy(), v.real.copy(), v.imag.copy()


define("linalg_eig", "(real parts, imaginary parts) of the eigenvalues of a, then (attrs['vectors']) those of its "
       "right eigenvectors as columns (geev with jobvl 'N', as np.linalg.eig and eigvals: a conjugate pair of "
       "eigenvalues takes its vectors from two of geev's columns, v_j = re + i im, v_j+1 = re - i im)",
       _eig_type, _eig, [Status.FALLBACK, Status.NO_MEMORY], attrs=("vectors",))
