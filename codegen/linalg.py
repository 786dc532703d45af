"""Lowering of the `np.linalg` ops (tracer.ir.linalg_ops): calls into the LAPACK NumPy itself uses.

NumPy's wheels bundle OpenBLAS with 64-bit integers (`numpy.libs/libscipy_openblas64_*.so`,
symbols `scipy_<routine>64_`). `lapack_symbols` finds that library (already loaded by NumPy) and
gives the addresses of the routines a function calls; the JIT links them by name. Each op does
what NumPy's `umath_linalg` does around its call: copy the matrix into a column-major buffer
(`column_major`), call the routine with every argument by pointer, read the result back out,
so the numbers are NumPy's. Where no such library is found the front end refuses `np.linalg`.

A stack of matrices (an operand with leading axes, as NumPy's gufuncs take) runs the same code
on each matrix in turn (`per_matrix`), in row-major order of the leading axes, each result copied
into its place in arrays of the stack's axes; what one matrix allocates is freed before the next.
"""
from __future__ import annotations

from llvmlite import ir as ll

from codegen.arrays import (
    allocate,
    arena_mark,
    check_same_sizes,
    copy_elements,
    element_address,
    for_each_index,
    free_arena_to,
    load_element,
    store_element,
)
from codegen.kernel import DOUBLE, I64, PTR, ArrayValue, KernelBuilder, for_range
from codegen.lowerings import lowers
from tracer import ir
from tracer.errors import Status
from tracer.ir.linalg_ops import LINALG_OPS, lapack_library

ROUTINES = {"linalg_solve": ("dgesv",), "linalg_inv": ("dgesv",), "linalg_det": ("dgetrf",),
            "linalg_slogdet": ("dgetrf",), "linalg_cholesky": ("dpotrf",), "linalg_eigh": ("dsyevd",), "linalg_eigvalsh": ("dsyevd",),
            "linalg_qr": ("dgeqrf", "dorgqr"), "linalg_svd": ("dgesdd",), "linalg_lstsq": ("dgelsd",),
            "linalg_eig": ("dgeev",)}
ITEM = 8
I8 = ll.IntType(8)


def symbol(routine: str) -> str:
    _, prefix, suffix = lapack_library()
    return f"{prefix}{routine}_{suffix}"


def lapack_symbols(fn: ir.Function) -> dict[str, int]:
    """The LAPACK routines `fn` calls, by symbol, with their addresses in this process."""
    used = {r for v in fn.walk() if v.op in LINALG_OPS for r in ROUTINES[v.op]}
    if not used:
        return {}
    import ctypes
    library = ctypes.CDLL(lapack_library()[0])          # NumPy loaded it: the same copy
    return {symbol(r): ctypes.cast(getattr(library, symbol(r)), ctypes.c_void_p).value for r in used}


# ------------------------------------------------------------------------------- helpers
def _call(k: KernelBuilder, routine: str, *args: ll.Value) -> None:
    """LAPACK's `routine`, every argument a pointer (Fortran's convention)."""
    fnty = ll.FunctionType(ll.VoidType(), [PTR] * len(args))
    k.builder.call(k.declare_function(symbol(routine), fnty, ("nounwind",)), args)


def _slot(k: KernelBuilder, typ: ll.Type, value: ll.Value) -> ll.Value:
    """A stack slot holding `value` (made in the entry block: a call in a loop reuses it)."""
    with k.builder.goto_entry_block():
        slot = k.builder.alloca(typ)
    k.builder.store(value, slot)
    return slot


def _char(k: KernelBuilder, c: str) -> ll.Value:
    return _slot(k, I8, ll.Constant(I8, ord(c)))


