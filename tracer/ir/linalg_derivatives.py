"""The derivative rules (`vjp=`) of the `np.linalg` ops (tracer.ir.linalg_ops): reverse mode, written
with the IR's own ops (matmul, transpose, linalg_solve, linalg_inv, elementwise ops, broadcasts;
tracer.ir.matrix_syms) on one matrix or a stack of them, so a gradient is compiled like any other
code and can be differentiated again. `ct` is the gradient of the op's result (for a tuple result:
a tuple with None where that part's gradient is zero), `out` the result itself.

    solve    x = a^-1 b:   gb = a^-T ct,  ga = -gb x^T
    inv      y = a^-1:     ga = -y^T ct y^T
    det      d = det a:    ga = ct d a^-T
    slogdet  log|det a|:   ga = ct a^-T (the sign has zero gradient)
    cholesky a = L L^T:    G = L^-T Phi(L^T ct) L^-1 (Phi: the lower triangle, its diagonal halved)
    eigh     a = V w V^T:  G = V (diag(gw) + F o (V^T gV)) V^T, F_ij = 1 / (w_j - w_i) off the diagonal
    eigvalsh               G = V diag(gw) V^T (V from an eigh of a)
    qr       a = Q R       (reduced: any m, n), as PyTorch's linalg_qr_backward
    svd      a = U S V^T   (as JAX's svd_jvp_rule, reversed; full_matrices=True: as PyTorch, what the
                           loss does with U's columns and Vh's rows past min(m, n) is ignored: they
                           are any basis of their space, not functions of a)

cholesky, eigh and eigvalsh read only the lower triangle of a (LAPACK's uplo 'L', as NumPy calls
them), so the gradient is the derivative of what NumPy computes: zero above the diagonal, and each
entry below it counts for both the places it stands for (`_from_lower`). JAX symmetrizes its input
instead, which splits the same gradient evenly between the two triangles; the two agree along any
symmetric change of a (so on any matrix the function itself makes symmetric).

Refused (UnsupportedError, where a gradient would flow): qr with mode='complete' (Q's columns past n
are not unique where m > n). Where the derivative does not exist (eigh's eigenvectors at a repeated
eigenvalue, svd's U and V at repeated singular values) or the rule solves with a singular matrix
(det, slogdet), the division by zero or the failed solve makes the compiled gradient fail at
run time (JAX gives inf or nan there); the gradient of the eigenvalues alone, or of the singular
values alone, never divides.
"""
from __future__ import annotations

from tracer.errors import UnsupportedError
from tracer.ir.array_ops import zeros_like
from tracer.ir.matrix_syms import (
    as_shape_of,
    column_slice,
    diagonal_matrix,
    diagonal_part,
    lower,
    mm,
    mT,
    off_diagonal,
    per_matrix,
    row_slice,
    safe_denominator,
    sizes,
    spread,
    square_of,
    with_diagonal,
)


def _parts(ct, count: int) -> list:
    """The gradients of a tuple result's parts: Syms, None where zero."""
    if isinstance(ct.value, tuple):
        return [None if c is None else type(ct)(c, ct.emitter) for c in ct.value]
    return [ct.apply_attrs("getitem", index=i) for i in range(count)]


def _part(out, i: int):
    return out.apply_attrs("getitem", index=i)


def _total(*terms):
    """The sum of the terms that are not None (None: all are)."""
    present = [t for t in terms if t is not None]
    if not present:
        return None
    total = present[0]
    for t in present[1:]:
        total = total + as_shape_of(t, total)
    return total


def _finish(g, a):
    """The gradient of a: zeros where the rule found none, typed as a."""
    return zeros_like(a, a) if g is None else as_shape_of(g, a)


def _solve(a, b):
    return a.apply("linalg_solve", b)


def _refuse(ct, message: str):
    raise UnsupportedError(message, getattr(ct.emitter, "loc", None))


def _from_lower(g):
    """The gradient of a matrix read through its lower triangle only (as the symmetric matrix it
    stands for), from G, the gradient of that symmetric matrix (along symmetric changes): G + G^T
    below the diagonal, G's diagonal, zeros above."""
    return lower(g + mT(g), strict=True) + diagonal_part(g)


def _inverse_t(a):
    return mT(a.apply("linalg_inv"))


