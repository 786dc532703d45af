"""Lowering of `mask_select` (x[mask]) and `mask_update` (a copy of x with x[mask] = values;
tracer/ir/mask_ops.py).

Both check the mask's sizes against x's leading ones (SHAPE_MISMATCH: NumPy's IndexError), then
count the true elements in one pass over the mask (a flat one where it is C-contiguous).
`mask_select` allocates (count, *rest) and copies, in a second pass, the elements (or sub-arrays
of the rest's shape) where the mask is true into rows 0, 1, ... of it. `mask_update` copies x
(not where x is dead after: codegen.ownership, nor with attrs['into'], an argument written in
place by tracer.transforms.passes.inplace), checks that array values have count rows
(SHAPE_MISMATCH: NumPy's ValueError) and the rest's sizes, all before it writes, and writes row
j of the values (or the one scalar) at the j-th true position. The running position is a stack
slot (SROA makes it a register). Where the mask has all of x's axes, both go without branches
(random masks make branches mispredict): every element of x is stored at the running position,
which advances past the kept ones (`mask_select` allocates one element more for the last
store), and `mask_update` rewrites each element with itself or the next value (or the scalar).
Over C-contiguous arrays that is one flat loop, but for `mask_update` of array values, which
there reads the mask 64 bytes at a time into a word of bits and writes only at its set bits
(_update_by_words).
"""
from __future__ import annotations

from llvmlite import ir as ll

from codegen.arrays import (
    allocate,
    check_same_sizes,
    copy_elements,
    copy_to_new,
    element_address,
    element_count,
    flat_view,
    for_each_index,
    is_contiguous,
    load_element,
    store_element,
)
from codegen.kernel import I64, ArrayValue, KernelBuilder, for_range
from codegen.lowerings import lowers
from tracer import ir
from tracer.errors import Status


def _count(k: KernelBuilder, mask: ArrayValue) -> ll.Value:
    """The number of true elements of `mask` (in one flat loop where it is C-contiguous)."""
    b = k.builder
    total = k.stack_slot(I64, "count")
    b.store(k.i64(0), total)

    def count(mask, _):
        def body(idx):
            bit = load_element(k, mask, idx, ir.BOOL)
            b.store(b.add(b.load(total, typ=I64), b.zext(bit, I64)), total)
        for_each_index(k, mask.sizes, body)
    _whole(k, mask, [], count)
    return b.load(total, typ=I64)


def _for_true(k: KernelBuilder, mask: ArrayValue, body) -> None:
    """body(idx, j) for each true element of `mask` at idx, j = 0, 1, ... (C order)."""
    b = k.builder
    position = k.stack_slot(I64, "position")
    b.store(k.i64(0), position)

    def visit(idx):
        with b.if_then(load_element(k, mask, idx, ir.BOOL)):
            j = b.load(position, typ=I64)
            body(idx, j)
            b.store(b.add(j, k.i64(1)), position)
    for_each_index(k, mask.sizes, visit)


def _sub(k: KernelBuilder, a: ArrayValue, idx) -> ArrayValue:
    """The view a[idx] (idx: indices of a's leading axes, in bounds)."""
    data = element_address(k, a, tuple(idx))
    return ArrayValue(data, a.sizes[len(idx):], a.strides[len(idx):])


def _whole(k: KernelBuilder, mask: ArrayValue, arrays: list, emit, emit_flat=None) -> None:
    """emit(mask, arrays) on flat 1-D views where the mask has all of x's axes and every array
    is C-contiguous (one loop over the elements, not one per row; `emit_flat` there if given),
    else on the arrays as they are."""
    b = k.builder
    whole = ll.Constant(ll.IntType(1), 1)
    for a, t in [(mask, ir.BOOL), *arrays]:
        whole = b.and_(whole, is_contiguous(k, a, t))
    n = element_count(k, mask.sizes)
    with b.if_else(whole) as (flat, rows):
        with flat:
            (emit_flat or emit)(flat_view(k, mask, ir.BOOL, n), [flat_view(k, a, t, n) for a, t in arrays])
        with rows:
            emit(mask, [a for a, _ in arrays])


def _sparse(k: KernelBuilder, count, mask: ArrayValue):
    """Whether at most one element in 8 is true: then a branch per element is mostly predicted,
    and cheaper than a store per element."""
    return k.builder.icmp_signed("<=", k.builder.mul(count, k.i64(8)), element_count(k, mask.sizes))


@lowers("mask_select")
def mask_select(k: KernelBuilder, v: ir.Value, x: ArrayValue, mask: ArrayValue):
    b = k.builder
    dtype = v.type.dtype
    rank = len(mask.sizes)
    check_same_sizes(k, mask.sizes, x.sizes[:rank])
    rest = x.sizes[rank:]
    if rest:
        out = allocate(k, dtype, (_count(k, mask),) + tuple(rest))
        _for_true(k, mask, lambda idx, j: copy_elements(k, _sub(k, x, idx), _sub(k, out, (j,)), dtype))
        return out
    count = _count(k, mask)
    room = allocate(k, dtype, (b.add(count, k.i64(1)),))      # one more: every element is stored (below)

    def select(mask, arrays):
        source, = arrays
        with b.if_else(_sparse(k, count, mask)) as (few, many):
            with few:
                _for_true(k, mask, lambda idx, j: store_element(k, room, (j,), dtype, load_element(k, source, idx, dtype)))
            with many:
                _select_all(mask, source)

    def _select_all(mask, source):        # branch-free: each element stored, the next place advanced if kept
        position = k.stack_slot(I64, "position")
        b.store(k.i64(0), position)

        def visit(idx):
            j = b.load(position, typ=I64)
            store_element(k, room, (j,), dtype, load_element(k, source, idx, dtype))
            b.store(b.add(j, b.zext(load_element(k, mask, idx, ir.BOOL), I64)), position)
        for_each_index(k, mask.sizes, visit)
    _whole(k, mask, [(x, dtype)], select)
    return ArrayValue(room.data, (count,), room.strides)