def column_major(k: KernelBuilder, a: ArrayValue) -> ArrayValue:
    """A new column-major copy of matrix `a` (NumPy's linearize_matrix), as a view with a's
    sizes: element [r, c] is at data + (c * rows + r) * 8."""
    rows, cols = a.sizes
    buffer = allocate(k, ir.F64, (cols, rows))
    view = ArrayValue(buffer.data, (rows, cols), (k.i64(ITEM), k.builder.mul(rows, k.i64(ITEM))))
    copy_elements(k, a, view, ir.F64)
    return view


def _c_order(k: KernelBuilder, view: ArrayValue) -> ArrayValue:
    out = allocate(k, ir.F64, view.sizes)
    copy_elements(k, view, out, ir.F64)
    return out


def _square(k: KernelBuilder, a: ArrayValue) -> ll.Value:
    """n of an n x n matrix, or of a stack of them (FALLBACK where the run-time sizes differ:
    NumPy's LinAlgError)."""
    k.fail_if(k.builder.icmp_signed("!=", a.sizes[-2], a.sizes[-1]), Status.FALLBACK)
    return a.sizes[-1]


def _at_least_one(k: KernelBuilder, n: ll.Value) -> ll.Value:
    return k.builder.select(k.builder.icmp_signed("<", n, k.i64(1)), k.i64(1), n)


def _fail_unless_zero(k: KernelBuilder, info: ll.Value) -> None:
    k.fail_if(k.builder.icmp_signed("!=", k.builder.load(info, typ=I64), k.i64(0)), Status.FALLBACK)


def _gesv(k: KernelBuilder, a: ArrayValue, rhs: ArrayValue) -> None:
    """Solve in place: rhs (a column-major n x m view) becomes a^-1 @ rhs."""
    n = _square(k, a)
    k.fail_if(k.builder.icmp_signed("!=", rhs.sizes[0], n), Status.FALLBACK)
    lu = column_major(k, a)
    pivots = allocate(k, ir.I64, (n,))
    info = _slot(k, I64, k.i64(0))
    lead = _slot(k, I64, _at_least_one(k, n))
    _call(k, "dgesv", _slot(k, I64, n), _slot(k, I64, rhs.sizes[1]), lu.data, lead, pivots.data, rhs.data, lead,
          info)
    _fail_unless_zero(k, info)


# ------------------------------------------------------------------------------- stacks
def per_matrix(k: KernelBuilder, v: ir.Value, operands, cores, one, stacked=None):
    """The results of `one(*matrices)` for op `v`: on its operands as they are where its first
    is one matrix; on a stack (its first operand's leading axes; `stacked`: which operands are
    stacks, by default all), on each matrix in turn, each result copied into new arrays of the
    stack's axes and the result's `cores` (its core sizes per result; () a number)."""
    depth = v.args[0].type.rank - 2
    if depth == 0:
        return one(*operands)
    stacked = stacked or (True,) * len(operands)
    stack = operands[0].sizes[:depth]
    for x, is_stack in zip(operands[1:], stacked[1:]):
        if is_stack:
            check_same_sizes(k, stack, x.sizes[:depth])
    outs = [allocate(k, ir.F64, stack + tuple(core)) for core in cores]

    def each(idx):
        mark = arena_mark(k)
        results = one(*(_matrix_at(k, x, idx) if is_stack else x for x, is_stack in zip(operands, stacked)))
        for out, core, result in zip(outs, cores, results if len(cores) > 1 else (results,)):
            if core:
                copy_elements(k, result, _matrix_at(k, out, idx), ir.F64)
            else:
                store_element(k, out, idx, ir.F64, result)
        free_arena_to(k, mark)                  # (what this matrix allocated)
    _for_each_matrix(k, stack, each)
    return tuple(outs) if len(cores) > 1 else outs[0]


def _matrix_at(k: KernelBuilder, a: ArrayValue, idx) -> ArrayValue:
    """The matrix (or vector) of stack `a` at the index `idx` of its leading axes: a view."""
    return ArrayValue(element_address(k, a, idx), a.sizes[len(idx):], a.strides[len(idx):])


