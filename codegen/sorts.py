"""Lowering of `sort` and `argsort` (np.sort, np.argsort; tracer/ir/sort_ops.py): a stable merge
sort of each line along the op's axis, in LLVM IR (no library call: exported libraries sort too);
of `permute`, sort's derivative (a gather along the axis); and of `searchsorted` (a binary search
per value, in the same order).

In the JIT, along the last axis, NumPy's sort runs on each row of the result itself (a copy of
the array; argsort's rows: the positions, the keys in one buffer). Otherwise each line is
copied into a contiguous buffer of keys (and, for argsort, one of their positions
0, 1, ..., n - 1), sorted there (by NumPy's function in the JIT, else by a function of the
module, `__tracer_sort_<dtype>` or `__tracer_argsort_<dtype>`, one per kind and dtype), and
copied into the result. The sort is
bottom-up: runs of RUN elements are put in order by insertion sort, then runs are merged in pairs,
back and forth between the buffer and a spare one of the same size, doubling their length:
O(n log n) comparisons, 2n elements of scratch. Both steps take an element of the right run
before one of the left only when it is strictly smaller, so equal keys keep their order (NumPy's
kind='stable'). Floats compare in NumPy's order, NaN last: x < y, or y is NaN and x is not. The
buffers come from the kernel's arena (allocated once per op, freed at return); a poll for signals
counts about n log n of work per line.
"""
from __future__ import annotations

import ctypes

from llvmlite import ir as ll

from codegen.arrays import (
    ELEMENT_TYPES,
    allocate,
    check_same_sizes,
    copy_elements,
    element_address,
    for_each_index,
    load_element,
    store_element,
)
from codegen.kernel import I1, I32, I64, PTR, ArrayValue, KernelBuilder, for_range
from codegen.lowerings import lowers
from tracer import ir
from tracer.errors import Status
from tracer.numpy_capi import arrfuncs

RUN = 16              # the length of the runs insertion sort orders before the merges
WORK_PER_STEP = 12    # instructions per element and halving, roughly (what a poll counts)


@lowers("sort")
def sort(k: KernelBuilder, v: ir.Value, a: ArrayValue):
    return _sort_lines(k, v, a, with_positions=False)


@lowers("argsort")
def argsort(k: KernelBuilder, v: ir.Value, a: ArrayValue):
    return _sort_lines(k, v, a, with_positions=True)


def _sort_lines(k: KernelBuilder, v: ir.Value, a: ArrayValue, with_positions: bool) -> ArrayValue:
    b = k.builder
    axis, dtype = v.attrs["axis"], v.args[0].type.dtype
    n = a.sizes[axis]
    numpy_sort = numpy_sort_symbol(v) if k.memory.shared_helpers else None   # (the JIT: NumPy is there)
    if numpy_sort and a.sizes and axis == len(a.sizes) - 1:
        return _sort_rows_in_place(k, v, a, numpy_sort, with_positions)
    out = allocate(k, v.type.dtype, a.sizes)
    keys = allocate(k, dtype, (n,))
    spare = keys if numpy_sort else allocate(k, dtype, (n,))
    if with_positions:
        positions = allocate(k, ir.I64, (n,))
        spare_positions = positions if numpy_sort else allocate(k, ir.I64, (n,))
    else:
        positions = spare_positions = ArrayValue(ll.Constant(PTR, None), (n,), (k.i64(8),))
    sorter = None if numpy_sort else _sorter(k.module, dtype, with_positions)
    outer = [s for d, s in enumerate(a.sizes) if d != axis]
    steps = b.sub(k.i64(65), k.call_intrinsic("llvm.ctlz.i64", I64, [I64, I1], n, ll.Constant(I1, 0)))
    work = b.add(b.mul(b.mul(n, steps), k.i64(WORK_PER_STEP)), k.i64(1))

    def line(idx):
        def place(t):
            full = list(idx)
            full.insert(axis, t)
            return full

        def load(t):
            store_element(k, keys, (t,), dtype, load_element(k, a, place(t), dtype))
            if with_positions:
                store_element(k, positions, (t,), ir.I64, t)
        for_range(k, n, load)
        if numpy_sort:        # NumPy's: int sort(keys, n, arr) or argsort(keys, positions, n, arr), < 0 if no memory
            params = [PTR, PTR, I64, PTR] if with_positions else [PTR, I64, PTR]
            run = k.declare_function(numpy_sort, ll.FunctionType(I32, params), ("nounwind",))
            status = b.call(run, [keys.data, *([positions.data] if with_positions else []), n, ll.Constant(PTR, None)])
            k.fail_if(b.icmp_signed("<", status, ll.Constant(I32, 0)), Status.NO_MEMORY)
            swapped = ll.Constant(I1, 0)
        else:
            swapped = b.call(sorter, [keys.data, spare.data, positions.data, spare_positions.data, n])
        source = positions if with_positions else keys
        other = spare_positions if with_positions else spare
        result = ArrayValue(b.select(swapped, other.data, source.data), (n,), source.strides)
        for_range(k, n, lambda t: store_element(k, out, place(t), v.type.dtype,
                                                 load_element(k, result, (t,), v.type.dtype)))
        k.poll_signals(work)
    for_each_index(k, outer, line)
    return out