@lowers("mask_update")
def mask_update(k: KernelBuilder, v: ir.Value, x: ArrayValue, mask: ArrayValue, values):
    b = k.builder
    dtype = v.type.dtype
    rank = len(mask.sizes)
    check_same_sizes(k, mask.sizes, x.sizes[:rank])
    rest = x.sizes[rank:]
    # x's own memory, dead after (codegen.ownership), or an argument written in place (attrs into)
    out = x if v in k.reused or v.attrs.get("into") else copy_to_new(k, x, dtype)
    if isinstance(values, ArrayValue):
        count = _count(k, mask)
        k.fail_if(b.icmp_signed("!=", values.sizes[0], count), Status.SHAPE_MISMATCH)
        check_same_sizes(k, values.sizes[1:], rest)
    if rest:
        if isinstance(values, ArrayValue):
            _for_true(k, mask, lambda idx, j: copy_elements(k, _sub(k, values, (j,)), _sub(k, out, idx), dtype))
        else:
            _for_true(k, mask, lambda idx, j: for_each_index(
                k, rest, lambda r: store_element(k, _sub(k, out, idx), r, dtype, values)))
        return out

    def update(mask, arrays):
        target, = arrays                  # branch-free: every element rewritten, itself or the next value
        if not isinstance(values, ArrayValue):
            for_each_index(k, mask.sizes, lambda idx: store_element(k, target, idx, dtype, b.select(
                load_element(k, mask, idx, ir.BOOL), values, load_element(k, target, idx, dtype))))
            return
        with b.if_else(_sparse(k, values.sizes[0], mask)) as (few, many):
            with few:
                _for_true(k, mask, lambda idx, j: store_element(k, target, idx, dtype, load_element(k, values, (j,), dtype)))
            with many:
                _update_all(mask, target)

    def _update_all(mask, target):
        position = k.stack_slot(I64, "position")
        b.store(k.i64(0), position)
        last = b.sub(values.sizes[0], k.i64(1))

        def visit(idx):
            j = b.load(position, typ=I64)
            bit = load_element(k, mask, idx, ir.BOOL)
            new = load_element(k, values, (b.select(b.icmp_signed("<", j, last), j, last),), dtype)
            store_element(k, target, idx, dtype, b.select(bit, new, load_element(k, target, idx, dtype)))
            b.store(b.add(j, b.zext(bit, I64)), position)
        with b.if_then(b.icmp_signed(">", values.sizes[0], k.i64(0))):   # (none: nothing to write)
            for_each_index(k, mask.sizes, visit)
    flat = (lambda mask, arrays: _update_by_words(k, mask, arrays[0], values, dtype)) \
        if isinstance(values, ArrayValue) else None
    _whole(k, mask, [(out, dtype)], update, flat)
    return out


WORD = 64       # mask bytes compared at once (_update_by_words)


def _update_by_words(k: KernelBuilder, mask: ArrayValue, target: ArrayValue, values: ArrayValue, dtype) -> None:
    """target[i] = values[j] at the j-th true mask[i], over flat views (the mask's bytes
    contiguous): WORD mask bytes at a time become a word of bits (one vector compare), whose set
    bits are visited in order, a trip per true element: no write where the mask is false, and
    no branch per element to mispredict. The last elements (fewer than WORD) one by one."""
    b = k.builder
    n = mask.sizes[0]
    blocks = b.sdiv(n, k.i64(WORD))
    vector = ll.VectorType(ll.IntType(8), WORD)
    word = ll.IntType(WORD)

    def block(i, position):
        base = b.mul(i, k.i64(WORD))
        data = b.load(b.gep(mask.data, [base], source_etype=ll.IntType(8)), typ=vector, align=1)
        bits = b.zext(b.bitcast(b.icmp_unsigned("!=", data, ll.Constant(vector, None)), word), I64)
        start = b.block
        test, visit, done = (k.function.append_basic_block(x) for x in ("bits", "bit", "bits_done"))
        b.branch(test)
        b.position_at_end(test)
        left, j = b.phi(I64), b.phi(I64)
        left.add_incoming(bits, start)
        j.add_incoming(position, start)
        b.cbranch(b.icmp_unsigned("!=", left, k.i64(0)), visit, done)
        b.position_at_end(visit)
        at = b.add(base, k.call_intrinsic("llvm.cttz.i64", I64, [I64, ll.IntType(1)], left, ll.Constant(ll.IntType(1), 1)))
        store_element(k, target, (at,), dtype, load_element(k, values, (j,), dtype))
        left.add_incoming(b.and_(left, b.sub(left, k.i64(1))), visit)     # (the lowest set bit cleared)
        j.add_incoming(b.add(j, k.i64(1)), visit)
        b.branch(test)
        b.position_at_end(done)
        return [j]
    position, = for_range(k, blocks, block, carried=[k.i64(0)])
    first = b.mul(blocks, k.i64(WORD))

    def rest(i, j):
        at = b.add(first, i)
        bit = load_element(k, mask, (at,), ir.BOOL)
        with b.if_then(bit):
            store_element(k, target, (at,), dtype, load_element(k, values, (j,), dtype))
        return [b.add(j, b.zext(bit, I64))]
    for_range(k, b.sub(n, first), rest, carried=[position])