def _for_each_matrix(k: KernelBuilder, sizes, body, prefix=()) -> None:
    """body(index) for each index of a stack's axes, in row-major order."""
    if not sizes:
        body(prefix)
        return
    for_range(k, sizes[0], lambda i: _for_each_matrix(k, sizes[1:], body, prefix + (i,)))


# ------------------------------------------------------------------------------- the ops
@lowers("linalg_solve")
def solve(k: KernelBuilder, v: ir.Value, a: ArrayValue, b: ArrayValue):
    """b one vector for every matrix of a, or stacked as a is (its matrices' rows n)."""
    n = _square(k, a)
    vector = v.args[1].type.rank == 1
    k.fail_if(k.builder.icmp_signed("!=", b.sizes[0 if vector else -2], n), Status.FALLBACK)
    core = (n,) if vector else (n, b.sizes[-1])
    return per_matrix(k, v, (a, b), (core,), lambda m, rhs: _solve(k, m, rhs), stacked=(True, not vector))


def _solve(k: KernelBuilder, a: ArrayValue, b: ArrayValue) -> ArrayValue:
    matrix = b if len(b.sizes) == 2 else ArrayValue(b.data, (b.sizes[0], k.i64(1)), (b.strides[0], k.i64(0)))
    rhs = column_major(k, matrix)
    _gesv(k, a, rhs)
    out = _c_order(k, rhs)
    return out if len(b.sizes) == 2 else ArrayValue(out.data, out.sizes[:1], out.strides[:1])


@lowers("linalg_inv")
def inv(k: KernelBuilder, v: ir.Value, a: ArrayValue):
    n = _square(k, a)
    return per_matrix(k, v, (a,), ((n, n),), lambda m: _inv(k, m))


def _inv(k: KernelBuilder, a: ArrayValue) -> ArrayValue:
    n = _square(k, a)
    identity = allocate(k, ir.F64, (n, n))
    for_each_index(k, (n, n), lambda idx: store_element(
        k, identity, idx, ir.F64, k.builder.uitofp(k.builder.icmp_signed("==", idx[0], idx[1]), DOUBLE)))
    rhs = ArrayValue(identity.data, (n, n), (k.i64(ITEM), identity.strides[0]))     # (symmetric: any order)
    _gesv(k, a, rhs)
    return _c_order(k, rhs)


def _slogdet(k: KernelBuilder, a: ArrayValue) -> tuple[ll.Value, ll.Value]:
    """NumPy's slogdet: getrf, the sign from the pivots and the diagonal, log|det| as the sum of
    log|u_ii| (a singular matrix: sign 0, log|det| -inf)."""
    b = k.builder
    n = _square(k, a)
    lu = column_major(k, a)
    pivots = allocate(k, ir.I64, (n,))
    info = _slot(k, I64, k.i64(0))
    lead = _slot(k, I64, _at_least_one(k, n))
    size = _slot(k, I64, n)
    _call(k, "dgetrf", size, size, lu.data, lead, pivots.data, info)

    def step(i, sign, logdet):
        swapped = b.icmp_signed("!=", load_element(k, pivots, (i,), ir.I64), b.add(i, k.i64(1)))
        sign = b.select(swapped, b.fneg(sign), sign)
        d = load_element(k, lu, (i, i), ir.F64)
        negative = b.fcmp_ordered("<", d, k.f64(0.0))
        sign = b.select(negative, b.fneg(sign), sign)
        return sign, b.fadd(logdet, k.libm("log", b.select(negative, b.fneg(d), d)))
    sign, logdet = for_range(k, n, step, (k.f64(1.0), k.f64(0.0)))
    singular = b.icmp_signed(">", b.load(info, typ=I64), k.i64(0))
    k.fail_if(b.icmp_signed("<", b.load(info, typ=I64), k.i64(0)), Status.FALLBACK)
    return b.select(singular, k.f64(0.0), sign), b.select(singular, k.f64(float("-inf")), logdet)


