"""Lowering of the scalar ops (tracer.ir.scalar_ops): arithmetic, comparisons, conversions and
`math`, one rule per op and operand type (`@lowers(name, on=type)`, codegen.lowerings). An op on
arrays applies the same rule to every element (codegen.arrays.elementwise).

The i64 bit and number-theory ops are lowered in codegen.integers, and CPython's own `math`
algorithms with more than one step (gamma, lgamma, fsum, frexp, ldexp) in codegen.cpython_math.

Every rule must give what the op's evaluator gives, bit for bit: plain IEEE float ops (no
fast-math flags), i64 ops that never wrap (overflow returns FALLBACK), and CPython's own
algorithms where CPython does not simply call libm (codegen.cpython_float).
"""
from __future__ import annotations

from llvmlite import ir as ll

from codegen import cpython_math, integers  # noqa: F401 -- their @lowers rules (int bits, gamma, fsum...)
from codegen.cpython_float import float_floordiv, float_mod, float_pow, math_hypot
from codegen.kernel import DOUBLE, FLOAT, I1, I64, llvm_type
from codegen.lowerings import lowers
from tracer import ir
from tracer.errors import Status
from tracer.ir.ops import MATH_CAN_OVERFLOW, MATH_UNARY


@lowers("const")
def const(k, v):
    value = v.attrs["value"]
    if v.type == ir.F16:                  # its bits (codegen.casts)
        import numpy
        value = int(numpy.float16(value).view(numpy.uint16))
    elif v.type in ir.UNSIGNED and value >= 2 ** (ir.BITS[v.type] - 1):
        value -= 2 ** ir.BITS[v.type]     # the same bits, as LLVM reads an integer literal
    return ll.Constant(llvm_type(v.type), value)


# --------------------------------------------------------------------------------- arithmetic
# on f64: the IEEE operation; on i64: checked, FALLBACK past 64 bits (Python's ints are unbounded)
@lowers("add", on=ir.F64)
def add_f64(k, v, a, b):
    return k.builder.fadd(a, b)


@lowers("add", on=ir.I64)
def add_i64(k, v, a, b):
    if v.attrs.get("bounded"):         # a range loop's next index: never past i64 (tracer.ir.scalar_ops)
        return k.builder.add(a, b, flags=("nsw",))
    return k.checked("sadd", a, b)


@lowers("sub", on=ir.F64)
def sub_f64(k, v, a, b):
    return k.builder.fsub(a, b)


@lowers("sub", on=ir.I64)
def sub_i64(k, v, a, b):
    return k.checked("ssub", a, b)


@lowers("mul", on=ir.F64)
def mul_f64(k, v, a, b):
    return k.builder.fmul(a, b)


@lowers("mul", on=ir.I64)
def mul_i64(k, v, a, b):
    return k.checked("smul", a, b)


@lowers("neg", on=ir.F64)
def neg_f64(k, v, a):
    return k.builder.fneg(a)


@lowers("neg", on=ir.I64)
def neg_i64(k, v, a):
    return k.checked("ssub", k.i64(0), a)


@lowers("abs", on=ir.F64)
@lowers("fabs")
def fabs(k, v, a):
    return k.intrinsic("fabs", a)


@lowers("abs", on=ir.I64)
def abs_i64(k, v, a):
    b = k.builder
    k.fail_if(b.icmp_signed("==", a, k.i64(ir.I64_MIN)), Status.FALLBACK)
    return b.select(b.icmp_signed("<", a, k.i64(0)), b.neg(a), a)


@lowers("div", on=ir.F64)
def div_f64(k, v, a, b):
    bld = k.builder
    k.fail_if(bld.fcmp_ordered("==", b, k.f64(0.0)), Status.FLOAT_DIVISION_BY_ZERO)
    return bld.fdiv(a, b)


@lowers("div", on=ir.I64)
def div_i64(k, v, a, b):
    bld = k.builder
    k.fail_if(bld.icmp_signed("==", b, k.i64(0)), Status.INT_DIVISION_BY_ZERO)
    # beyond 2**53 an int is not exact as a double and Python divides the big ints itself
    def too_big(x):
        return bld.or_(bld.icmp_signed(">", x, k.i64(2 ** 53)), bld.icmp_signed("<", x, k.i64(-2 ** 53)))
    k.fail_if(bld.or_(too_big(a), too_big(b)), Status.FALLBACK)
    return bld.fdiv(bld.sitofp(a, DOUBLE), bld.sitofp(b, DOUBLE))


@lowers("fdiv")
def fdiv(k, v, a, b):
    return k.builder.fdiv(a, b)


@lowers("floordiv", on=ir.F64)
def floordiv_f64(k, v, a, b):
    k.fail_if(k.builder.fcmp_ordered("==", b, k.f64(0.0)), Status.FLOAT_FLOOR_DIVISION_BY_ZERO)
    return float_floordiv(k, a, b)


