"""IR -> LLVM IR: one kernel function per IR function, one table entry per op (`LOWERINGS`).

Kernel ABI:  i32 @symbol(<the args of each IR param>, ptr %out0, ..., ptr %outK)
  - params: f64 -> double, i64 -> i64, bool -> i1 (zeroext, like C's bool); an array -> its data
    pointer, its sizes and its byte strides (codegen.arrays);
  - one out pointer per leaf of the result type (`ir.leaf_types`), left to right (distinct,
    `noalias`; a bool is stored as one byte 0/1; an array as a new buffer, codegen.arrays);
  - returns int(Status): 0 writes the outputs, anything else leaves them untouched.

Every lowering must give what the op's evaluator in `tracer.ir.ops` gives, bit for bit: plain IEEE
float ops (no fast-math flags), i64 ops that never wrap (overflow returns FALLBACK), and CPython's
own algorithms where CPython does not simply call libm (codegen.cpython_float).
A lowering is `(k: KernelBuilder, v: ir.Value, *operands) -> LLVM value` (a tuple for tuples).
"""
from __future__ import annotations

from llvmlite import ir as ll

from tracer import ir
from tracer.errors import RAISE_BASE, Status
from tracer.ir.array_ops import ELEMENTWISE
from tracer.ir.ops import MATH_CAN_OVERFLOW, MATH_UNARY, OPS

from codegen.cpython_float import float_floordiv, float_mod, float_pow, math_hypot
from codegen.kernel import C_MEMORY, DOUBLE, FLOAT, I1, I64, KernelBuilder, kernel_type, llvm_type
from codegen import arrays
from codegen.arrays import LOWERINGS as ARRAY_LOWERINGS
from codegen.matmul import matmul
from codegen.arrays import ArrayValue
from codegen.tape import LOWERINGS as TAPE_LOWERINGS
from codegen.tape import allocate_headers


# --------------------------------------------------------------------------------- arithmetic
def _is_float(v: ir.Value) -> bool:
    return v.args[0].type == ir.F64


def _add(k, v, a, b):
    return k.builder.fadd(a, b) if _is_float(v) else k.checked("sadd", a, b)


def _sub(k, v, a, b):
    return k.builder.fsub(a, b) if _is_float(v) else k.checked("ssub", a, b)


def _mul(k, v, a, b):
    return k.builder.fmul(a, b) if _is_float(v) else k.checked("smul", a, b)


def _neg(k, v, a):
    return k.builder.fneg(a) if _is_float(v) else k.checked("ssub", k.i64(0), a)


def _abs(k, v, a):
    if _is_float(v):
        return k.intrinsic("fabs", a)
    b = k.builder
    k.fail_if(b.icmp_signed("==", a, k.i64(ir.I64_MIN)), Status.FALLBACK)
    return b.select(b.icmp_signed("<", a, k.i64(0)), b.neg(a), a)


def _div(k, v, a, b):
    bld = k.builder
    if _is_float(v):
        k.fail_if(bld.fcmp_ordered("==", b, k.f64(0.0)), Status.FLOAT_DIVISION_BY_ZERO)
        return bld.fdiv(a, b)
    k.fail_if(bld.icmp_signed("==", b, k.i64(0)), Status.INT_DIVISION_BY_ZERO)
    # beyond 2**53 an int is not exact as a double and Python divides the big ints itself
    def too_big(x):
        return bld.or_(bld.icmp_signed(">", x, k.i64(2 ** 53)), bld.icmp_signed("<", x, k.i64(-2 ** 53)))
    k.fail_if(bld.or_(too_big(a), too_big(b)), Status.FALLBACK)
    return bld.fdiv(bld.sitofp(a, DOUBLE), bld.sitofp(b, DOUBLE))