@lowers("linalg_slogdet")
def slogdet(k: KernelBuilder, v: ir.Value, a: ArrayValue):
    _square(k, a)
    return per_matrix(k, v, (a,), ((), ()), lambda m: _slogdet(k, m))


@lowers("linalg_det")
def det(k: KernelBuilder, v: ir.Value, a: ArrayValue):
    _square(k, a)
    return per_matrix(k, v, (a,), ((),), lambda m: _det(k, m))


def _det(k: KernelBuilder, a: ArrayValue) -> ll.Value:
    sign, logdet = _slogdet(k, a)
    return k.builder.fmul(sign, k.libm("exp", logdet))


@lowers("linalg_cholesky")
def cholesky(k: KernelBuilder, v: ir.Value, a: ArrayValue):
    n = _square(k, a)
    return per_matrix(k, v, (a,), ((n, n),), lambda m: _cholesky(k, m))


def _cholesky(k: KernelBuilder, a: ArrayValue) -> ArrayValue:
    n = _square(k, a)
    factor = column_major(k, a)
    info = _slot(k, I64, k.i64(0))
    _call(k, "dpotrf", _char(k, "L"), _slot(k, I64, n), factor.data, _slot(k, I64, _at_least_one(k, n)), info)
    _fail_unless_zero(k, info)
    out = _c_order(k, factor)
    for_each_index(k, (n, n), lambda idx: _zero_above(k, out, idx))
    return out


def _zero_above(k: KernelBuilder, out: ArrayValue, idx) -> None:
    b = k.builder
    with b.if_then(b.icmp_signed(">", idx[1], idx[0])):
        store_element(k, out, idx, ir.F64, k.f64(0.0))


@lowers("linalg_eigh")
def eigh(k: KernelBuilder, v: ir.Value, a: ArrayValue):
    n = _square(k, a)
    return per_matrix(k, v, (a,), ((n,), (n, n)), lambda m: _syevd(k, m, "V"))


@lowers("linalg_eigvalsh")
def eigvalsh(k: KernelBuilder, v: ir.Value, a: ArrayValue):
    n = _square(k, a)
    return per_matrix(k, v, (a,), ((n,),), lambda m: _syevd(k, m, "N"))


def _syevd(k: KernelBuilder, a: ArrayValue, job: str):
    """syevd on a column-major copy of a's lower triangle: the eigenvalues, and (job 'V') the
    eigenvectors as columns, with the workspaces its query asks for."""
    b = k.builder
    n = _square(k, a)
    vectors = column_major(k, a)
    values = allocate(k, ir.F64, (n,))
    info = _slot(k, I64, k.i64(0))
    jobz, uplo, size, lead = _char(k, job), _char(k, "L"), _slot(k, I64, n), _slot(k, I64, _at_least_one(k, n))
    # the workspace query (lwork = liwork = -1), then the call with what it asked for
    work_size, iwork_size = _slot(k, DOUBLE, k.f64(0.0)), _slot(k, I64, k.i64(0))
    query = _slot(k, I64, k.i64(-1))
    _call(k, "dsyevd", jobz, uplo, size, vectors.data, lead, values.data, work_size, query, iwork_size, query, info)
    _fail_unless_zero(k, info)
    lwork = b.fptosi(b.load(work_size, typ=DOUBLE), I64)
    liwork = b.load(iwork_size, typ=I64)
    work = allocate(k, ir.F64, (_at_least_one(k, lwork),))
    iwork = allocate(k, ir.I64, (_at_least_one(k, liwork),))
    _call(k, "dsyevd", jobz, uplo, size, vectors.data, lead, values.data, work.data, _slot(k, I64, lwork),
          iwork.data, _slot(k, I64, liwork), info)
    _fail_unless_zero(k, info)
    return values if job == "N" else (values, _c_order(k, vectors))