@lowers("floordiv", on=ir.I64)
def floordiv_i64(k, v, a, b):
    bld = k.builder
    k.fail_if(bld.icmp_signed("==", b, k.i64(0)), Status.INT_FLOOR_DIVISION_BY_ZERO)
    overflows = bld.and_(bld.icmp_signed("==", a, k.i64(ir.I64_MIN)), bld.icmp_signed("==", b, k.i64(-1)))
    k.fail_if(overflows, Status.FALLBACK)
    # inside a map the failures above are only noted (k.deferred) and the division still runs:
    # divide by 1 where the hardware would trap (SIGFPE); the element's result is discarded
    b = bld.select(bld.or_(bld.icmp_signed("==", b, k.i64(0)), overflows), k.i64(1), b)
    q, r = bld.sdiv(a, b), bld.srem(a, b)
    # C truncates; Python floors: step down when there is a remainder of the other sign
    adjust = bld.and_(bld.icmp_signed("!=", r, k.i64(0)), bld.icmp_signed("<", bld.xor(r, b), k.i64(0)))
    return bld.sub(q, bld.zext(adjust, I64))


@lowers("mod", on=ir.F64)
def mod_f64(k, v, a, b):
    k.fail_if(k.builder.fcmp_ordered("==", b, k.f64(0.0)), Status.FLOAT_MODULO_BY_ZERO)
    return float_mod(k, a, b)


@lowers("mod", on=ir.I64)
def mod_i64(k, v, a, b):
    bld = k.builder
    k.fail_if(bld.icmp_signed("==", b, k.i64(0)), Status.INT_MODULO_BY_ZERO)
    # INT_MIN % -1 traps in hardware; x % -1 == x % 1 == 0. A zero divisor (a failure only noted
    # inside a map, whose element is then discarded) must not trap either
    b = bld.select(bld.or_(bld.icmp_signed("==", b, k.i64(-1)), bld.icmp_signed("==", b, k.i64(0))), k.i64(1), b)
    r = bld.srem(a, b)
    adjust = bld.and_(bld.icmp_signed("!=", r, k.i64(0)), bld.icmp_signed("<", bld.xor(r, b), k.i64(0)))
    return bld.select(adjust, bld.add(r, b), r)


@lowers("pow", on=ir.F64)
def pow_f64(k, v, a, b):
    return float_pow(k, a, b)


@lowers("pow", on=ir.I64)
def pow_i64(k, v, base, exp):
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


@lowers("ieee_pow")
def ieee_pow(k, v, a, b):
    return k.libm("pow", a, b)


@lowers("fma")
def fma(k, v, a, b, c):
    return k.intrinsic("fma", a, b, c)


# min/max: Python's, the first operand unless the second is strictly beyond it (NaN: the first)
@lowers("min", on=ir.F64)
def min_f64(k, v, a, b):
    return k.builder.select(k.builder.fcmp_ordered("<", b, a), b, a)


@lowers("min", on=ir.I64)
def min_i64(k, v, a, b):
    return k.builder.select(k.builder.icmp_signed("<", b, a), b, a)


@lowers("max", on=ir.F64)
def max_f64(k, v, a, b):
    return k.builder.select(k.builder.fcmp_ordered(">", b, a), b, a)


@lowers("max", on=ir.I64)
def max_i64(k, v, a, b):
    return k.builder.select(k.builder.icmp_signed(">", b, a), b, a)


# np.maximum / np.minimum: a if a > b (a < b) or a is NaN, else b (a tie of signed zeros gives b)
@lowers("maximum", on=ir.F64)
def maximum_f64(k, v, a, b):
    bld = k.builder
    return bld.select(bld.or_(bld.fcmp_ordered(">", a, b), k.is_nan(a)), a, b)


@lowers("minimum", on=ir.F64)
def minimum_f64(k, v, a, b):
    bld = k.builder
    return bld.select(bld.or_(bld.fcmp_ordered("<", a, b), k.is_nan(a)), a, b)


@lowers("maximum", on=ir.I64)
def maximum_i64(k, v, a, b):
    return k.builder.select(k.builder.icmp_signed(">=", a, b), a, b)


@lowers("minimum", on=ir.I64)
def minimum_i64(k, v, a, b):
    return k.builder.select(k.builder.icmp_signed("<=", a, b), a, b)


# -------------------------------------------------------------------------------- comparisons
COMPARISONS = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}


def _compare_f64(symbol: str):
    def lower(k, v, a, b):        # NaN: every comparison is false except !=
        if symbol == "!=":
            return k.builder.fcmp_unordered(symbol, a, b)
        return k.builder.fcmp_ordered(symbol, a, b)
    return lower


def _compare_i64(symbol: str):
    return lambda k, v, a, b: k.builder.icmp_signed(symbol, a, b)


def _compare_bool(symbol: str):   # False < True: unsigned (a signed i1 True is -1)
    return lambda k, v, a, b: k.builder.icmp_unsigned(symbol, a, b)