def _floordiv(k, v, a, b):
    bld = k.builder
    if _is_float(v):
        k.fail_if(bld.fcmp_ordered("==", b, k.f64(0.0)), Status.FLOAT_FLOOR_DIVISION_BY_ZERO)
        return float_floordiv(k, a, b)
    k.fail_if(bld.icmp_signed("==", b, k.i64(0)), Status.INT_FLOOR_DIVISION_BY_ZERO)
    k.fail_if(bld.and_(bld.icmp_signed("==", a, k.i64(ir.I64_MIN)), bld.icmp_signed("==", b, k.i64(-1))),
              Status.FALLBACK)
    q, r = bld.sdiv(a, b), bld.srem(a, b)
    # C truncates; Python floors: step down when there is a remainder of the other sign
    adjust = bld.and_(bld.icmp_signed("!=", r, k.i64(0)), bld.icmp_signed("<", bld.xor(r, b), k.i64(0)))
    return bld.sub(q, bld.zext(adjust, I64))


def _mod(k, v, a, b):
    bld = k.builder
    if _is_float(v):
        k.fail_if(bld.fcmp_ordered("==", b, k.f64(0.0)), Status.FLOAT_MODULO_BY_ZERO)
        return float_mod(k, a, b)
    k.fail_if(bld.icmp_signed("==", b, k.i64(0)), Status.INT_MODULO_BY_ZERO)
    # INT_MIN % -1 traps in hardware; x % -1 == x % 1 == 0
    b = bld.select(bld.icmp_signed("==", b, k.i64(-1)), k.i64(1), b)
    r = bld.srem(a, b)
    adjust = bld.and_(bld.icmp_signed("!=", r, k.i64(0)), bld.icmp_signed("<", bld.xor(r, b), k.i64(0)))
    return bld.select(adjust, bld.add(r, b), r)


def _int_pow(k, base, exp):
    """Square-and-multiply with overflow checks: any overflow means |result| > 2**63 - 1."""
    b = k.builder
    k.fail_if(b.icmp_signed("<", exp, k.i64(0)), Status.FALLBACK)   # Python gives a float
    start = b.block
    head = k.function.append_basic_block("pow_head")
    body = k.function.append_basic_block("pow_body")
    done = k.function.append_basic_block("pow_done")
    b.branch(head)

    b.position_at_end(head)
    r, x, e = b.phi(I64), b.phi(I64), b.phi(I64)
    for phi, init in ((r, k.i64(1)), (x, base), (e, exp)):
        phi.add_incoming(init, start)
    b.cbranch(b.icmp_signed("==", e, k.i64(0)), done, body)

    b.position_at_end(body)
    odd = b.trunc(e, I1)
    product, product_overflowed = k.with_overflow("smul", r, x)
    k.fail_if(b.and_(odd, product_overflowed), Status.FALLBACK)
    r_next = b.select(odd, product, r)
    e_next = b.lshr(e, k.i64(1))
    square, square_overflowed = k.with_overflow("smul", x, x)
    # the square is only used while bits remain, and then it overflowing means the result does
    k.fail_if(b.and_(b.icmp_signed("!=", e_next, k.i64(0)), square_overflowed), Status.FALLBACK)
    latch = b.block
    for phi, nxt in ((r, r_next), (x, square), (e, e_next)):
        phi.add_incoming(nxt, latch)
    b.branch(head)

    b.position_at_end(done)
    return r


def _pow(k, v, a, b):
    return float_pow(k, a, b) if _is_float(v) else _int_pow(k, a, b)


def _min(k, v, a, b):
    less = k.builder.fcmp_ordered("<", b, a) if _is_float(v) else k.builder.icmp_signed("<", b, a)
    return k.builder.select(less, b, a)


def _max(k, v, a, b):
    more = k.builder.fcmp_ordered(">", b, a) if _is_float(v) else k.builder.icmp_signed(">", b, a)
    return k.builder.select(more, b, a)


# -------------------------------------------------------------------------------- comparisons
def _compare(symbol: str):
    def lower(k, v, a, b):
        t = v.args[0].type
        if t == ir.F64:       # NaN: every comparison is false except !=
            if symbol == "!=":
                return k.builder.fcmp_unordered(symbol, a, b)
            return k.builder.fcmp_ordered(symbol, a, b)
        if t == ir.BOOL:      # False < True: unsigned (a signed i1 True is -1)
            return k.builder.icmp_unsigned(symbol, a, b)
        return k.builder.icmp_signed(symbol, a, b)
    return lower