def _sort_rows_in_place(k: KernelBuilder, v: ir.Value, a: ArrayValue, numpy_sort: str, with_positions: bool):
    """Along the last axis, with NumPy's sort: each row of the (C-contiguous) result sorted where
    it lies. np.sort's rows are a copy of a's (one vectorized copy of the whole array); argsort's
    are the positions 0, 1, ..., n - 1, the keys of each row copied into one buffer."""
    b = k.builder
    dtype = v.args[0].type.dtype
    n = a.sizes[-1]
    out = allocate(k, v.type.dtype, a.sizes)
    if not with_positions:
        copy_elements(k, a, out, dtype)
    keys = allocate(k, dtype, (n,)) if with_positions else None
    params = [PTR, PTR, I64, PTR] if with_positions else [PTR, I64, PTR]
    run = k.declare_function(numpy_sort, ll.FunctionType(I32, params), ("nounwind",))
    steps = b.sub(k.i64(65), k.call_intrinsic("llvm.ctlz.i64", I64, [I64, I1], n, ll.Constant(I1, 0)))
    work = b.add(b.mul(b.mul(n, steps), k.i64(WORK_PER_STEP)), k.i64(1))

    def row(idx):
        line = element_address(k, out, (*idx, k.i64(0)))
        if with_positions:
            copy_elements(k, ArrayValue(element_address(k, a, (*idx, k.i64(0))), (n,), a.strides[-1:]), keys, dtype)
            for_range(k, n, lambda t: store_element(k, ArrayValue(line, (n,), out.strides[-1:]), (t,), ir.I64, t))
            status = b.call(run, [keys.data, line, n, ll.Constant(PTR, None)])
        else:
            status = b.call(run, [line, n, ll.Constant(PTR, None)])
        k.fail_if(b.icmp_signed("<", status, ll.Constant(I32, 0)), Status.NO_MEMORY)   # NumPy's: < 0 if no memory
        k.poll_signals(work)
    for_each_index(k, a.sizes[:-1], row)
    return out


@lowers("permute")
def permute(k: KernelBuilder, v: ir.Value, a: ArrayValue, index: ArrayValue):
    """out[..., i, ...] = a[..., index[..., i, ...], ...] along the axis (an index out of range
    returns SHAPE_MISMATCH)."""
    b = k.builder
    axis, dtype = v.attrs["axis"], v.type.dtype
    check_same_sizes(k, a.sizes, index.sizes)
    out = allocate(k, dtype, a.sizes)

    def body(idx):
        j = load_element(k, index, idx, ir.I64)
        k.fail_if(b.icmp_unsigned(">=", j, a.sizes[axis]), Status.SHAPE_MISMATCH)
        source = list(idx)
        source[axis] = j
        store_element(k, out, idx, dtype, load_element(k, a, source, dtype))
    for_each_index(k, a.sizes, body)
    return out


