"""IR -> LLVM IR: one kernel function per IR function, one table entry per op (`LOWERINGS`).

Kernel ABI:  i32 @symbol(<one arg per IR param>, ptr %out0, ..., ptr %outK)
  - params: f64 -> double, i64 -> i64, bool -> i1;
  - one out pointer per scalar leaf of the result type (`ir.leaf_types`), left to right;
  - returns int(Status): 0 writes the outputs, anything else leaves them untouched.

Every lowering must give what the op's evaluator in `tracer.ops` gives, bit for bit: plain IEEE
float ops (no fast-math flags), i64 ops that never wrap (overflow returns FALLBACK), and CPython's
own algorithms where CPython does not simply call libm (float //, %, **; math.hypot).
"""
from __future__ import annotations

import sys

from llvmlite import ir as ll

from tracer import ir
from tracer.errors import Status
from tracer.ops import MATH_CAN_OVERFLOW, MATH_UNARY

DOUBLE = ll.DoubleType()
I1 = ll.IntType(1)
I32 = ll.IntType(32)
I64 = ll.IntType(64)
PTR = ll.PointerType()

LLVM_TYPES = {ir.F64: DOUBLE, ir.I64: I64, ir.BOOL: I1}

INF = float("inf")


def llvm_type(t: ir.Type) -> ll.Type:
    try:
        return LLVM_TYPES[t]
    except KeyError:
        raise NotImplementedError(f"codegen: no LLVM type for IR type {t}") from None


def kernel_type(fn: ir.Function) -> ll.FunctionType:
    params = [llvm_type(p.type) for p in fn.params]
    outs = [PTR] * len(ir.leaf_types(fn.result_type))
    return ll.FunctionType(I32, params + outs)


class KernelBuilder:
    """Emits one kernel: the LLVM values of the IR values, and the early exits for failures."""

    def __init__(self, module: ll.Module, function: ll.Function, n_params: int):
        self.module = module
        self.function = function
        self.params = list(function.args[:n_params])
        self.builder = ll.IRBuilder(function.append_basic_block("entry"))
        self._status_blocks: dict[Status, ll.Block] = {}

    # -- constants -------------------------------------------------------------------------
    @staticmethod
    def f64(x: float) -> ll.Constant:
        return ll.Constant(DOUBLE, x)

    @staticmethod
    def i64(n: int) -> ll.Constant:
        return ll.Constant(I64, n)

    # -- failures: a branch to a block that returns the status -----------------------------
    def fail_if(self, cond: ll.Value, status: Status) -> None:
        block = self._status_blocks.get(status)
        if block is None:
            block = self.function.append_basic_block(f"fail_{status.name.lower()}")
            with self.builder.goto_block(block):
                self.builder.ret(ll.Constant(I32, int(status)))
            self._status_blocks[status] = block
        ok = self.function.append_basic_block("ok")
        br = self.builder.cbranch(cond, block, ok)
        br.set_weights([1, 1 << 20])      # failures are cold: keep the fast path straight
        self.builder.position_at_end(ok)

    # -- calls ---------------------------------------------------------------------------------
    def _declare(self, name: str, fnty: ll.FunctionType, attrs=()) -> ll.Function:
        fn = self.module.globals.get(name)
        if fn is None:
            fn = ll.Function(self.module, fnty, name)
            for a in attrs:
                fn.attributes.add(a)
        return fn

    def intrinsic(self, name: str, *args: ll.Value) -> ll.Value:
        """llvm.<name>.f64 on doubles (exact operations: sqrt, fabs, floor, fma, copysign...)."""
        fnty = ll.FunctionType(DOUBLE, [DOUBLE] * len(args))
        return self.builder.call(self._declare(f"llvm.{name}.f64", fnty), args)

    def libm(self, name: str, *args: ll.Value) -> ll.Value:
        """A call to the C library's `name`, exactly as CPython makes it.

        `nobuiltin` stops LLVM from treating it as the known libm function: otherwise it folds
        pow(x, 2.0) into x * x (or constants with its own folder), which can differ in the last bit.
        """
        fnty = ll.FunctionType(DOUBLE, [DOUBLE] * len(args))
        attrs = ("nobuiltin", "readnone", "nounwind")  # errno is never read: no memory effects
        return self.builder.call(self._declare(name, fnty, attrs), args)

    def checked(self, op: str, a: ll.Value, b: ll.Value) -> ll.Value:
        """i64 a <op> b (op: sadd, ssub, smul) that returns FALLBACK instead of wrapping."""
        fnty = ll.FunctionType(ll.LiteralStructType([I64, I1]), [I64, I64])
        pair = self.builder.call(self._declare(f"llvm.{op}.with.overflow.i64", fnty), [a, b])
        self.fail_if(self.builder.extract_value(pair, 1), Status.FALLBACK)
        return self.builder.extract_value(pair, 0)

    # -- float predicates ----------------------------------------------------------------------
    def is_nan(self, x):
        return self.builder.fcmp_unordered("uno", x, x)

    def is_inf(self, x):
        return self.builder.fcmp_ordered("==", self.intrinsic("fabs", x), self.f64(INF))

    def is_finite(self, x):
        return self.builder.fcmp_ordered("<", self.intrinsic("fabs", x), self.f64(INF))

    def is_odd_integer(self, x):
        """CPython's DOUBLE_IS_ODD_INTEGER: fmod(fabs(x), 2.0) == 1.0 (frem is C's fmod)."""
        b = self.builder
        return b.fcmp_ordered("==", b.frem(self.intrinsic("fabs", x), self.f64(2.0)), self.f64(1.0))

    def select_chain(self, default, *cases):
        """`cases` are (cond, value) with the first true one winning, else `default`."""
        result = default
        for cond, value in reversed(cases):
            result = self.builder.select(cond, value, result)
        return result


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
    limit = 2 ** 53
    too_big = [bld.icmp_signed(op, x, k.i64(bound))
               for x in (a, b) for op, bound in ((">", limit), ("<", -limit))]
    k.fail_if(bld.or_(bld.or_(too_big[0], too_big[1]), bld.or_(too_big[2], too_big[3])), Status.FALLBACK)
    return bld.fdiv(bld.sitofp(a, DOUBLE), bld.sitofp(b, DOUBLE))