# -------------------------------------------------------------------------------- conversions
def _to_f64(k, v, a):
    if v.args[0].type == ir.F32:
        return k.builder.fpext(a, DOUBLE)
    if v.args[0].type == ir.BOOL:
        return k.builder.uitofp(a, DOUBLE)
    return k.builder.sitofp(a, DOUBLE)


def _to_f32(k, v, a):
    """Rounded once, to nearest: an i64 converts directly (through f64 it could round twice)."""
    if v.args[0].type == ir.F64:
        return k.builder.fptrunc(a, FLOAT)
    if v.args[0].type == ir.BOOL:
        return k.builder.uitofp(a, FLOAT)
    return k.builder.sitofp(a, FLOAT)


def _to_i64(k, v, a):
    b = k.builder
    if v.args[0].type == ir.BOOL:
        return b.zext(a, I64)
    k.fail_if(k.is_nan(a), Status.FLOAT_NAN_TO_INT)
    k.fail_if(k.is_inf(a), Status.FLOAT_INFINITY_TO_INT)
    in_range = b.and_(b.fcmp_ordered(">=", a, k.f64(-2.0 ** 63)), b.fcmp_ordered("<", a, k.f64(2.0 ** 63)))
    k.fail_if(b.not_(in_range), Status.FALLBACK)
    return b.fptosi(a, I64)


def _to_bool(k, v, a):
    if v.args[0].type == ir.F64:
        return k.builder.fcmp_unordered("!=", a, k.f64(0.0))   # NaN is true
    return k.builder.icmp_signed("!=", a, k.i64(0))


# ----------------------------------------------------------------------------- math functions
def _math_unary(name: str):
    """CPython's math_1: NaN from non-NaN is a domain error; inf from finite is a range error if
    the function can overflow, else a domain error (a pole, like log(0.0))."""
    def lower(k, v, x):
        b = k.builder
        r = k.intrinsic("sqrt", x) if name == "sqrt" else k.libm(name, x)
        domain = b.and_(k.is_nan(r), b.not_(k.is_nan(x)))
        pole = b.and_(k.is_inf(r), k.is_finite(x))
        if name in MATH_CAN_OVERFLOW:
            k.fail_if(domain, Status.MATH_DOMAIN)
            k.fail_if(pole, Status.MATH_RANGE)
        else:
            k.fail_if(b.or_(domain, pole), Status.MATH_DOMAIN)
        return r
    return lower


def _math_binary(compute):
    """CPython's math_2 (and math.fmod): NaN from non-NaN inputs is a domain error, inf from
    finite inputs a range error."""
    def lower(k, v, x, y):
        b = k.builder
        r = compute(k, x, y)
        domain = b.and_(k.is_nan(r), b.not_(b.or_(k.is_nan(x), k.is_nan(y))))
        k.fail_if(domain, Status.MATH_DOMAIN)
        k.fail_if(b.and_(k.is_inf(r), b.and_(k.is_finite(x), k.is_finite(y))), Status.MATH_RANGE)
        return r
    return lower


def _math_pow(k, v, x, y):
    """CPython's math_pow: libm pow; errors only for finite inputs (0 ** negative is a domain
    error, overflow a range error); non-finite inputs get C99's special values."""
    b = k.builder
    r = k.libm("pow", x, y)
    finite = b.and_(k.is_finite(x), k.is_finite(y))
    x_zero = b.fcmp_ordered("==", x, k.f64(0.0))
    k.fail_if(b.and_(finite, b.or_(k.is_nan(r), b.and_(k.is_inf(r), x_zero))), Status.MATH_DOMAIN)
    k.fail_if(b.and_(finite, k.is_inf(r)), Status.MATH_RANGE)
    return r


# ------------------------------------------------------------------------------ the op table
def _const(k, v):
    return ll.Constant(llvm_type(v.type), v.attrs["value"])


def _unsupported(k, v, *args):
    raise NotImplementedError(f"codegen: op {v.op!r} has no lowering")