# ------------------------------------------------------------------ NumPy's own sort functions
# NumPy's PyArray_ArrFuncs (numpy/ndarraytypes.h), from its start, in pointers: cast[21], then
# getitem setitem copyswapn copyswap compare argmax dotfunc scanfunc fromstr nonzero fill
# fillwithscalar, then sort[3] and argsort[3] (NPY_QUICKSORT, NPY_HEAPSORT, NPY_STABLESORT)
SORT_SLOT, ARGSORT_SLOT = 33, 36
KIND_INDEX = {"quicksort": 0, "stable": 2}


def numpy_sort_symbol(v: ir.Value) -> str | None:
    """The symbol of NumPy's sort (or argsort) function of v's kind and dtype, which the JIT
    defines (numpy_sort_symbols); None before NumPy 2 (no _PyDataType_GetArrFuncs)."""
    if arrfuncs(ir.NUMPY_DTYPE_NAMES[v.args[0].type.dtype]) is None:
        return None
    return f"__tracer_numpy_{v.op}_{v.args[0].type.dtype}_{v.attrs.get('kind', 'stable')}"


def numpy_sort_symbols(fn: ir.Function) -> dict[str, int]:
    """The NumPy sort functions `fn` calls, by symbol, with their addresses in this process."""
    symbols = {}
    for v in fn.walk():
        if v.op in ("sort", "argsort") and (name := numpy_sort_symbol(v)) is not None:
            table = (ctypes.c_void_p * (ARGSORT_SLOT + 3)).from_address(arrfuncs(ir.NUMPY_DTYPE_NAMES[v.args[0].type.dtype]))
            slot = (SORT_SLOT if v.op == "sort" else ARGSORT_SLOT) + KIND_INDEX[v.attrs.get("kind", "stable")]
            symbols[name] = table[slot]
    return symbols


# ----------------------------------------------------------------------- the sort function
def _sorter(module: ll.Module, dtype: ir.ScalarType, with_positions: bool) -> ll.Function:
    """`i1 sort(ptr keys, ptr spare, ptr positions, ptr spare_positions, i64 n)`: sorts keys[0:n]
    (and moves positions[0:n] with them, if with_positions); returns whether the sorted elements
    ended in the spare buffers. Made once per module."""
    name = f"__tracer_{'argsort' if with_positions else 'sort'}_{dtype}"
    fn = module.globals.get(name)
    if fn is not None:
        return fn
    fn = ll.Function(module, ll.FunctionType(I1, [PTR, PTR, PTR, PTR, I64]), name)
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    _SortEmitter(fn, ELEMENT_TYPES[dtype], dtype in (ir.F64, ir.F32), with_positions).emit()
    return fn