def _float_mod(k, vx, wx):
    """CPython's float_rem: fmod, then the sign of the divisor (signed zero included)."""
    b = k.builder
    mod = b.frem(vx, wx)
    nonzero = b.fcmp_unordered("!=", mod, k.f64(0.0))            # C's `if (mod)`: NaN is true
    signs_differ = b.xor(b.fcmp_ordered("<", wx, k.f64(0.0)), b.fcmp_ordered("<", mod, k.f64(0.0)))
    return k.select_chain(k.intrinsic("copysign", k.f64(0.0), wx),
                          (b.and_(nonzero, signs_differ), b.fadd(mod, wx)),
                          (nonzero, mod))


def _float_floordiv(k, vx, wx):
    """CPython's _float_div_mod, the floor quotient half: derived from fmod, then snapped."""
    b = k.builder
    mod = b.frem(vx, wx)
    div = b.fdiv(b.fsub(vx, mod), wx)
    nonzero = b.fcmp_unordered("!=", mod, k.f64(0.0))
    signs_differ = b.xor(b.fcmp_ordered("<", wx, k.f64(0.0)), b.fcmp_ordered("<", mod, k.f64(0.0)))
    div = b.select(b.and_(nonzero, signs_differ), b.fsub(div, k.f64(1.0)), div)
    floor = k.intrinsic("floor", div)
    snapped = b.select(b.fcmp_ordered(">", b.fsub(div, floor), k.f64(0.5)), b.fadd(floor, k.f64(1.0)), floor)
    zero = k.intrinsic("copysign", k.f64(0.0), b.fdiv(vx, wx))  # a zero with the true quotient's sign
    return b.select(b.fcmp_unordered("!=", div, k.f64(0.0)), snapped, zero)


def _floordiv(k, v, a, b):
    bld = k.builder
    if _is_float(v):
        k.fail_if(bld.fcmp_ordered("==", b, k.f64(0.0)), Status.FLOAT_FLOOR_DIVISION_BY_ZERO)
        return _float_floordiv(k, a, b)
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
        return _float_mod(k, a, b)
    k.fail_if(bld.icmp_signed("==", b, k.i64(0)), Status.INT_MODULO_BY_ZERO)
    # INT_MIN % -1 traps in hardware; x % -1 == x % 1 == 0
    b = bld.select(bld.icmp_signed("==", b, k.i64(-1)), k.i64(1), b)
    r = bld.srem(a, b)
    adjust = bld.and_(bld.icmp_signed("!=", r, k.i64(0)), bld.icmp_signed("<", bld.xor(r, b), k.i64(0)))
    return bld.select(adjust, bld.add(r, b), r)