# ----------------------------------------------------------------------------- solve, inv, det
def _solve_adjoint(ct, a, b):
    """gb for each matrix: a^-T ct (a stack with one vector b: each matrix's own, as columns)."""
    if b.type.rank == 1 and a.type.rank > 2:
        s = sizes(ct)
        column = ct.apply_attrs("broadcast_in_dim", *s, ct.constant(1), shape=(*ct.type.shape, 1),
                                dims=tuple(range(ct.type.rank)))
        solved = _solve(mT(a), column)
        return solved.apply_attrs("reduce", kind="sum", axes=(solved.type.rank - 1,), keepdims=False)
    return _solve(mT(a), ct)


def _solve_rule_a(ct, out, a, b):
    gb = _solve_adjoint(ct, a, b)
    if out.type.rank == a.type.rank - 1:            # x a vector per matrix: -gb x^T, an outer product
        return _finish(-(spread(gb, a, "rows") * spread(out, a, "cols")), a)
    return _finish(-mm(gb, mT(out)), a)


def _solve_rule_b(ct, out, a, b):
    gb = _solve_adjoint(ct, a, b)
    if b.type.rank == 1 and a.type.rank > 2:        # one vector for every matrix: the sum of their shares
        gb = gb.apply_attrs("reduce", kind="sum", axes=tuple(range(a.type.rank - 2)), keepdims=False)
    return _finish(gb, b)


def _inv_rule(ct, out, a):
    yt = mT(out)
    return _finish(-mm(mm(yt, ct), yt), a)


def _det_rule(ct, out, a):
    return _finish(per_matrix(ct * out, a) * _inverse_t(a), a)


def _slogdet_rule(ct, out, a):
    _, g_logdet = _parts(ct, 2)
    if g_logdet is None:
        return zeros_like(a, a)
    return _finish(per_matrix(g_logdet, a) * _inverse_t(a), a)


# -------------------------------------------------------------------- cholesky, eigh, eigvalsh
def _cholesky_rule(ct, out, a):
    lt = mT(out)
    p = mm(lt, ct)
    phi = lower(p, strict=True) + diagonal_part(p) * 0.5
    g = _solve(lt, mT(_solve(lt, mT(phi))))            # L^-T Phi L^-1
    return _finish(_from_lower(as_shape_of(g, a)), a)


def _scaled_columns(x, v):
    """x with column j times v[j]: x @ diag(v)."""
    return x * spread(v, x, "cols")


def _over_gaps(x, v):
    """F o x with F_ij = 1 / (v_j - v_i) off the diagonal, 0 on it (the diagonal's quotient is never
    computed: a division by zero would raise the floating-point flag that makes compiled NumPy code
    run as Python)."""
    gaps = spread(v, x, "cols") - spread(v, x, "rows")
    return off_diagonal(x / safe_denominator(with_diagonal(gaps, 1.0)))


def _eigh_rule(ct, out, a):
    gw, gv = _parts(ct, 2)
    w, v = _part(out, 0), _part(out, 1)
    if gv is None:
        g = None if gw is None else mm(_scaled_columns(v, gw), mT(v))
    else:
        vtgv = mm(mT(v), gv)
        inner = _over_gaps(vtgv, w)                       # F o (V^T gV)
        if gw is not None:
            inner = inner + diagonal_matrix(gw, vtgv)
        g = mm(mm(v, inner), mT(v))
    return _finish(None if g is None else _from_lower(as_shape_of(g, a)), a)


def _eigvalsh_rule(ct, out, a):
    v = _part(a.apply("linalg_eigh"), 1)
    return _finish(_from_lower(as_shape_of(mm(_scaled_columns(v, ct), mT(v)), a)), a)


# --------------------------------------------------------------------------------- qr, svd
def _smaller(m, n):
    """min(m, n) of two i64 Syms."""
    return (m < n).select(m, n)


def _static_min(a):
    m, n = a.type.shape[-2:]
    return None if m is None or n is None else min(m, n)