class _SortEmitter:
    """Emits the body of a sort function: its mutable variables are stack slots (SROA makes
    them registers), its loops `while_` blocks."""

    def __init__(self, fn: ll.Function, element: ll.Type, is_float: bool, with_positions: bool):
        self.fn, self.element, self.is_float, self.with_positions = fn, element, is_float, with_positions
        self.slots = ll.IRBuilder(fn.append_basic_block("slots"))    # every alloca, once
        self.b = ll.IRBuilder(fn.append_basic_block("entry"))

    # -- helpers ---------------------------------------------------------------------------
    def var(self, ty, initial):
        slot = self.slots.alloca(ty)
        self.b.store(initial, slot)
        return slot

    def get(self, slot, ty=I64):
        return self.b.load(slot, typ=ty)

    def while_(self, cond, body) -> None:
        """while cond(): body(), `cond` emitted in the loop's head."""
        b = self.b
        head, loop, done = (self.fn.append_basic_block(x) for x in ("while", "while_body", "while_end"))
        b.branch(head)
        b.position_at_end(head)
        b.cbranch(cond(), loop, done)
        b.position_at_end(loop)
        body()
        b.branch(head)
        b.position_at_end(done)

    def at(self, base, i, ty):
        return self.b.gep(base, [i], source_etype=ty)

    def read(self, base, i, ty=None):
        ty = ty or self.element
        return self.b.load(self.at(base, i, ty), typ=ty)

    def write(self, base, i, x, ty=None):
        self.b.store(x, self.at(base, i, ty or self.element))

    def less(self, x, y):
        """x before y in NumPy's sort order (NaN last)."""
        b = self.b
        if not self.is_float:
            return b.icmp_signed("<", x, y)
        y_nan = b.fcmp_unordered("uno", y, y)
        x_number = b.fcmp_ordered("ord", x, x)
        return b.or_(b.fcmp_ordered("<", x, y), b.and_(y_nan, x_number))

    @staticmethod
    def i64(n):
        return ll.Constant(I64, n)

    def smin(self, x, y):
        return self.b.select(self.b.icmp_signed("<", x, y), x, y)

    # -- the sort --------------------------------------------------------------------------
    def emit(self) -> None:
        b = self.b
        keys, spare, positions, spare_positions, n = self.fn.args
        self.insertion_sort(keys, positions, n)
        src, dst = self.var(PTR, keys), self.var(PTR, spare)
        src_pos, dst_pos = self.var(PTR, positions), self.var(PTR, spare_positions)
        swapped = self.var(I1, ll.Constant(I1, 0))
        width = self.var(I64, self.i64(RUN))

        def merge_pass():
            lo = self.var(I64, self.i64(0))
            w = self.get(width)
            s, d = self.get(src, PTR), self.get(dst, PTR)
            sp, dp = self.get(src_pos, PTR), self.get(dst_pos, PTR)

            def merge_pair():
                start = self.get(lo)
                mid = self.smin(b.add(start, w), n)
                hi = self.smin(b.add(mid, w), n)
                self.merge(s, d, sp, dp, start, mid, hi)
                b.store(b.add(start, b.add(w, w)), lo)
            self.while_(lambda: b.icmp_signed("<", self.get(lo), n), merge_pair)
            b.store(d, src)
            b.store(s, dst)
            b.store(dp, src_pos)
            b.store(sp, dst_pos)
            b.store(b.xor(self.get(swapped, I1), ll.Constant(I1, 1)), swapped)
            b.store(b.add(w, w), width)
        self.while_(lambda: b.icmp_signed("<", self.get(width), n), merge_pass)
        b.ret(self.get(swapped, I1))
        self.slots.branch(self.fn.blocks[1])

    def insertion_sort(self, keys, positions, n) -> None:
        """Each run keys[start:start + RUN] in order (stable: an element moves left past
        strictly greater ones only)."""
        b = self.b
        start = self.var(I64, self.i64(0))
        i, j = self.var(I64, self.i64(0)), self.var(I64, self.i64(0))
        key = self.var(self.element, ll.Constant(self.element, 0))
        pos = self.var(I64, self.i64(0))

        def run():
            first = self.get(start)
            end = self.smin(b.add(first, self.i64(RUN)), n)
            b.store(b.add(first, self.i64(1)), i)

            def insert():
                at = self.get(i)
                b.store(self.read(keys, at), key)
                if self.with_positions:
                    b.store(self.read(positions, at, I64), pos)
                b.store(at, j)
                self.while_(lambda: self.shifts(keys, j, first, key), lambda: self.shift(keys, positions, j))
                self.write(keys, self.get(j), self.get(key, self.element))
                if self.with_positions:
                    self.write(positions, self.get(j), self.get(pos), I64)
                b.store(b.add(at, self.i64(1)), i)
            self.while_(lambda: b.icmp_signed("<", self.get(i), end), insert)
            b.store(b.add(first, self.i64(RUN)), start)
        self.while_(lambda: b.icmp_signed("<", self.get(start), n), run)

    def shifts(self, keys, j, first, key):
        """Whether keys[j - 1] moves right: j > first and key < keys[j - 1] (read only if j > first)."""
        b = self.b
        at = self.get(j)
        before = b.block
        check, joined = self.fn.append_basic_block("compare"), self.fn.append_basic_block("compared")
        b.cbranch(b.icmp_signed(">", at, first), check, joined)
        b.position_at_end(check)
        smaller = self.less(self.get(key, self.element), self.read(keys, b.sub(at, self.i64(1))))
        compared = b.block
        b.branch(joined)
        b.position_at_end(joined)
        result = b.phi(I1)
        result.add_incoming(ll.Constant(I1, 0), before)
        result.add_incoming(smaller, compared)
        return result

    def shift(self, keys, positions, j) -> None:
        b = self.b
        at = self.get(j)
        left = b.sub(at, self.i64(1))
        self.write(keys, at, self.read(keys, left))
        if self.with_positions:
            self.write(positions, at, self.read(positions, left, I64), I64)
        b.store(left, j)

    def merge(self, s, d, sp, dp, lo, mid, hi) -> None:
        """d[lo:hi] = s[lo:mid] and s[mid:hi] merged (each in order; the left wins ties). The
        reads are clamped into their runs, so both are in bounds whichever is taken."""
        b = self.b
        i, j, o = self.var(I64, lo), self.var(I64, mid), self.var(I64, lo)
        last_left, last_right = b.sub(mid, self.i64(1)), b.sub(hi, self.i64(1))

        def step():
            at_i, at_j, at_o = self.get(i), self.get(j), self.get(o)
            ic, jc = self.smin(at_i, last_left), self.smin(at_j, last_right)
            x, y = self.read(s, ic), self.read(s, jc)
            left_done = b.icmp_signed(">=", at_i, mid)
            right = b.and_(b.icmp_signed("<", at_j, hi), b.or_(left_done, self.less(y, x)))
            self.write(d, at_o, b.select(right, y, x))
            if self.with_positions:
                self.write(dp, at_o, b.select(right, self.read(sp, jc, I64), self.read(sp, ic, I64)), I64)
            taken = b.zext(right, I64)
            b.store(b.add(at_j, taken), j)
            b.store(b.add(at_i, b.sub(self.i64(1), taken)), i)
            b.store(b.add(at_o, self.i64(1)), o)
        self.while_(lambda: b.icmp_signed("<", self.get(o), hi), step)