LOWERINGS = {
    "param": lambda k, v: k.params[v.attrs["index"]],
    "const": _const,
    "add": _add, "sub": _sub, "mul": _mul, "div": _div,
    "fdiv": lambda k, v, a, b: k.builder.fdiv(a, b),
    "ieee_pow": lambda k, v, a, b: k.libm("pow", a, b),
    "ieee_log": lambda k, v, x: k.libm("log", x),
    "floordiv": _floordiv, "mod": _mod, "pow": _pow,
    "neg": _neg, "abs": _abs, "min": _min, "max": _max,
    "fma": lambda k, v, a, b, c: k.intrinsic("fma", a, b, c),
    "lt": _compare("<"), "le": _compare("<="), "gt": _compare(">"),
    "ge": _compare(">="), "eq": _compare("=="), "ne": _compare("!="),
    "maximum": lambda k, v, a, b: _numpy_extremum(k, v, ">=", a, b),
    "minimum": lambda k, v, a, b: _numpy_extremum(k, v, "<=", a, b),
    "not": lambda k, v, a: k.builder.not_(a),
    "select": lambda k, v, cond, a, b: k.builder.select(cond, a, b),
    "to_f64": _to_f64, "to_f32": _to_f32, "to_i64": _to_i64, "to_bool": _to_bool,
    **{name: _math_unary(name) for name in MATH_UNARY},
    "fabs": lambda k, v, x: k.intrinsic("fabs", x),
    "atan2": _math_binary(lambda k, y, x: k.libm("atan2", y, x)),
    "hypot": lambda k, v, x, y: math_hypot(k, x, y),
    "copysign": _math_binary(lambda k, x, y: k.intrinsic("copysign", x, y)),
    "fmod": _math_binary(lambda k, x, y: k.builder.frem(x, y)),
    "math_pow": _math_pow,
    "floor": lambda k, v, x: k.intrinsic("floor", x),
    "ceil": lambda k, v, x: k.intrinsic("ceil", x),
    "trunc": lambda k, v, x: k.intrinsic("trunc", x),
    "round_even": lambda k, v, x: k.intrinsic("roundeven", x),
    "isnan": lambda k, v, x: k.is_nan(x),
    "isinf": lambda k, v, x: k.is_inf(x),
    "isfinite": lambda k, v, x: k.is_finite(x),
    # tuples exist only in the IR: a tuple is the Python tuple of its operands' LLVM values
    "tuple": lambda k, v, *xs: tuple(xs),
    "getitem": lambda k, v, t: t[v.attrs["index"]],
    **TAPE_LOWERINGS,
    **ARRAY_LOWERINGS,
    "matmul": matmul,
}


def _numpy_extremum(k, v, keep: str, a, b):
    """np.maximum / np.minimum: a if a >= b (a <= b) or a is NaN, else b."""
    bld = k.builder
    if v.type == ir.F64:
        return bld.select(bld.or_(bld.fcmp_ordered(keep, a, b), k.is_nan(a)), a, b)
    if v.type == ir.BOOL:
        return bld.or_(a, b) if keep == ">=" else bld.and_(a, b)
    return bld.select(bld.icmp_signed(keep, a, b), a, b)


def _leaves(value) -> list:
    """The leaves of a (nested) tuple of LLVM values: scalars, tape headers and ArrayValues."""
    if isinstance(value, tuple) and not isinstance(value, ArrayValue):
        return [leaf for element in value for leaf in _leaves(element)]
    return [value]


def _flat(value) -> list:
    """Every LLVM value in `value`, an ArrayValue as its data, sizes and strides (for phis)."""
    return [x for leaf in _leaves(value) for x in (arrays.fields(leaf) if isinstance(leaf, ArrayValue) else [leaf])]


def _flat_types(t: ir.Type) -> list[ll.Type]:
    return [x for leaf in ir.leaf_types(t)
            for x in (arrays.abi_types(leaf) if isinstance(leaf, ir.ArrayType) else [llvm_type(leaf)])]


def _from_flat(t: ir.Type, flat: list):
    """Rebuild the LLVM value of type `t` (a tuple of tuples...) from `_flat`'s list, consumed."""
    if isinstance(t, ir.TupleType):
        return tuple(_from_flat(e, flat) for e in t.elements)
    if isinstance(t, ir.ArrayType):
        return arrays.from_arguments(t, flat)
    return flat.pop(0)