def _qr_rule(ct, out, a, complete):
    """a = [X | Y] with X its first k = min(m, n) columns: Q R_x = X, R = [R_x | Q^T Y] (Y empty
    when m >= n). Then gX = (gQ' + Q N) R_x^-T with gQ' = gQ + Y gR_y^T, K = Q^T gQ' - gR_x R_x^T,
    N = tril(K - K^T, -1) - K; gY = Q gR_y."""
    m, n = a.type.shape[-2:]
    if complete and (m is None or n is None or m > n):
        _refuse(ct, "np.linalg.qr(..., mode='complete') has no gradient here (Q's columns past n are not "
                    "unique where the matrix has more rows than columns): use mode='reduced'")
    gq, gr = _parts(ct, 2)
    if gq is None and gr is None:
        return zeros_like(a, a)
    q, r = _part(out, 0), _part(out, 1)
    s = sizes(a)
    k, width = _smaller(s[-2], s[-1]), _static_min(a)
    rest = None if n is None or width is None else n - width
    rx = column_slice(r, ct.constant(0), k, width)
    grx = gry = y_gry = None
    if gr is not None:
        grx, gry = column_slice(gr, ct.constant(0), k, width), column_slice(gr, k, s[-1], rest)
        y_gry = mm(column_slice(a, k, s[-1], rest), mT(gry))
    gq = _total(gq, y_gry)
    kk = _total(None if gq is None else mm(mT(q), gq), None if grx is None else -mm(grx, mT(rx)))
    n_ = lower(kk - mT(kk), strict=True) - kk
    m_ = _total(gq, mm(q, n_))
    gx = mT(_solve(rx, mT(m_)))
    ga = zeros_like(a, a)
    part = column_slice(ga, ct.constant(0), k, width)
    part.apply_attrs("store", as_shape_of(gx, part))
    if gry is not None:
        part = column_slice(ga, k, s[-1], rest)
        part.apply_attrs("store", as_shape_of(mm(q, gry), part))
    return ga


def _safe_reciprocal(s):
    """1 / s, 0 where s is 0 (as JAX's s_inv; no division by zero is computed)."""
    zero = s.eq(0.0)
    return zero.select(0.0, 1.0 / safe_denominator(zero.select(1.0, s)))


def _svd_rule(ct, out, a, jobz):
    if jobz == "N":                               # the singular values alone: U diag(gs) V^T
        triple = a.apply_attrs("linalg_svd", jobz="S")
        return _finish(mm(_scaled_columns(_part(triple, 0), ct), _part(triple, 2)), a)
    gu, gs, gvt = _parts(ct, 3)
    u, s, vt = _part(out, 0), _part(out, 1), _part(out, 2)
    if jobz == "A":                               # the columns past k = min(m, n): no gradient
        size, width = sizes(a), _static_min(a)
        k, zero = _smaller(size[-2], size[-1]), ct.constant(0)
        u, vt = column_slice(u, zero, k, width), row_slice(vt, zero, k, width)
        gu = None if gu is None else column_slice(gu, zero, k, width)
        gvt = None if gvt is None else row_slice(gvt, zero, k, width)
    v, gv = mT(vt), None if gvt is None else mT(gvt)
    square = square_of(s)
    j = None if gu is None else _over_gaps(as_shape_of(mm(mT(u), gu), square), s * s)
    h = None if gv is None else _over_gaps(as_shape_of(mm(vt, gv), square), s * s)
    gds = _total(None if gs is None else diagonal_matrix(gs, square),
                 None if j is None else _scaled_columns(j + mT(j), s),
                 None if h is None else mT(_scaled_columns(h + mT(h), s)))     # S (H + H^T) = ((H + H^T) S)^T
    inverse = _safe_reciprocal(s)
    terms = [None if gds is None else mm(mm(u, as_shape_of(gds, square)), vt)]
    if gu is not None:                            # (I - U U^T) gU S^-1 V^T: zero where m <= n
        terms.append(mm(_scaled_columns(gu - mm(u, mm(mT(u), gu)), inverse), vt))
    if gv is not None:                            # U ((I - V V^T) gV S^-1)^T: zero where m >= n
        terms.append(mm(u, mT(_scaled_columns(gv - mm(v, mm(vt, gv)), inverse))))
    return _finish(_total(*terms), a)


VJP = {
    "linalg_solve": (_solve_rule_a, _solve_rule_b),
    "linalg_inv": (_inv_rule,),
    "linalg_det": (_det_rule,),
    "linalg_slogdet": (_slogdet_rule,),
    "linalg_cholesky": (_cholesky_rule,),
    "linalg_eigh": (_eigh_rule,),
    "linalg_eigvalsh": (_eigvalsh_rule,),
    "linalg_qr": (_qr_rule,),
    "linalg_svd": (_svd_rule,),
}
