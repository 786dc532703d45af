"""`np.linalg` in traced code: solve, inv, det, slogdet, cholesky, eigh, eigvalsh, qr, svd, lstsq, eig and
eigvals, each one op (tracer.ir.linalg_ops) that calls the LAPACK routine NumPy calls, from NumPy's own
LAPACK, so the results are NumPy's bit for bit. (`np.linalg.norm` is in numpy_stats.)

They take float64 matrices (int and bool ones are converted to float64, as NumPy does) and float32
ones, which NumPy computes in float64 too and rounds back to float32 (float16 is NumPy's
TypeError); all but lstsq take stacks of matrices, shape (..., m, n), as NumPy's gufuncs do
(solve's b is one vector for every matrix where it is 1-d, else a stack of matrices broadcast
with a's, as in NumPy 2). A NumPy without its bundled 64-bit-integer OpenBLAS is refused clearly.
A matrix whose sizes the trace knows and that is not square is NumPy's LinAlgError at trace time;
a singular one (solve, inv), or one that is not positive definite (cholesky), anywhere in a stack,
makes the call run the Python function, which raises NumPy's LinAlgError, as does an SVD that does
not converge. `slogdet`, `eigh`, `qr`, `svd` and `eig` return plain tuples where NumPy returns named
tuples (unpacking them is the same). cond, matrix_rank and matrix_power (numpy_in_python) take
one matrix. `grad` goes through all but lstsq and eig (their rules: tracer.ir.linalg_derivatives).

eig and eigvals of float64 matrices (and stacks) give complex arrays (`ComplexArray`), NumPy's
numbers from geev. NumPy before 2.5 gives float64 arrays instead where every eigenvalue is real: a
dtype only the run time knows, so there (and for a matrix with an inf or a NaN: NumPy's
LinAlgError) the call runs the Python function; NumPy 2.5 on always gives complex arrays
(`eig_is_always_complex`). float32 matrices are refused (NumPy's complex64 results).
"""
from __future__ import annotations

import functools

from tracer.frontend.arrays import broadcast_shape, convert, emit_elementwise, shape_text, sizes_of, wrap
from tracer.frontend.builder import is_traced
from tracer.frontend.complex_arrays import ComplexArray
from tracer.frontend.numpy_more import all_true, as_array, fallback_unless, numpy_function
from tracer.ir import BOOL, F16, F32, F64, I64, INTEGERS, ArrayType
from tracer.ir.linalg_ops import lapack_library


def _matrix(tracer, x, what: str, square: bool = True):
    """x as float64 matrices (one, or a stack), with NumPy's checks of its rank (and squareness),
    and the dtype NumPy gives the results (`_result_dtype`)."""
    _need_lapack(tracer, what)
    a = _checked_matrix(tracer, x, what, square, stacks=True)
    return convert(tracer, a.value, F64), _result_dtype(tracer, what, a)


def _need_lapack(tracer, what: str) -> None:
    if lapack_library() is None:
        raise tracer.error(f"{what}: this NumPy does not bundle a 64-bit-integer OpenBLAS to call")


def _checked_matrix(tracer, x, what: str, square: bool, stacks: bool = False):
    """x as an array, with NumPy's checks that it is a matrix or a stack of them (square: and
    square); `stacks` False: a stack is refused."""
    import numpy
    a = as_array(tracer, x, what)
    if a.rank < 2:
        raise numpy.linalg.LinAlgError(f"{a.rank}-dimensional array given. Array must be at least "
                                       f"two-dimensional")
    if a.rank > 2 and not stacks:
        raise tracer.error(f"{what} of a stack of matrices is not supported yet")
    rows, cols = a.type.shape[-2:]
    if square and rows is not None and cols is not None and rows != cols:
        raise numpy.linalg.LinAlgError("Last 2 dimensions of the array must be square")
    return a