def _smaller(k: KernelBuilder, m: ll.Value, n: ll.Value) -> ll.Value:
    return k.builder.select(k.builder.icmp_signed("<", m, n), m, n)


def _larger(k: KernelBuilder, m: ll.Value, n: ll.Value) -> ll.Value:
    return k.builder.select(k.builder.icmp_signed(">", m, n), m, n)


def _work_size(k: KernelBuilder, query: ll.Value) -> ll.Value:
    """The workspace size a query (lwork = -1) left in its first word, as LAPACK's int."""
    return k.builder.fptosi(k.builder.load(query, typ=DOUBLE), I64)


def _column_major_view(k: KernelBuilder, data: ll.Value, rows: ll.Value, cols: ll.Value, lead: ll.Value):
    """A (rows, cols) view of a column-major buffer whose columns start `lead` items apart."""
    return ArrayValue(data, (rows, cols), (k.i64(ITEM), k.builder.mul(lead, k.i64(ITEM))))


def _qr_columns(k: KernelBuilder, m: ll.Value, n: ll.Value, complete: bool) -> ll.Value:
    """Q's columns (R's rows): min(m, n), or m where `complete` and m > n."""
    mn = _smaller(k, m, n)
    return k.builder.select(k.builder.icmp_signed(">", m, n), m, mn) if complete else mn


@lowers("linalg_qr")
def qr(k: KernelBuilder, v: ir.Value, a: ArrayValue):
    m, n = a.sizes[-2:]
    columns = _qr_columns(k, m, n, v.attrs["complete"])
    return per_matrix(k, v, (a,), ((m, columns), (columns, n)), lambda x: _qr(k, x, v.attrs["complete"]))


def _qr(k: KernelBuilder, a: ArrayValue, complete: bool):
    """NumPy's qr: geqrf on a column-major copy (R is its upper triangle), then orgqr on a
    column-major copy of the factors for Q's columns; each with the workspace its query asks for
    (at least n), as umath_linalg's qr_r_raw and qr_reduced / qr_complete call them."""
    b = k.builder
    m, n = a.sizes
    mn = _smaller(k, m, n)
    columns = _qr_columns(k, m, n, complete)
    factors = column_major(k, a)
    tau = allocate(k, ir.F64, (_at_least_one(k, mn),))
    rows, cols, lead, info = _slot(k, I64, m), _slot(k, I64, n), _slot(k, I64, _at_least_one(k, m)), _slot(k, I64, k.i64(0))
    query, minus_one = _slot(k, DOUBLE, k.f64(0.0)), _slot(k, I64, k.i64(-1))
    _call(k, "dgeqrf", rows, cols, factors.data, lead, tau.data, query, minus_one, info)
    _fail_unless_zero(k, info)
    lwork = _larger(k, _at_least_one(k, n), _work_size(k, query))
    work = allocate(k, ir.F64, (lwork,))
    _call(k, "dgeqrf", rows, cols, factors.data, lead, tau.data, work.data, _slot(k, I64, lwork), info)
    _fail_unless_zero(k, info)
    r = allocate(k, ir.F64, (columns, n))
    def upper(idx):
        above = b.icmp_signed("<=", idx[0], idx[1])
        value = b.select(above, load_element(k, factors, idx, ir.F64), k.f64(0.0))
        store_element(k, r, idx, ir.F64, value)
    for_each_index(k, (columns, n), upper)
    # Q: the factors' first columns (orgqr sets any past them to the identity's), in m x columns
    q = allocate(k, ir.F64, (columns, _at_least_one(k, m)))
    q_view = _column_major_view(k, q.data, m, _smaller(k, columns, n), m)
    copy_elements(k, ArrayValue(factors.data, (m, _smaller(k, columns, n)), factors.strides), q_view, ir.F64)
    q_columns, reflectors = _slot(k, I64, columns), _slot(k, I64, mn)
    _call(k, "dorgqr", rows, q_columns, reflectors, q.data, lead, tau.data, query, minus_one, info)
    _fail_unless_zero(k, info)
    lwork = _larger(k, _at_least_one(k, n), _work_size(k, query))
    work = allocate(k, ir.F64, (lwork,))
    _call(k, "dorgqr", rows, q_columns, reflectors, q.data, lead, tau.data, work.data, _slot(k, I64, lwork), info)
    _fail_unless_zero(k, info)
    return _c_order(k, _column_major_view(k, q.data, m, columns, m)), r