for _name, _symbol in COMPARISONS.items():
    lowers(_name, on=ir.F64)(_compare_f64(_symbol))
    lowers(_name, on=ir.I64)(_compare_i64(_symbol))
    lowers(_name, on=ir.BOOL)(_compare_bool(_symbol))


@lowers("not")
def not_(k, v, a):
    return k.builder.not_(a)


@lowers("select")
def select(k, v, cond, a, b):
    return k.builder.select(cond, a, b)


# -------------------------------------------------------------------------------- conversions
@lowers("to_f64", on=ir.F32)
def f32_to_f64(k, v, a):
    return k.builder.fpext(a, DOUBLE)


@lowers("to_f64", on=ir.BOOL)
def bool_to_f64(k, v, a):
    return k.builder.uitofp(a, DOUBLE)


@lowers("to_f64", on=ir.I64)
def i64_to_f64(k, v, a):
    return k.builder.sitofp(a, DOUBLE)


# to f32: rounded once, to nearest (an i64 converts directly: through f64 it could round twice)
@lowers("to_f32", on=ir.F64)
def f64_to_f32(k, v, a):
    return k.builder.fptrunc(a, FLOAT)


@lowers("to_f32", on=ir.BOOL)
def bool_to_f32(k, v, a):
    return k.builder.uitofp(a, FLOAT)


@lowers("to_f32", on=ir.I64)
def i64_to_f32(k, v, a):
    return k.builder.sitofp(a, FLOAT)


@lowers("to_i64", on=ir.BOOL)
def bool_to_i64(k, v, a):
    return k.builder.zext(a, I64)


@lowers("to_i64", on=ir.F64)
def f64_to_i64(k, v, a):
    b = k.builder
    k.fail_if(k.is_nan(a), Status.FLOAT_NAN_TO_INT)
    k.fail_if(k.is_inf(a), Status.FLOAT_INFINITY_TO_INT)
    in_range = b.and_(b.fcmp_ordered(">=", a, k.f64(-2.0 ** 63)), b.fcmp_ordered("<", a, k.f64(2.0 ** 63)))
    k.fail_if(b.not_(in_range), Status.FALLBACK)
    return b.fptosi(a, I64)


@lowers("to_bool", on=ir.F64)
def f64_to_bool(k, v, a):
    return k.builder.fcmp_unordered("!=", a, k.f64(0.0))   # NaN is true


@lowers("to_bool", on=ir.I64)
def i64_to_bool(k, v, a):
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


for _name in MATH_UNARY:
    lowers(_name)(_math_unary(_name))


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


lowers("atan2")(_math_binary(lambda k, y, x: k.libm("atan2", y, x)))
lowers("copysign")(_math_binary(lambda k, x, y: k.intrinsic("copysign", x, y)))
lowers("fmod")(_math_binary(lambda k, x, y: k.builder.frem(x, y)))
lowers("remainder")(_math_binary(lambda k, x, y: _remainder(k, x, y)))


def _remainder(k, x, y):
    """libm's remainder (exact, as CPython's), except that a zero has x's sign, as CPython's
    always has (glibc's can be -0.0 for a subnormal y)."""
    b = k.builder
    r = k.libm("remainder", x, y)
    zero = b.fcmp_ordered("==", r, ll.Constant(r.type, 0.0))
    return b.select(zero, k.intrinsic("copysign", ll.Constant(r.type, 0.0), x), r)


@lowers("hypot")
def hypot(k, v, x, y):
    return math_hypot(k, x, y)


@lowers("math_pow")
def math_pow(k, v, x, y):
    """CPython's math_pow: libm pow; errors only for finite inputs (0 ** negative is a domain
    error, overflow a range error); non-finite inputs get C99's special values."""
    b = k.builder
    r = k.libm("pow", x, y)
    finite = b.and_(k.is_finite(x), k.is_finite(y))
    x_zero = b.fcmp_ordered("==", x, k.f64(0.0))
    k.fail_if(b.and_(finite, b.or_(k.is_nan(r), b.and_(k.is_inf(r), x_zero))), Status.MATH_DOMAIN)
    k.fail_if(b.and_(finite, k.is_inf(r)), Status.MATH_RANGE)
    return r


@lowers("ieee_log")
def ieee_log(k, v, x):
    return k.libm("log", x)


def _exact(intrinsic: str):
    """An exact operation LLVM has an intrinsic for (floor, ceil, trunc, roundeven)."""
    return lambda k, v, x: k.intrinsic(intrinsic, x)


lowers("floor")(_exact("floor"))
lowers("ceil")(_exact("ceil"))
lowers("trunc")(_exact("trunc"))
lowers("round_even")(_exact("roundeven"))


@lowers("isnan")
def isnan(k, v, x):
    return k.is_nan(x)


@lowers("isinf")
def isinf(k, v, x):
    return k.is_inf(x)


@lowers("isfinite")
def isfinite(k, v, x):
    return k.is_finite(x)