def _result_dtype(tracer, what: str, *arrays):
    """NumPy's _commonType: the results are float32 where every operand is, else float64 (int and
    bool operands count as float64); float16 is NumPy's TypeError."""
    dtype = F32
    for a in arrays:
        t = a.type.dtype
        if t == F16:
            raise TypeError("array type float16 is unsupported in linalg")
        if t not in (F32, F64, BOOL, *INTEGERS):
            raise tracer.error(f"{what} of a {t} array is not supported yet")
        if t != F32:
            dtype = F64
    return dtype


def _result(tracer, v, dtype):
    """An op's result (an array, or a number) as `dtype`, wrapped: float32 rounded once, as
    NumPy's astype."""
    return wrap(tracer, v if dtype == F64 else convert(tracer, v, dtype))


def _parts(tracer, v, count: int, dtype) -> tuple:
    return tuple(_result(tracer, tracer.builder.emit("getitem", (v,), index=i), dtype) for i in range(count))


def _stacks_broadcast(tracer, values: list) -> list:
    """Matrices `values` (each with its leading axes) with their leading axes broadcast together,
    as a gufunc loops over them (NumPy's ValueError where sizes the trace knows do not fit)."""
    b = tracer.builder
    depth = max(v.type.rank - 2 for v in values)
    common = broadcast_shape(tracer, [(v, v.type.shape[:-2]) for v in values])
    if common is None:
        remapped = " ".join(f"{shape_text(v.type)}->{_loop_axes(v.type)}" for v in values)
        core = (values[0].type.shape[-1], values[-1].type.shape[-1])
        raise ValueError(f"operands could not be broadcast together with remapped shapes [original->remapped]: "
                         f"{remapped}  and requested shape {shape_text(ArrayType(F64, core))}")
    shape, sizes = common
    out = []
    for v in values:
        core = v.type.shape[-2:]
        if v.type.shape[:-2] != tuple(shape):
            target = (*sizes, *sizes_of(tracer, v)[-2:])
            v = b.emit("broadcast_in_dim", (v, *(b.value(s) for s in target)), shape=(*shape, *core),
                       dims=tuple(range(depth + 2 - v.type.rank, depth + 2)))
        out.append(v)
    return out


def _loop_axes(t) -> str:
    """A gufunc operand's shape as NumPy's broadcast error shows it: the core axes as newaxis."""
    return "(" + ",".join([*("?" if n is None else str(n) for n in t.shape[:-2]), "newaxis", "newaxis"]) + ")"


@numpy_function("linalg.solve", array_result=True)
def solve(tracer, a, b):
    what = "np.linalg.solve"
    _need_lapack(tracer, what)
    m = _checked_matrix(tracer, a, what, square=True, stacks=True)
    rhs = as_array(tracer, b, what)
    dtype = _result_dtype(tracer, what, m, rhs)
    if rhs.rank == 0:
        raise ValueError("solve: Input operand 1 does not have enough dimensions (has 0, gufunc core with signature "
                         "(m,m),(m,n)->(m,n) requires 2)")
    name, signature = ("solve1", "(m,m),(m)->(m)") if rhs.rank == 1 else ("solve", "(m,m),(m,n)->(m,n)")
    n, rows = m.type.shape[-1], rhs.type.shape[0 if rhs.rank == 1 else -2]
    if n is not None and rows is not None and n != rows:
        raise ValueError(f"{name}: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature "
                         f"{signature} (size {rows} is different from {n})")
    operands = [convert(tracer, m.value, F64), convert(tracer, rhs.value, F64)]
    if rhs.rank > 1:                        # (a 1-d b: the same vector for every matrix)
        operands = _stacks_broadcast(tracer, operands)
    return _result(tracer, tracer.builder.emit("linalg_solve", tuple(operands)), dtype)


@numpy_function("linalg.inv", array_result=True)
def inv(tracer, a):
    m, dtype = _matrix(tracer, a, "np.linalg.inv")
    return _result(tracer, tracer.builder.emit("linalg_inv", (m,)), dtype)


@numpy_function("linalg.det")
def det(tracer, a):
    m, dtype = _matrix(tracer, a, "np.linalg.det")
    return _result(tracer, tracer.builder.emit("linalg_det", (m,)), dtype)