def _svd_sizes(k: KernelBuilder, m: ll.Value, n: ll.Value, jobz: str):
    """min(m, n), U's columns and Vh's rows for gesdd's `jobz`."""
    mn = _smaller(k, m, n)
    return (mn, *{"A": (m, n), "S": (mn, mn), "N": (k.i64(0), k.i64(0))}[jobz])


@lowers("linalg_svd")
def svd(k: KernelBuilder, v: ir.Value, a: ArrayValue):
    jobz = v.attrs["jobz"]
    m, n = a.sizes[-2:]
    mn, u_columns, vt_rows = _svd_sizes(k, m, n, jobz)
    cores = ((mn,),) if jobz == "N" else ((m, u_columns), (mn,), (vt_rows, n))
    return per_matrix(k, v, (a,), cores, lambda x: _svd(k, x, jobz))


def _svd(k: KernelBuilder, a: ArrayValue, jobz: str):
    """NumPy's svd: gesdd on a column-major copy, with the workspace its query asks for (jobz
    'A', 'S' or 'N' as full_matrices and compute_uv say); U and Vh read back in C order, and the
    identity for them where min(m, n) is 0 (LAPACK leaves them unset)."""
    b = k.builder
    m, n = a.sizes
    mn, u_columns, vt_rows = _svd_sizes(k, m, n, jobz)
    matrix = column_major(k, a)
    s = allocate(k, ir.F64, (mn,))
    u = allocate(k, ir.F64, (_at_least_one(k, b.mul(u_columns, m)),))
    vt = allocate(k, ir.F64, (_at_least_one(k, b.mul(n, vt_rows)),))
    iwork = allocate(k, ir.I64, (_at_least_one(k, b.mul(mn, k.i64(8))),))
    lead, vt_lead = _at_least_one(k, m), _at_least_one(k, vt_rows)
    args = [_char(k, jobz), _slot(k, I64, m), _slot(k, I64, n), matrix.data, _slot(k, I64, lead), s.data, u.data,
            _slot(k, I64, lead), vt.data, _slot(k, I64, vt_lead)]
    info, query = _slot(k, I64, k.i64(0)), _slot(k, DOUBLE, k.f64(0.0))
    _call(k, "dgesdd", *args, query, _slot(k, I64, k.i64(-1)), iwork.data, info)
    _fail_unless_zero(k, info)
    lwork = _at_least_one(k, _work_size(k, query))
    work = allocate(k, ir.F64, (lwork,))
    _call(k, "dgesdd", *args, work.data, _slot(k, I64, lwork), iwork.data, info)
    _fail_unless_zero(k, info)                      # (no convergence: NumPy's LinAlgError)
    if jobz == "N":
        return s
    if jobz == "A":
        with b.if_then(b.icmp_signed("==", mn, k.i64(0))):
            for data, size in ((u.data, m), (vt.data, n)):
                square = ArrayValue(data, (size, size), (b.mul(size, k.i64(ITEM)), k.i64(ITEM)))
                for_each_index(k, (size, size), lambda idx, square=square: store_element(
                    k, square, idx, ir.F64, b.uitofp(b.icmp_signed("==", idx[0], idx[1]), DOUBLE)))
    return (_c_order(k, _column_major_view(k, u.data, m, u_columns, lead)), s,
            _c_order(k, _column_major_view(k, vt.data, vt_rows, n, vt_lead)))