def _float_pow(k, iv, iw):
    """CPython's float_pow: its special cases, then libm pow on |v| with the sign put back."""
    b = k.builder
    zero, one = k.f64(0.0), k.f64(1.0)
    w_finite, v_finite = k.is_finite(iw), k.is_finite(iv)
    v_zero = b.fcmp_ordered("==", iv, zero)
    v_negative = b.fcmp_ordered("<", iv, zero)
    w_odd = k.is_odd_integer(iw)
    # 0.0 ** negative finite raises; negative ** finite non-integer is complex in Python
    k.fail_if(b.and_(v_zero, b.and_(b.fcmp_ordered("<", iw, zero), w_finite)), Status.ZERO_TO_NEGATIVE_POWER)
    w_fraction = b.fcmp_unordered("!=", iw, k.intrinsic("floor", iw))
    k.fail_if(b.and_(b.and_(v_negative, v_finite), b.and_(w_finite, w_fraction)), Status.FALLBACK)

    av = k.intrinsic("fabs", iv)
    negate = b.and_(v_negative, w_odd)
    p = k.libm("pow", av, iw)
    general = b.and_(b.and_(w_finite, v_finite),
                     b.and_(b.fcmp_unordered("!=", iw, zero),
                            b.and_(b.fcmp_unordered("!=", iv, zero), b.fcmp_unordered("!=", av, one))))
    k.fail_if(b.and_(general, k.is_inf(p)), Status.POW_OVERFLOW)

    w_positive = b.fcmp_ordered(">", iw, zero)
    inf_base = b.select(w_positive, b.select(w_odd, iv, av),
                        b.select(w_odd, k.intrinsic("copysign", zero, iv), zero))
    inf_exponent = k.select_chain(
        zero, (b.fcmp_ordered("==", av, one), one),
        (b.icmp_unsigned("==", w_positive, b.fcmp_ordered(">", av, one)), k.intrinsic("fabs", iw)))
    return k.select_chain(
        b.select(negate, b.fneg(p), p),
        (b.fcmp_ordered("==", iw, zero), one),                        # v ** 0 is 1, even nan ** 0
        (k.is_nan(iv), iv),
        (k.is_nan(iw), b.select(b.fcmp_ordered("==", iv, one), one, iw)),
        (k.is_inf(iw), inf_exponent),
        (k.is_inf(iv), inf_base),
        (v_zero, b.select(w_odd, iv, zero)),
        (b.fcmp_ordered("==", av, one), b.select(negate, k.f64(-1.0), one)),
    )


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
    fnty = ll.FunctionType(ll.LiteralStructType([I64, I1]), [I64, I64])
    smul = k._declare("llvm.smul.with.overflow.i64", fnty)
    product = b.call(smul, [r, x])
    k.fail_if(b.and_(odd, b.extract_value(product, 1)), Status.FALLBACK)
    r_next = b.select(odd, b.extract_value(product, 0), r)
    e_next = b.lshr(e, k.i64(1))
    square = b.call(smul, [x, x])
    # the square is only used while bits remain, and then it overflowing means the result does
    k.fail_if(b.and_(b.icmp_signed("!=", e_next, k.i64(0)), b.extract_value(square, 1)), Status.FALLBACK)
    latch = b.block
    for phi, nxt in ((r, r_next), (x, b.extract_value(square, 0)), (e, e_next)):
        phi.add_incoming(nxt, latch)
    b.branch(head)

    b.position_at_end(done)
    return r


def _pow(k, v, a, b):
    return _float_pow(k, a, b) if _is_float(v) else _int_pow(k, a, b)


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
    if v.args[0].type == ir.BOOL:
        return k.builder.uitofp(a, DOUBLE)
    return k.builder.sitofp(a, DOUBLE)


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


def _math_hypot(k, v, x, y):
    """math.hypot(x, y): CPython's vector_norm for two coordinates (libm hypot differs in the
    last bit), then no error: an overflow is just inf."""
    b = k.builder
    ax, ay = k.intrinsic("fabs", x), k.intrinsic("fabs", y)
    largest = k.f64(0.0)
    for a in (ax, ay):                                   # `if (x > max) max = x;`: NaN skipped
        largest = b.select(b.fcmp_ordered(">", a, largest), a, largest)
    norm = _vector_norm_2(k, ax, ay, largest)
    found_nan = b.or_(k.is_nan(ax), k.is_nan(ay))
    return k.select_chain(norm,
                          (k.is_inf(largest), largest),
                          (found_nan, k.f64(float("nan"))),
                          (b.fcmp_ordered("==", largest, k.f64(0.0)), largest))