@numpy_function("linalg.slogdet")
def slogdet(tracer, a):
    m, dtype = _matrix(tracer, a, "np.linalg.slogdet")
    return _parts(tracer, tracer.builder.emit("linalg_slogdet", (m,)), 2, dtype)


@numpy_function("linalg.cholesky", array_result=True)
def cholesky(tracer, a, upper=False):
    if upper:
        raise tracer.error("np.linalg.cholesky(..., upper=True) is not supported yet")
    m, dtype = _matrix(tracer, a, "np.linalg.cholesky")
    return _result(tracer, tracer.builder.emit("linalg_cholesky", (m,)), dtype)


@numpy_function("linalg.eigh")
def eigh(tracer, a, UPLO="L"):
    if UPLO != "L":
        raise tracer.error("np.linalg.eigh(..., UPLO='U') is not supported yet")
    m, dtype = _matrix(tracer, a, "np.linalg.eigh")
    return _parts(tracer, tracer.builder.emit("linalg_eigh", (m,)), 2, dtype)


QR_MODES = ("reduced", "complete", "r")


@numpy_function("linalg.qr")
def qr(tracer, a, mode="reduced"):
    if mode not in QR_MODES:
        if mode in ("raw", "economic", "e", "full", "f"):
            raise tracer.error(f"np.linalg.qr(..., mode={mode!r}) is not supported (modes: {', '.join(QR_MODES)})")
        raise ValueError(f"Unrecognized mode '{mode}'")
    matrix, dtype = _matrix(tracer, a, "np.linalg.qr", square=False)
    q, r = _parts(tracer, tracer.builder.emit("linalg_qr", (matrix,), complete=mode == "complete"), 2, dtype)
    return r if mode == "r" else (q, r)


@numpy_function("linalg.svd")
def svd(tracer, a, full_matrices=True, compute_uv=True, hermitian=False):
    if hermitian:
        raise tracer.error("np.linalg.svd(..., hermitian=True) is not supported yet")
    if type(full_matrices) is not bool or type(compute_uv) is not bool:
        raise tracer.error("np.linalg.svd's full_matrices and compute_uv must be True or False")
    matrix, dtype = _matrix(tracer, a, "np.linalg.svd", square=False)
    if not compute_uv:
        return _result(tracer, tracer.builder.emit("linalg_svd", (matrix,), jobz="N"), dtype)
    triple = tracer.builder.emit("linalg_svd", (matrix,), jobz="A" if full_matrices else "S")
    return _parts(tracer, triple, 3, dtype)


@numpy_function("linalg.svdvals", array_result=True)
def svdvals(tracer, x):
    matrix, dtype = _matrix(tracer, x, "np.linalg.svdvals", square=False)
    return _result(tracer, tracer.builder.emit("linalg_svd", (matrix,), jobz="N"), dtype)


@numpy_function("linalg.lstsq")
def lstsq(tracer, a, b, rcond=None):
    import numpy
    what = "np.linalg.lstsq"
    _need_lapack(tracer, what)
    matrix = as_array(tracer, a, what)
    rhs = as_array(tracer, b, what)
    for rank in (matrix.rank, 2 if rhs.rank == 1 else rhs.rank):       # (NumPy's b[:, newaxis] of a 1-d b)
        if rank != 2:
            raise numpy.linalg.LinAlgError(f"{rank}-dimensional array given. Array must be two-dimensional")
    m, rows = matrix.type.shape[0], rhs.type.shape[0]
    if m is not None and rows is not None and m != rows:
        raise numpy.linalg.LinAlgError("Incompatible dimensions")
    dtype = _result_dtype(tracer, what, matrix, rhs)
    bld = tracer.builder
    matrix = convert(tracer, matrix.value, F64)
    if rcond is None:                       # NumPy's default: eps * max(m, n) (of float64, float32 too)
        sizes = [bld.emit("dim", (matrix,), axis=i) for i in range(2)]
        largest = bld.emit("select", (bld.compare("gt", *sizes), *sizes))
        rcond = bld.binary("mul", float(numpy.finfo(numpy.float64).eps), bld.convert(largest, F64))
    rcond = bld.convert(bld.value(rcond), F64)
    four = bld.emit("linalg_lstsq", (matrix, convert(tracer, rhs.value, F64), rcond))
    x, residuals, rank, s = (bld.emit("getitem", (four,), index=i) for i in range(4))
    return _result(tracer, x, dtype), _result(tracer, residuals, dtype), rank, _result(tracer, s, dtype)