@lowers("linalg_lstsq")
def lstsq(k: KernelBuilder, v: ir.Value, a: ArrayValue, rhs: ArrayValue, rcond: ll.Value):
    """NumPy's lstsq: gelsd on column-major copies (b's in a buffer of max(m, n) rows), with the
    workspaces its query asks for; x is the buffer's first n rows, and each column's residual
    the sum of the squares of its rows n..m-1 (added in order, as umath_linalg's abs2) where the
    rank is n and m > n. No rows, or no right-hand side: the Python function (NumPy pads them)."""
    b = k.builder
    m, n = a.sizes
    vector = len(rhs.sizes) == 1
    matrix = rhs if not vector else ArrayValue(rhs.data, (rhs.sizes[0], k.i64(1)), (rhs.strides[0], k.i64(0)))
    nrhs = matrix.sizes[1]
    k.fail_if(b.icmp_signed("!=", matrix.sizes[0], m), Status.FALLBACK)     # LinAlgError: incompatible
    k.fail_if(b.or_(b.icmp_signed("==", m, k.i64(0)), b.icmp_signed("==", nrhs, k.i64(0))), Status.FALLBACK)
    lead_b = _at_least_one(k, _larger(k, m, n))
    factors = column_major(k, a)
    solution = allocate(k, ir.F64, (nrhs, lead_b))     # (column-major: rows m..max(m, n) are gelsd's)
    copy_elements(k, matrix, _column_major_view(k, solution.data, m, nrhs, lead_b), ir.F64)
    s = allocate(k, ir.F64, (_smaller(k, m, n),))
    rank, info = _slot(k, I64, k.i64(0)), _slot(k, I64, k.i64(0))
    args = [_slot(k, I64, m), _slot(k, I64, n), _slot(k, I64, nrhs), factors.data, _slot(k, I64, _at_least_one(k, m)),
            solution.data, _slot(k, I64, lead_b), s.data, _slot(k, DOUBLE, rcond), rank]
    query, iwork_query = _slot(k, DOUBLE, k.f64(0.0)), _slot(k, I64, k.i64(0))
    _call(k, "dgelsd", *args, query, _slot(k, I64, k.i64(-1)), iwork_query, info)
    _fail_unless_zero(k, info)
    lwork = _work_size(k, query)
    work = allocate(k, ir.F64, (_at_least_one(k, lwork),))
    iwork = allocate(k, ir.I64, (_at_least_one(k, b.load(iwork_query, typ=I64)),))
    _call(k, "dgelsd", *args, work.data, _slot(k, I64, lwork), iwork.data, info)
    _fail_unless_zero(k, info)                      # (no convergence: NumPy's LinAlgError)
    found = b.load(rank, typ=I64)
    x = _c_order(k, _column_major_view(k, solution.data, n, nrhs, lead_b))
    if vector:
        x = ArrayValue(x.data, x.sizes[:1], x.strides[:1])
    full = b.and_(b.icmp_signed("==", found, n), b.icmp_signed(">", m, n))
    residuals = allocate(k, ir.F64, (b.select(full, nrhs, k.i64(0)),))
    view = _column_major_view(k, solution.data, lead_b, nrhs, lead_b)
    def column(j):
        def add(i, total):
            value = load_element(k, view, (b.add(n, i), j), ir.F64)
            return (b.fadd(total, b.fmul(value, value)),)
        (total,) = for_range(k, b.sub(m, n), add, (k.f64(0.0),))
        store_element(k, residuals, (j,), ir.F64, total)
    for_range(k, residuals.sizes[0], column)
    return x, residuals, b.trunc(found, ll.IntType(32)), s


@lowers("linalg_eig")
def eig(k: KernelBuilder, v: ir.Value, a: ArrayValue):
    n = _square(k, a)
    vectors = v.attrs["vectors"]
    cores = ((n,), (n,)) + (((n, n), (n, n)) if vectors else ())
    return per_matrix(k, v, (a,), cores, lambda m: _geev(k, m, vectors))