def _vector_norm_2(k, x0, x1, largest):
    """CPython's vector_norm body for finite |x0|, |x1| <= largest, largest > 0."""
    b = k.builder
    dbl_min = sys.float_info.min
    # frexp's max_e < -1023, i.e. largest < 2**-1024: ldexp(1.0, -max_e) would overflow
    tiny = b.fcmp_ordered("<", largest, k.f64(2.0 ** -1024))
    if sys.version_info >= (3, 12):
        # 3.12+: divide by DBL_MIN to make subnormals normal, recurse once, scale back
        def scaled(z):
            return b.select(tiny, b.fdiv(z, k.f64(dbl_min)), z)
        norm = _norm_fma(k, scaled(x0), scaled(x1), scaled(largest))
        return b.select(tiny, b.fmul(k.f64(dbl_min), norm), norm)
    # 3.11: Veltkamp-Dekker squares; the tiny case divides by max instead
    return b.select(tiny, _norm_tiny_311(k, x0, x1, largest), _norm_split_311(k, x0, x1, largest))


def _scale_for(k, largest):
    """ldexp(1.0, -max_e) with max_e from frexp(largest), for 2**-1024 <= largest < inf.

    Exact bit arithmetic: max_e is the unbiased exponent + 1 (a subnormal largest is first
    scaled up by 2**54); 2**-max_e is normal except for max_e in (1023, 1024]."""
    b = k.builder
    subnormal = b.fcmp_ordered("<", largest, k.f64(2.0 ** -1022))
    y = b.select(subnormal, b.fmul(largest, k.f64(2.0 ** 54)), largest)
    biased = b.and_(b.lshr(b.bitcast(y, I64), k.i64(52)), k.i64(0x7FF))
    max_e = b.sub(b.sub(biased, k.i64(1022)), b.select(subnormal, k.i64(54), k.i64(0)))
    n = b.sub(k.i64(0), max_e)                                  # the scale is 2**n, n >= -1024

    def clamp(x, lo, hi):
        x = b.select(b.icmp_signed("<", x, k.i64(lo)), k.i64(lo), x)
        return b.select(b.icmp_signed(">", x, k.i64(hi)), k.i64(hi), x)

    normal_bits = b.shl(clamp(b.add(n, k.i64(1023)), 1, 2046), k.i64(52))
    subnormal_bits = b.shl(k.i64(1), clamp(b.add(n, k.i64(1074)), 0, 51))
    bits = b.select(b.icmp_signed(">=", n, k.i64(-1022)), normal_bits, subnormal_bits)
    return b.bitcast(bits, DOUBLE)


def _norm_fma(k, x0, x1, largest):
    """vector_norm of 3.12+: exact squares through fma (dl_mul), Neumaier sums (dl_fast_sum)."""
    b = k.builder
    scale = _scale_for(k, largest)
    one = k.f64(1.0)
    csum, frac1, frac2 = one, k.f64(0.0), k.f64(0.0)

    def dl_mul(p, q):
        z = b.fmul(p, q)
        return z, k.intrinsic("fma", p, q, b.fneg(z))

    def dl_fast_sum(p, q):
        s = b.fadd(p, q)
        return s, b.fadd(b.fsub(p, s), q)

    for x in (x0, x1):
        x = b.fmul(x, scale)
        hi, lo = dl_mul(x, x)
        csum, s_lo = dl_fast_sum(csum, hi)
        frac1, frac2 = b.fadd(frac1, lo), b.fadd(frac2, s_lo)
    h = k.intrinsic("sqrt", b.fadd(b.fsub(csum, one), b.fadd(frac1, frac2)))
    hi, lo = dl_mul(b.fneg(h), h)
    csum, s_lo = dl_fast_sum(csum, hi)
    frac1, frac2 = b.fadd(frac1, lo), b.fadd(frac2, s_lo)
    x = b.fadd(b.fsub(csum, one), b.fadd(frac1, frac2))
    h = b.fadd(h, b.fdiv(x, b.fmul(k.f64(2.0), h)))
    return b.fdiv(h, scale)