@numpy_function("linalg.eigvalsh", array_result=True)
def eigvalsh(tracer, a, UPLO="L"):
    if UPLO != "L":
        raise tracer.error("np.linalg.eigvalsh(..., UPLO='U') is not supported yet")
    m, dtype = _matrix(tracer, a, "np.linalg.eigvalsh")
    return _result(tracer, tracer.builder.emit("linalg_eigvalsh", (m,)), dtype)


@numpy_function("linalg.cond")
def cond(tracer, x, p=None):
    if p not in (None, 2, -2):
        raise tracer.error(f"np.linalg.cond(x, p={p!r}) is not supported yet (p None, 2 or -2: singular values)")
    _checked_matrix(tracer, x, "np.linalg.cond", square=False)
    from tracer.frontend import numpy_in_python  # (imports NumPy: only where it is called)
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
        from tracer.frontend import numpy_in_python
        return tracer.call(numpy_in_python.vector_rank, [a], {})
    _checked_matrix(tracer, a, "np.linalg.matrix_rank", square=False)
    from tracer.frontend import numpy_in_python
    return tracer.call(numpy_in_python.matrix_rank, [a, tol, rtol], {})


@numpy_function("linalg.matrix_power", array_result=True)
def matrix_power(tracer, a, n):
    import numpy
    m = _checked_matrix(tracer, a, "np.linalg.matrix_power", square=True)
    if is_traced(n) and n.type == I64:
        n = tracer.builder.concretize(n, "the exponent of np.linalg.matrix_power")
    if type(n) not in (int, bool) and not isinstance(n, numpy.integer):
        raise TypeError("exponent must be an integer")
    from tracer.frontend import numpy_in_python
    return tracer.call(numpy_in_python.matrix_power, [m, int(n)], {})


@numpy_function("linalg.eig")
def eig(tracer, a):
    w, v = _eig(tracer, a, "np.linalg.eig", vectors=True)
    return w, v


@numpy_function("linalg.eigvals", array_result=True)
def eigvals(tracer, a):
    return _eig(tracer, a, "np.linalg.eigvals", vectors=False)[0]


@functools.cache
def eig_is_always_complex() -> bool:
    """Whether this NumPy's eig and eigvals give complex arrays for every real matrix (NumPy 2.5
    on; before, float64 ones where every eigenvalue is real)."""
    import numpy
    return numpy.linalg.eigvals(numpy.eye(1)).dtype.kind == "c"


def _eig(tracer, a, what: str, vectors: bool) -> list:
    """[eigenvalues] (and eigenvectors) as complex arrays; where every eigenvalue is real (NumPy's
    float64 results) or the matrix is not finite, the Python function runs."""
    m, dtype = _matrix(tracer, a, what)
    if dtype != F64:
        raise tracer.error(f"{what} of a float32 matrix is not supported yet (NumPy gives complex64 results)")
    b = tracer.builder
    fallback_unless(tracer, all_true(tracer, emit_elementwise(tracer, "isfinite", [m], F64)))
    parts = b.emit("linalg_eig", (m,), vectors=vectors)
    re_w, im_w, *vector_parts = (b.emit("getitem", (parts,), index=i) for i in range(4 if vectors else 2))
    if not eig_is_always_complex():
        real = all_true(tracer, emit_elementwise(tracer, "eq", [im_w, 0.0], F64))
        fallback_unless(tracer, b.emit("not", (real,)))
    pairs = [(re_w, im_w)] + ([tuple(vector_parts)] if vectors else [])
    return [ComplexArray(wrap(tracer, re), wrap(tracer, im)) for re, im in pairs]