def _geev(k: KernelBuilder, a: ArrayValue, vectors: bool):
    """NumPy's eig (vectors) and eigvals: geev on a column-major copy, jobvl 'N' and jobvr 'V' or 'N',
    every leading dimension max(n, 1), with the workspace its query asks for (umath_linalg's
    init_geev); then the complex eigenvectors as its process_geev_results makes them."""
    b = k.builder
    n = _square(k, a)
    matrix = column_major(k, a)
    wr, wi = allocate(k, ir.F64, (n,)), allocate(k, ir.F64, (n,))
    vr = allocate(k, ir.F64, (_at_least_one(k, b.mul(n, n)),)) if vectors else wr
    lead = _slot(k, I64, _at_least_one(k, n))
    info, query = _slot(k, I64, k.i64(0)), _slot(k, DOUBLE, k.f64(0.0))
    args = [_char(k, "N"), _char(k, "V" if vectors else "N"), _slot(k, I64, n), matrix.data, lead, wr.data, wi.data,
            wr.data, lead, vr.data, lead]         # (vl: not referenced with jobvl 'N')
    _call(k, "dgeev", *args, query, _slot(k, I64, k.i64(-1)), info)
    _fail_unless_zero(k, info)
    lwork = _work_size(k, query)
    work = allocate(k, ir.F64, (_at_least_one(k, lwork),))
    _call(k, "dgeev", *args, work.data, _slot(k, I64, lwork), info)
    _fail_unless_zero(k, info)                      # (no convergence: NumPy's LinAlgError)
    if not vectors:
        return wr, wi
    return (wr, wi, *_complex_eigenvectors(k, _column_major_view(k, vr.data, n, n, n), wi, n))


def _complex_eigenvectors(k: KernelBuilder, vr: ArrayValue, wi: ArrayValue, n: ll.Value):
    """(real, imaginary) parts of the eigenvectors, from geev's real ones (umath_linalg's
    mk_geev_complex_eigenvectors): a real eigenvalue's column is itself (imaginary part +0.0);
    a complex pair's (columns j, j + 1) are vr[:, j] + i vr[:, j+1] and vr[:, j] - i vr[:, j+1]."""
    b = k.builder
    role = allocate(k, ir.I64, (n,))                # 0: real, 1: first of a pair, 2: second

    def scan(j, second):
        store_element(k, role, (j,), ir.I64, b.select(second, k.i64(2), b.select(
            b.fcmp_ordered("==", load_element(k, wi, (j,), ir.F64), k.f64(0.0)), k.i64(0), k.i64(1))))
        return (b.and_(b.not_(second), b.fcmp_unordered("!=", load_element(k, wi, (j,), ir.F64), k.f64(0.0))),)
    for_range(k, n, scan, (ll.Constant(ll.IntType(1), 0),))
    re, im = allocate(k, ir.F64, (n, n)), allocate(k, ir.F64, (n, n))

    def element(idx):
        r, c = idx
        kind = load_element(k, role, (c,), ir.I64)
        first, second = b.icmp_signed("==", kind, k.i64(1)), b.icmp_signed("==", kind, k.i64(2))
        last = b.sub(n, k.i64(1))
        partner = b.select(first, b.select(b.icmp_signed("<", c, last), b.add(c, k.i64(1)), c), c)
        real_column = b.select(second, b.sub(c, k.i64(1)), c)
        imaginary = load_element(k, vr, (r, partner), ir.F64)
        store_element(k, re, idx, ir.F64, load_element(k, vr, (r, real_column), ir.F64))
        store_element(k, im, idx, ir.F64, b.select(first, imaginary, b.select(second, b.fneg(imaginary),
                                                                                k.f64(0.0))))
    for_each_index(k, (n, n), element)
    return re, im