def _norm_split_311(k, x0, x1, largest):
    """vector_norm of 3.11: Veltkamp-Dekker split squares, three compensated accumulators."""
    b = k.builder
    scale = _scale_for(k, largest)
    one, t27 = k.f64(1.0), k.f64(134217729.0)
    csum, fracs = one, [k.f64(0.0)] * 3

    def split(x):
        t = b.fmul(x, t27)
        hi = b.fsub(t, b.fsub(t, x))
        return hi, b.fsub(x, hi)

    def accumulate(x, i):
        nonlocal csum
        new = b.fadd(csum, x)
        fracs[i] = b.fadd(fracs[i], b.fadd(b.fsub(csum, new), x))
        csum = new

    for x in (x0, x1):
        hi, lo = split(b.fmul(x, scale))
        accumulate(b.fmul(hi, hi), 0)
        accumulate(b.fmul(b.fmul(k.f64(2.0), hi), lo), 1)
        fracs[2] = b.fadd(fracs[2], b.fmul(lo, lo))
    total = lambda: b.fadd(b.fsub(csum, one), b.fadd(b.fadd(fracs[0], fracs[1]), fracs[2]))
    h = k.intrinsic("sqrt", total())
    hi, lo = split(h)
    accumulate(b.fmul(b.fneg(hi), hi), 0)
    accumulate(b.fmul(b.fmul(k.f64(-2.0), hi), lo), 1)
    accumulate(b.fmul(b.fneg(lo), lo), 2)
    x = total()
    return b.fdiv(b.fadd(h, b.fdiv(x, b.fmul(k.f64(2.0), h))), scale)


def _norm_tiny_311(k, x0, x1, largest):
    b = k.builder
    one = k.f64(1.0)
    csum, frac1 = one, k.f64(0.0)
    for x in (x0, x1):
        x = b.fdiv(x, largest)
        x = b.fmul(x, x)
        new = b.fadd(csum, x)
        frac1 = b.fadd(frac1, b.fadd(b.fsub(csum, new), x))
        csum = new
    return b.fmul(largest, k.intrinsic("sqrt", b.fadd(b.fsub(csum, one), frac1)))


# ------------------------------------------------------------------------------ the op table
def _const(k, v):
    return ll.Constant(llvm_type(v.type), v.attrs["value"])


def _unsupported(k, v, *args):
    raise NotImplementedError(f"codegen: op {v.op!r} has no lowering")


LOWERINGS = {
    "param": lambda k, v: k.params[v.attrs["index"]],
    "const": _const,
    "add": _add, "sub": _sub, "mul": _mul, "div": _div,
    "floordiv": _floordiv, "mod": _mod, "pow": _pow,
    "neg": _neg, "abs": _abs, "min": _min, "max": _max,
    "fma": lambda k, v, a, b, c: k.intrinsic("fma", a, b, c),
    "lt": _compare("<"), "le": _compare("<="), "gt": _compare(">"),
    "ge": _compare(">="), "eq": _compare("=="), "ne": _compare("!="),
    "not": lambda k, v, a: k.builder.not_(a),
    "select": lambda k, v, cond, a, b: k.builder.select(cond, a, b),
    "to_f64": _to_f64, "to_i64": _to_i64, "to_bool": _to_bool,
    **{name: _math_unary(name) for name in MATH_UNARY},
    "fabs": lambda k, v, x: k.intrinsic("fabs", x),
    "atan2": _math_binary(lambda k, y, x: k.libm("atan2", y, x)),
    "hypot": _math_hypot,
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
}


def _leaves(value) -> list:
    if isinstance(value, tuple):
        return [leaf for element in value for leaf in _leaves(element)]
    return [value]


def lower_function(fn: ir.Function, module: ll.Module, symbol: str) -> ll.Function:
    """Emit `fn` into `module` as the kernel `symbol` (see the module docstring for the ABI)."""
    function = ll.Function(module, kernel_type(fn), symbol)
    function.attributes.add("nounwind")
    n = len(fn.params)
    k = KernelBuilder(module, function, n)
    for p, arg in zip(fn.params, k.params):
        arg.name = p.name or f"arg{p.attrs['index']}"
    outs = function.args[n:]
    for i, out in enumerate(outs):
        out.name = f"out{i}"
        out.add_attribute("noalias")

    values = {p: a for p, a in zip(fn.params, k.params)}
    for v in fn.walk():
        if v.regions:
            raise NotImplementedError(f"codegen: op {v.op!r} with regions has no lowering")
        lowering = LOWERINGS.get(v.op, _unsupported)
        values[v] = lowering(k, v, *(values[a] for a in v.args))

    for leaf, out in zip(_leaves(values[fn.result]), outs):
        k.builder.store(leaf, out)
    k.builder.ret(ll.Constant(I32, int(Status.OK)))
    return function
