"""Lowering of `matmul`: out[i, j] = the sum over p of x[i, p] * y[p, j], each sum in the order
of p, so the result is the plain triple loop's, bit for bit (with attrs `fused`, set by FMA
fusion, every term is added by one fma, still in that order).

Rows of x in blocks of TILE_ROWS, when y's rows are contiguous (the common case: a layer's
weights; else, for TILE_ROWS rows or more, on a contiguous copy of y), make the output in tiles that stay in vector registers for the whole sum: TILE_ROWS
rows by 8 columns (2 vectors of 4 doubles per row). Each step of p loads the tile's part of y[p]
once and broadcasts each row's x[i, p] once, and the tile's 12 independent accumulators keep the
FMA units busy (12 + 2 loaded vectors + 1 broadcast: AVX2's 16 registers). The last tile of a
block masks the columns past the end. Rows left over (all of them for a batch of one) go row by
row, four terms of the sum per pass over the output row, which LLVM vectorizes along the row:
that reads y front to back, which a lone row needs (a tile of one row would walk y's columns,
and measured slower).

A matrix whose columns are contiguous (x.T of a C-contiguous x) times a vector goes LANES rows
at a time too, a vector of each column's elements per step, each lane its own row's sum in order.

A vector times a vector (np.dot of two 1-d arrays, `v @ v`) is one long sum, which in order
waits on each addition: it goes in DOT_LANES partial sums instead (4 vector accumulators), as
BLAS does for NumPy, halved pairwise at the end, then the terms left over (the IR evaluator's
order, tracer.ir.array_ops._dot_in_lanes).
"""
from __future__ import annotations

from llvmlite import ir as ll

from codegen.arrays import (
    ITEM_SIZE,
    allocate,
    check_same_sizes,
    contiguous_strides,
    copy_to_new,
    element_address,
    load_element,
    store_element,
)
from codegen.kernel import DOUBLE, I1, I32, I64, PTR, ArrayValue, KernelBuilder, for_range, for_rows
from codegen.lowerings import lowers
from tracer import ir
from tracer.ir.array_ops import DOT_LANES

ITEM = ITEM_SIZE[ir.F64]
LANES = 4                       # doubles per vector (AVX2; other targets split or scalarize it)
VECTOR = ll.VectorType(DOUBLE, LANES)
TILE_ROWS = 6                   # rows of a tile; each has TILE_VECTORS vectors of columns (6 rows: 20%
                                # faster than 4 at batch 32 and 128 in B3's products)
TILE_VECTORS = 2
TERMS = 4                       # terms of the sum per pass over an output row (rows left over)