@lowers("searchsorted")
def searchsorted(k: KernelBuilder, v: ir.Value, a: ArrayValue, values: ArrayValue):
    """A binary search of `a` for each value: the first i with not a[i] < x ('left') or with
    x < a[i] ('right'), in NumPy's order (NaN last)."""
    b, fn = k.builder, k.function
    dtype = v.args[0].type.dtype
    is_float = dtype != ir.I64
    out = allocate(k, ir.I64, values.sizes)
    n = a.sizes[0]

    def less(x, y):
        if not is_float:
            return b.icmp_signed("<", x, y)
        return b.or_(b.fcmp_ordered("<", x, y), b.and_(b.fcmp_unordered("uno", y, y), b.fcmp_ordered("ord", x, x)))

    def one(idx):
        x = load_element(k, values, idx, dtype)
        entry = b.block
        test, step, done = (fn.append_basic_block(name) for name in ("search", "search_step", "searched"))
        b.branch(test)
        b.position_at_end(test)
        lo, hi = b.phi(I64), b.phi(I64)
        lo.add_incoming(k.i64(0), entry)
        hi.add_incoming(n, entry)
        b.cbranch(b.icmp_signed("<", lo, hi), step, done)
        b.position_at_end(step)
        mid = b.add(lo, b.lshr(b.sub(hi, lo), k.i64(1)))
        y = load_element(k, a, (mid,), dtype)
        right = less(y, x) if v.attrs["side"] == "left" else b.not_(less(x, y))    # the answer is past mid
        lo.add_incoming(b.select(right, b.add(mid, k.i64(1)), lo), step)
        hi.add_incoming(b.select(right, hi, mid), step)
        b.branch(test)
        b.position_at_end(done)
        store_element(k, out, idx, ir.I64, lo)
    for_each_index(k, values.sizes, one)
    return out