def _zeros(t: ir.Type) -> list[ll.Constant]:
    """Placeholders for `_flat` of a value of type `t` (a path that computes nothing)."""
    return [ll.Constant(x, None) if x == arrays.PTR else ll.Constant(x, 0.0 if x in (DOUBLE, FLOAT) else 0)
            for x in _flat_types(t)]


class BlockLowering:
    """Lowers a Block and its regions: an `if` becomes a diamond with phis, a `loop` a header
    block whose phis carry the values, a `map` a loop nest over its arrays' elements, a `raise`
    a return of its status (raise_statuses)."""

    def __init__(self, k: KernelBuilder, values: dict, raise_statuses: dict):
        self.k = k
        self.values = values
        self.raise_statuses = raise_statuses

    def block(self, block: ir.Block) -> list | None:
        """Lower `block`'s values; the LLVM values of its results, or None if it always raises."""
        for v in block.values:
            if v.op == "raise":
                self.k.ret(self.raise_statuses[v])
                return None
            if v.op == "if":
                self.values[v] = self.lower_if(v)
            elif v.op == "loop":
                self.values[v] = self.lower_loop(v)
            elif v.op == "map":
                self.values[v] = self.lower_map(v)
            elif isinstance(v.type, ir.ArrayType) and v.op in ELEMENTWISE:
                self.values[v] = arrays.elementwise(self.k, v, [self.values[a] for a in v.args],
                                                    LOWERINGS.get(v.op, _unsupported))
            else:
                lowering = LOWERINGS.get(v.op, _unsupported)
                self.values[v] = lowering(self.k, v, *(self.values[a] for a in v.args))
        return [self.values[r] for r in block.results]

    def lower_if(self, v: ir.Value):
        b, fn = self.k.builder, self.k.function
        then_block, else_block = fn.append_basic_block("then"), fn.append_basic_block("else")
        merge = fn.append_basic_block("endif")
        b.cbranch(self.values[v.args[0]], then_block, else_block)
        incoming = []                        # (leaves, LLVM block) of each side that finishes
        for region, start in zip(v.regions, (then_block, else_block)):
            b.position_at_end(start)
            results = self.block(region)
            if results is not None:
                incoming.append((_flat(tuple(results)), b.block))
                b.branch(merge)
        b.position_at_end(merge)
        if not incoming:                     # both sides raise: nothing comes out
            b.unreachable()
            b.position_at_end(fn.append_basic_block("dead"))
            return _from_flat(v.type, _zeros(v.type))
        phis = []
        for i, t in enumerate(_flat_types(v.type)):
            phi = b.phi(t)
            for leaves, block in incoming:
                phi.add_incoming(leaves[i], block)
            phis.append(phi)
        return _from_flat(v.type, phis)

    def lower_map(self, v: ir.Value):
        """One loop nest over the elements. A straight-line region whose ops may fail runs
        twice if needed: first with its failures only noted in a flag (no exit from the loop,
        so LLVM can vectorize it), then, if the flag is set, element by element again, stopping
        at the first element that fails, with that element's status."""
        k, region = self.k, v.regions[0]
        types = v.type.elements if isinstance(v.type, ir.TupleType) else (v.type,)
        n = v.attrs.get("into", 0)            # leading operands: arrays it writes, not reads
        into = [self.values[a] for a in v.args[:n]] if n else None
        inputs = v.args[n:]
        operands = ([self.values[a] for a in inputs], [a.type.dtype for a in inputs], [t.dtype for t in types])

        def element(flag):
            def compute(*xs):
                k.deferred = flag
                self.values.update(zip(region.params, xs))
                results = self.block(region)
                k.deferred = None
                if results is None:          # the element always raises: nothing to store
                    k.builder.position_at_end(k.function.append_basic_block("dead"))
                    return [ll.Constant(llvm_type(t.dtype), None) for t in types]
                return results
            return compute
        straight = not any(x.regions or x.op == "raise" for x in region.values)
        if not straight or not any(OPS[x.op].may_fail(x) for x in region.values):
            outs = arrays.map_elements(k, *operands, element(None), into=into)
        else:
            b = k.builder
            with b.goto_entry_block():
                flag = b.alloca(I1, name="failed")
            b.store(ll.Constant(I1, 0), flag)
            outs = arrays.map_elements(k, *operands, element(flag), into=into)
            with b.if_then(b.load(flag, typ=I1)):
                arrays.map_elements(k, *operands, element(None), into=into)
        return tuple(outs) if isinstance(v.type, ir.TupleType) else outs[0]

    def lower_loop(self, v: ir.Value):
        b, fn = self.k.builder, self.k.function
        body = v.regions[0]
        header = fn.append_basic_block("loop")
        exit_ = fn.append_basic_block("endloop")
        entry = b.block
        b.branch(header)
        b.position_at_end(header)
        phis = [b.phi(t) for t in _flat_types(v.type)]
        init = _flat(tuple(self.values[a] for a in v.args))
        for phi, x in zip(phis, init):
            phi.add_incoming(x, entry)
        carried = list(phis)
        for p in body.params:
            self.values[p] = _from_flat(p.type, carried)
        results = self.block(body)
        if results is None:                  # the body always raises: the loop never repeats
            b.position_at_end(exit_)
            b.unreachable()
            b.position_at_end(fn.append_basic_block("dead"))
            return _from_flat(v.type, _zeros(v.type))
        go, nexts = results[0], _flat(tuple(results[1:]))
        for phi, x in zip(phis, nexts):
            phi.add_incoming(x, b.block)
        b.cbranch(go, header, exit_)
        b.position_at_end(exit_)
        return _from_flat(v.type, list(nexts))