@lowers("matmul")
def matmul(k: KernelBuilder, v: ir.Value, x: ArrayValue, y: ArrayValue):
    b = k.builder
    zero = k.i64(0)
    fused = v.attrs.get("fused", False)
    m, m_stride = (x.sizes[0], x.strides[0]) if len(x.sizes) == 2 else (k.i64(1), zero)
    n, n_stride = (y.sizes[1], y.strides[1]) if len(y.sizes) == 2 else (k.i64(1), zero)
    depth = x.sizes[-1]
    check_same_sizes(k, (depth,), (y.sizes[0],))
    if len(x.sizes) == 1 and len(y.sizes) == 1:
        return _dot(k, x, y, fused)
    a = ArrayValue(x.data, (m, depth), (m_stride, x.strides[-1]))
    c = ArrayValue(y.data, (depth, n), (y.strides[0], n_stride))
    out = allocate(k, ir.F64, (m, n))
    start = k.f64(0.0)          # NumPy's dot and matmul loops (and BLAS) start their sums at +0.0
    if len(y.sizes) == 1 and len(x.sizes) == 2:     # a matrix times a vector: blocks of rows at once
        with b.if_else(b.icmp_signed("==", a.strides[1], k.i64(ITEM))) as (rows_contiguous, strided):
            with rows_contiguous:
                _by_rows(k, a, c, out, start, fused, _matvec_blocks(k, a, c, out, start, fused))
            with strided:
                with b.if_else(b.icmp_signed("==", a.strides[0], k.i64(ITEM))) as (columns_contiguous, other):
                    with columns_contiguous:      # (x.T @ v of a C-contiguous x)
                        _matvec_columns(k, a, c, out, start, fused)
                    with other:
                        _by_rows(k, a, c, out, start, fused, k.i64(0))
        return ArrayValue(out.data, (m,), contiguous_strides(k, ir.F64, (m,)))
    with b.if_else(b.icmp_signed("==", c.strides[1], k.i64(ITEM))) as (contiguous, strided):
        with contiguous:        # that stride a constant: the row loop vectorizes with plain loads
            unit = ArrayValue(c.data, c.sizes, (c.strides[0], k.i64(ITEM)))
            tiled_rows = k.i64(0)
            if not (isinstance(m, ll.Constant) and m.constant < TILE_ROWS):   # (a batch of one: none)
                tiled_rows = _tiles(k, a, unit, out, start, fused)
            _by_rows(k, a, unit, out, start, fused, tiled_rows)
        with strided:
            if isinstance(m, ll.Constant) and m.constant < TILE_ROWS:
                _by_rows(k, a, c, out, start, fused, k.i64(0))
            else:
                with b.if_else(b.icmp_signed(">=", m, k.i64(TILE_ROWS))) as (many, few):
                    with many:            # (x @ w.T: y's rows strided) a contiguous copy of y, then tiles
                        dense = copy_to_new(k, c, ir.F64)
                        unit = ArrayValue(dense.data, c.sizes, (dense.strides[0], k.i64(ITEM)))
                        _by_rows(k, a, unit, out, start, fused, _tiles(k, a, unit, out, start, fused))
                    with few:
                        _by_rows(k, a, c, out, start, fused, k.i64(0))
    if not isinstance(v.type, ir.ArrayType):
        return load_element(k, out, (zero, zero), ir.F64)
    sizes = tuple(s for s, kept in ((m, len(x.sizes) == 2), (n, len(y.sizes) == 2)) if kept)
    return ArrayValue(out.data, sizes, contiguous_strides(k, ir.F64, sizes))


def _multiply_add(k: KernelBuilder, fused: bool, coefficient, term, total):
    """total + coefficient * term: one fma when fused, else a multiply then an add."""
    b = k.builder
    if not fused:
        return b.fadd(total, b.fmul(coefficient, term))
    if isinstance(total.type, ll.VectorType):
        return k.call_intrinsic(f"llvm.fma.v{LANES}f64", VECTOR, [VECTOR] * 3, coefficient, term, total)
    return k.intrinsic("fma", coefficient, term, total)