def raise_sites(fn: ir.Function) -> list[ir.Value]:
    """The function's `raise` ops in walk order: the i-th returns status RAISE_BASE + i."""
    return [v for v in fn.walk() if v.op == "raise"]


def lower_function(fn: ir.Function, module: ll.Module, symbol: str, memory: tuple[str, str] = C_MEMORY) -> ll.Function:
    """Emit `fn` into `module` as the kernel `symbol` (see the module docstring for the ABI);
    its arrays are allocated and freed by the `memory` functions (see KernelBuilder)."""
    function = ll.Function(module, kernel_type(fn), symbol)
    function.attributes.add("nounwind")
    k = KernelBuilder(module, function, fn, memory)
    for p, arg in zip(fn.params, k.params):
        name = p.name or f"arg{p.attrs['index']}"
        if isinstance(arg, ArrayValue):
            arg.data.name = f"{name}.data"
            # noalias: the kernel writes an argument array only after checking that it shares no
            # memory with any other (codegen.arrays: in_place_check, writeback; FALLBACK if it
            # does), so no memory is both written through one argument and read through another.
            # Told so, LLVM drops the per-row overlap checks of the loops that write in place.
            arg.data.add_attribute("noalias")
            for axis, (size, stride) in enumerate(zip(arg.sizes, arg.strides)):
                size.name, stride.name = f"{name}.size{axis}", f"{name}.stride{axis}"
            continue
        arg.name = name
        if p.type == ir.BOOL:
            arg.add_attribute("zeroext")
    outs = function.args[len(function.args) - len(ir.leaf_types(fn.result_type)):]
    for i, out in enumerate(outs):
        out.name = f"out{i}"
        out.add_attribute("noalias")

    allocate_headers(k, fn)
    if arrays.uses_arena(fn):
        arrays.start_arena(k)
    values = {p: a for p, a in zip(fn.params, k.params)}
    statuses = {v: RAISE_BASE + i for i, v in enumerate(raise_sites(fn))}
    results = BlockLowering(k, values, statuses).block(fn.body)
    if results is None:
        return function
    for leaf, t, out in zip(_leaves(results[0]), ir.leaf_types(fn.result_type), outs):
        if isinstance(t, ir.ArrayType):
            arrays.export_result(k, leaf, t, out)
        else:
            k.builder.store(leaf, out)
    k.ret(Status.OK)
    return function