# ------------------------------------------------------------------ y's rows contiguous: tiles
def _tiles(k: KernelBuilder, a: ArrayValue, c: ArrayValue, out: ArrayValue, start, fused: bool):
    """The rows of out in whole blocks of TILE_ROWS, tile by tile; returns how many rows that is."""
    b = k.builder
    blocks = b.sdiv(a.sizes[0], k.i64(TILE_ROWS))
    for_rows(k, blocks, b.mul(a.sizes[1], c.sizes[1]),
             lambda block: _row_of_tiles(k, a, c, out, start, fused, b.mul(block, k.i64(TILE_ROWS))), weight=TILE_ROWS // 2)
    return b.mul(blocks, k.i64(TILE_ROWS))


def _row_of_tiles(k: KernelBuilder, a, c, out, start, fused: bool, first_row) -> None:
    """The tiles of the TILE_ROWS rows from `first_row`, left to right; the last one masked."""
    b = k.builder
    n = c.sizes[1]
    width = k.i64(LANES * TILE_VECTORS)
    whole = b.sdiv(n, width)
    for_range(k, whole, lambda t: _tile(k, a, c, out, start, fused, first_row, b.mul(t, width)))
    left = b.mul(whole, width)
    with b.if_then(b.icmp_signed("<", left, n)):
        _tile(k, a, c, out, start, fused, first_row, left, masked=True)


def _tile(k: KernelBuilder, a, c, out, start, fused: bool, first_row, first_column, masked: bool = False) -> None:
    """out[first_row:+TILE_ROWS, first_column:+LANES*TILE_VECTORS] as vector accumulators summed
    over p in order; with `masked`, the columns from n on are neither read nor written."""
    b = k.builder
    n, vectors = c.sizes[1], TILE_VECTORS
    columns = [b.add(first_column, k.i64(LANES * j)) for j in range(vectors)]
    masks = [_lanes_below(k, column, n) for column in columns] if masked else [None] * vectors
    row_index = [b.add(first_row, k.i64(r)) for r in range(TILE_ROWS)]

    def step(p, totals):
        terms = [_load(k, element_address(k, c, (p, column)), mask) for column, mask in zip(columns, masks)]
        new = []
        for r, i in enumerate(row_index):
            coefficient = _splat(k, load_element(k, a, (i, p), ir.F64))
            for j, term in enumerate(terms):
                new.append(_multiply_add(k, fused, coefficient, term, totals[r * vectors + j]))
        return new
    totals = for_range(k, a.sizes[1], lambda p, *totals: step(p, totals), [_splat(k, start)] * (TILE_ROWS * vectors))
    for r, i in enumerate(row_index):
        for j, (column, mask) in enumerate(zip(columns, masks)):
            _store(k, totals[r * vectors + j], element_address(k, out, (i, column)), mask)


def _splat(k: KernelBuilder, x, vector: ll.VectorType = VECTOR):
    """A vector with `x` in every lane."""
    b = k.builder
    undefined = ll.Constant(vector, ll.Undefined)
    one = b.insert_element(undefined, x, ll.Constant(I32, 0))
    return b.shuffle_vector(one, undefined, ll.Constant(ll.VectorType(I32, LANES), [0] * LANES))


def _lanes_below(k: KernelBuilder, column, n):
    """<column + l < n for each lane l>: the mask of a partial vector."""
    indices = ll.VectorType(I64, LANES)
    lanes = ll.Constant(indices, list(range(LANES)))
    return k.builder.icmp_signed("<", k.builder.add(_splat(k, column, indices), lanes), _splat(k, n, indices))


def _load(k: KernelBuilder, address, mask):
    if mask is None:
        return k.builder.load(address, typ=VECTOR, align=ITEM)
    return k.call_intrinsic(f"llvm.masked.load.v{LANES}f64.p0", VECTOR, [PTR, I32, ll.VectorType(I1, LANES), VECTOR],
                            address, ll.Constant(I32, ITEM), mask, ll.Constant(VECTOR, [0.0] * LANES))


def _store(k: KernelBuilder, value, address, mask) -> None:
    if mask is None:
        k.builder.store(value, address, align=ITEM)
        return
    k.call_intrinsic(f"llvm.masked.store.v{LANES}f64.p0", ll.VoidType(), [VECTOR, PTR, I32, ll.VectorType(I1, LANES)],
                     value, address, ll.Constant(I32, ITEM), mask)


# ------------------------------------------------------- a matrix times a vector: row blocks
MATVEC_ROWS = 2 * LANES          # rows summed at once: a vector of LANES rows per accumulator


def _matvec_blocks(k: KernelBuilder, a: ArrayValue, c: ArrayValue, out: ArrayValue, start, fused: bool):
    """out[i] = sum over p of a[i, p] * c[p, 0], p in order, for the rows in whole blocks of
    MATVEC_ROWS (a's rows contiguous); returns how many rows that is. Each accumulator is a vector
    of LANES rows: a's rows are read LANES elements at a time and transposed in registers (a 4x4
    transpose, 8 shuffles), so that each lane adds its own row's terms in order, as the row by
    row loop does, LANES rows for one fma."""
    b = k.builder
    depth = a.sizes[1]
    blocks = b.sdiv(a.sizes[0], k.i64(MATVEC_ROWS))
    groups = MATVEC_ROWS // LANES

    def block(index):
        first = b.mul(index, k.i64(MATVEC_ROWS))
        rows = [b.add(first, k.i64(r)) for r in range(MATVEC_ROWS)]

        def x(p):
            return _splat(k, load_element(k, c, (p, k.i64(0)), ir.F64))

        def four(p, totals):
            vectors = [_load(k, element_address(k, a, (i, p)), None) for i in rows]
            new = list(totals)
            for g in range(groups):
                columns = _transpose(b, vectors[g * LANES:(g + 1) * LANES])
                for q, column in enumerate(columns):
                    new[g] = _multiply_add(k, fused, column, x(b.add(p, k.i64(q))), new[g])
            return new
        chunks = b.sdiv(depth, k.i64(LANES))
        totals = for_range(k, chunks, lambda chunk, *totals: four(b.mul(chunk, k.i64(LANES)), totals),
                           [_splat(k, start)] * groups)
        done = b.mul(chunks, k.i64(LANES))

        def one(p, totals):
            p = b.add(done, p)
            new = []
            for g in range(groups):
                column = ll.Constant(VECTOR, ll.Undefined)
                for lane in range(LANES):
                    column = b.insert_element(column, load_element(k, a, (rows[g * LANES + lane], p), ir.F64),
                                              ll.Constant(I32, lane))
                new.append(_multiply_add(k, fused, column, x(p), totals[g]))
            return new
        totals = for_range(k, b.sub(depth, done), lambda p, *totals: one(p, totals), totals)
        for g, total in enumerate(totals):
            for lane in range(LANES):
                store_element(k, out, (rows[g * LANES + lane], k.i64(0)), ir.F64,
                              b.extract_element(total, ll.Constant(I32, lane)))
    for_rows(k, blocks, b.mul(depth, k.i64(MATVEC_ROWS)), block, weight=MATVEC_ROWS // 2)
    return b.mul(blocks, k.i64(MATVEC_ROWS))


def _matvec_columns(k: KernelBuilder, a: ArrayValue, c: ArrayValue, out: ArrayValue, start, fused: bool) -> None:
    """out[i] = sum over p of a[i, p] * c[p, 0], p in order, where a's columns are contiguous:
    LANES rows at once, a vector of each column's LANES elements (masked past the last row)
    times c[p], so that each lane adds its own row's terms in order."""
    b = k.builder
    m, depth = a.sizes
    blocks = b.sdiv(b.add(m, k.i64(LANES - 1)), k.i64(LANES))

    def block(index):
        first = b.mul(index, k.i64(LANES))
        mask = _lanes_below(k, first, m)

        def step(p, total):
            column = _load(k, element_address(k, a, (first, p)), mask)
            return [_multiply_add(k, fused, column, _splat(k, load_element(k, c, (p, k.i64(0)), ir.F64)), total)]
        total, = for_range(k, depth, step, [_splat(k, start)])
        _store(k, total, element_address(k, out, (first, k.i64(0))), mask)
    for_rows(k, blocks, b.mul(depth, k.i64(LANES)), block, weight=2)


def _transpose(b: ll.IRBuilder, rows: list) -> list:
    """The columns of the LANES x LANES block whose rows are `rows` (LANES = 4)."""
    def shuffle(x, y, lanes):
        return b.shuffle_vector(x, y, ll.Constant(ll.VectorType(I32, LANES), lanes))
    r0, r1, r2, r3 = rows
    t0, t1 = shuffle(r0, r1, [0, 4, 2, 6]), shuffle(r0, r1, [1, 5, 3, 7])
    t2, t3 = shuffle(r2, r3, [0, 4, 2, 6]), shuffle(r2, r3, [1, 5, 3, 7])
    return [shuffle(t0, t2, [0, 1, 4, 5]), shuffle(t1, t3, [0, 1, 4, 5]),
            shuffle(t0, t2, [2, 3, 6, 7]), shuffle(t1, t3, [2, 3, 6, 7])]


# ------------------------------------------------------------- a vector times a vector: lanes
DOT_VECTORS = DOT_LANES // LANES     # accumulators: independent sums keep the FMA units busy


def _dot(k: KernelBuilder, x: ArrayValue, y: ArrayValue, fused: bool):
    """x @ y in DOT_LANES partial sums, halved pairwise, then the terms left over in order (the
    evaluator's `_dot_in_lanes`): vector loads where both are contiguous, else element by element."""
    b = k.builder
    total = k.stack_slot(DOUBLE, "dot")
    unit = b.and_(b.icmp_signed("==", x.strides[0], k.i64(ITEM)), b.icmp_signed("==", y.strides[0], k.i64(ITEM)))
    with b.if_else(unit) as (contiguous, strided):
        with contiguous:
            b.store(_dot_sum(k, *(ArrayValue(a.data, a.sizes, (k.i64(ITEM),)) for a in (x, y)), fused, True), total)
        with strided:
            b.store(_dot_sum(k, x, y, fused, False), total)
    return b.load(total, typ=DOUBLE)


def _dot_sum(k: KernelBuilder, x: ArrayValue, y: ArrayValue, fused: bool, contiguous: bool):
    b = k.builder
    n = x.sizes[0]
    blocks = b.sdiv(n, k.i64(DOT_LANES))

    def vector(a, p):
        if contiguous:
            return _load(k, element_address(k, a, (p,)), None)
        lanes = ll.Constant(VECTOR, ll.Undefined)
        for lane in range(LANES):
            lanes = b.insert_element(lanes, load_element(k, a, (b.add(p, k.i64(lane)),), ir.F64), ll.Constant(I32, lane))
        return lanes

    def block(i, sums):
        first = b.mul(i, k.i64(DOT_LANES))
        places = [b.add(first, k.i64(LANES * j)) for j in range(DOT_VECTORS)]
        return [_multiply_add(k, fused, vector(x, p), vector(y, p), s) for p, s in zip(places, sums)]
    sums = for_range(k, blocks, lambda i, *sums: block(i, sums), [_splat(k, k.f64(0.0))] * DOT_VECTORS)
    while len(sums) > 1:                  # sum l plus sum l + half, down to one vector
        half = len(sums) // 2
        sums = [b.fadd(sums[i], sums[i + half]) for i in range(half)]
    lanes = sums[0]
    while lanes.type.count > 1:           # then within it, lane l plus lane l + half
        half = lanes.type.count // 2
        low, high = (b.shuffle_vector(lanes, lanes, ll.Constant(ll.VectorType(I32, half), list(range(start, start + half))))
                     for start in (0, half))
        lanes = b.fadd(low, high)
    whole = b.mul(blocks, k.i64(DOT_LANES))

    def term(t, total):
        p = b.add(whole, t)
        return [_multiply_add(k, fused, load_element(k, x, (p,), ir.F64), load_element(k, y, (p,), ir.F64), total)]
    return for_range(k, b.sub(n, whole), lambda t, total: term(t, total),
                     [b.extract_element(lanes, ll.Constant(I32, 0))])[0]


# ------------------------------------------------------------------ y strided: row by row
def _by_rows(k: KernelBuilder, a: ArrayValue, c: ArrayValue, out: ArrayValue, start, fused: bool, first) -> None:
    """For the rows i of out from `first` on: out[i, :] = start, then out[i, j] += a[i, p] * c[p, j]
    for p in order, TERMS terms per pass over the row (the same additions in the same order, a
    quarter of the loads and stores of out[i, :])."""
    b = k.builder
    m, depth, n = a.sizes[0], a.sizes[1], c.sizes[1]

    def row(i):
        i = b.add(first, i)
        for_range(k, n, lambda j: store_element(k, out, (i, j), ir.F64, start))

        def terms(p, count):
            ps = [b.add(p, k.i64(q)) for q in range(count)]
            coefficients = [load_element(k, a, (i, pq), ir.F64) for pq in ps]

            def column(j):
                total = load_element(k, out, (i, j), ir.F64)
                for coefficient, pq in zip(coefficients, ps):
                    total = _multiply_add(k, fused, coefficient, load_element(k, c, (pq, j), ir.F64), total)
                store_element(k, out, (i, j), ir.F64, total)
            for_range(k, n, column)
        blocks = b.sdiv(depth, k.i64(TERMS))
        for_range(k, blocks, lambda block: terms(b.mul(block, k.i64(TERMS)), TERMS))
        done = b.mul(blocks, k.i64(TERMS))
        for_range(k, b.sub(depth, done), lambda p: terms(b.add(done, p), 1))
    for_rows(k, b.sub(m, first), b.mul(depth, n), row, weight=1)
