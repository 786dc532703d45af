"""Lowering of `cast` (tracer.ir.cast_ops): a number converted between NumPy's dtypes.

Integers are LLVM integers of their width (the unsigned ones too: signedness is in the ops that
read them: zext, uitofp). A float16 is its 16 bits (an i16): LLVM's `half` would need the
compiler-rt routines `__truncdfhf2`/`__extendhfsf2`, which neither the JIT nor every export
target links, so the two conversions are written out here in integer and double arithmetic,
exact and round-to-nearest-even as NumPy's `npy_double_to_half` and `npy_half_to_double` are.
"""
from __future__ import annotations

from llvmlite import ir as ll

from codegen.kernel import DOUBLE, FLOAT, I64, LLVM_TYPES
from codegen.lowerings import lowers
from tracer import ir
from tracer.errors import Status
from tracer.ir.cast_ops import float_to_int_range

I16 = ll.IntType(16)
SCALAR_TYPES = LLVM_TYPES


def i64(n: int) -> ll.Constant:
    return ll.Constant(I64, n)


def f64(x: float) -> ll.Constant:
    return ll.Constant(DOUBLE, x)


def half_to_double(b: ll.IRBuilder, h: ll.Value) -> ll.Value:
    """The f64 value of float16 bits `h` (exact; a NaN keeps its sign and payload)."""
    return half_to(b, h, DOUBLE)


def half_to(b: ll.IRBuilder, h: ll.Value, typ: ll.Type) -> ll.Value:
    """The value of float16 bits `h` as a double or a float (exact, as NumPy's npy_half_to_double
    and npy_half_to_float: a NaN keeps its sign and payload, unquieted), in integer arithmetic,
    so that no bits raise a floating-point flag (codegen.fpflags watches them)."""
    bits_t, exponent_bits, mantissa_bits = (I64, 11, 52) if typ == DOUBLE else (ll.IntType(32), 8, 23)
    width = bits_t.width

    def n(x):
        return ll.Constant(bits_t, x)
    bits = b.zext(h, bits_t)
    sign = b.shl(b.lshr(bits, n(15)), n(width - 1))
    exponent = b.and_(b.lshr(bits, n(10)), n(31))
    mantissa = b.and_(bits, n(0x3FF))
    # normal, inf and NaN: the fields moved into the wider type's (exponent rebiased from 15)
    top, bias = 2 ** exponent_bits - 1, 2 ** (exponent_bits - 1) - 1
    rebiased = b.select(b.icmp_unsigned("==", exponent, n(31)), n(top), b.add(exponent, n(bias - 15)))
    normal = b.bitcast(b.or_(sign, b.or_(b.shl(rebiased, n(mantissa_bits)), b.shl(mantissa, n(mantissa_bits - 10)))),
                       typ)
    # zero and subnormal: mantissa * 2**-24, with the sign
    tiny = b.fmul(b.uitofp(mantissa, typ), ll.Constant(typ, 2.0 ** -24))
    tiny = b.bitcast(b.or_(b.bitcast(tiny, bits_t), sign), typ)
    return b.select(b.icmp_unsigned("==", exponent, n(0)), tiny, normal)


def double_to_half(b: ll.IRBuilder, x: ll.Value) -> ll.Value:
    """Float16 bits of f64 `x`, rounded once to nearest even (past 65520 in size: inf; a NaN
    keeps its sign and the top of its payload, and stays a NaN)."""
    bits = b.bitcast(x, I64)
    sign = b.trunc(b.shl(b.lshr(bits, i64(63)), i64(15)), I16)
    magnitude = b.and_(bits, i64(0x7FFF_FFFF_FFFF_FFFF))
    size = b.bitcast(magnitude, DOUBLE)
    # below 65520 in size (65504 and less, rounded): compared as bits, and only such a number
    # converted to integer below, so that an inf or a NaN raises no invalid flag (a float
    # compare of a NaN may: codegen.fpflags watches the flags)
    in_range = b.icmp_unsigned("<", magnitude, i64(0x40EF_FE00_0000_0000))
    finite_size = b.select(in_range, size, f64(0.0))
    # the exponent of the result's unit in the last place: 2**(e - 10), with e >= -14 (subnormals)
    e = b.sub(b.lshr(magnitude, i64(52)), i64(1023))
    e = b.select(b.icmp_signed("<", e, i64(-14)), i64(-14), e)
    scale = b.bitcast(b.shl(b.sub(i64(1033), e), i64(52)), DOUBLE)          # 2**(10 - e), exact
    units = b.fmul(finite_size, scale)                                           # below 2**11: exact
    units = b.fsub(b.fadd(units, f64(2.0 ** 52)), f64(2.0 ** 52))            # to nearest, ties to even
    finite = b.add(b.shl(b.add(e, i64(14)), i64(10)), b.fptosi(units, I64))  # a carry moves up the exponent
    payload = b.lshr(b.and_(magnitude, i64(0x000F_FFFF_FFFF_FFFF)), i64(42))
    nan = b.or_(i64(0x7C00), b.select(b.icmp_unsigned("==", payload, i64(0)), i64(1), payload))
    result = b.select(in_range, finite, i64(0x7C00))
    result = b.select(b.icmp_unsigned(">", magnitude, i64(0x7FF0_0000_0000_0000)), nan, result)
    return b.or_(b.trunc(result, I16), sign)


def to_double(b: ll.IRBuilder, source: ir.ScalarType, x: ll.Value) -> ll.Value:
    """A number of type `source` as an f64 (exact but for int64 and uint64 past 2**53)."""
    if source == ir.F64:
        return x
    if source == ir.F32:
        return b.fpext(x, DOUBLE)
    if source == ir.F16:
        return half_to_double(b, x)
    if source in (ir.BOOL, *ir.UNSIGNED):
        return b.uitofp(x, DOUBLE)
    return b.sitofp(x, DOUBLE)


def float_to_integer(k, source: ir.ScalarType, to: ir.ScalarType, x: ll.Value, checked: bool) -> ll.Value:
    """Truncated toward zero, then wrapped to `to` (FALLBACK where NumPy's C cast warns)."""
    b = k.builder
    x = to_double(b, source, x)
    lo, hi = float_to_int_range(to)
    if checked:
        lo, hi = max(lo, ir.int_range(to)[0]), min(hi, ir.int_range(to)[1])
    # in range after truncation: lo - 1 < x < hi + 1 (a NaN compares false)
    in_range = b.and_(b.fcmp_ordered(">", x, k.f64(float(lo) - 1.0)), b.fcmp_ordered("<", x, k.f64(float(hi) + 1.0)))
    k.fail_if(b.not_(in_range), Status.FALLBACK)
    if to == ir.U64:       # at or past 2**63 only an unsigned conversion holds it; below 0, a signed one
        value = b.select(b.fcmp_ordered(">=", x, k.f64(2.0 ** 63)), b.fptoui(x, I64), b.fptosi(x, I64))
    else:
        value = b.fptosi(x, I64)
    return b.trunc(value, SCALAR_TYPES[to]) if ir.BITS[to] < 64 else value


def integer_to_integer(k, source: ir.ScalarType, to: ir.ScalarType, x: ll.Value, checked: bool) -> ll.Value:
    b = k.builder
    source_bits, to_bits = (1 if source == ir.BOOL else ir.BITS[source]), ir.BITS[to]
    if checked:
        lo, hi = ir.int_range(to)
        s_lo, s_hi = (0, 1) if source == ir.BOOL else ir.int_range(source)
        wide = b.zext(x, I64) if source in (ir.BOOL, *ir.UNSIGNED) and source_bits < 64 else \
            b.sext(x, I64) if source_bits < 64 else x
        if source == ir.U64:      # as unsigned: past i64 when the sign bit is set
            if to != ir.U64:
                k.fail_if(b.icmp_signed("<", wide, k.i64(0)), Status.FALLBACK)
            if hi < 2 ** 63 - 1:
                k.fail_if(b.icmp_unsigned(">", wide, k.i64(hi)), Status.FALLBACK)
        else:
            if s_lo < lo:
                k.fail_if(b.icmp_signed("<", wide, k.i64(lo)), Status.FALLBACK)
            if s_hi > hi:
                k.fail_if(b.icmp_signed(">", wide, k.i64(min(hi, 2 ** 63 - 1))), Status.FALLBACK)
    if to_bits < source_bits:
        return b.trunc(x, SCALAR_TYPES[to])
    if to_bits > source_bits:
        return b.zext(x, SCALAR_TYPES[to]) if source in (ir.BOOL, *ir.UNSIGNED) else b.sext(x, SCALAR_TYPES[to])
    return x


@lowers("cast")
def cast(k, v, x):
    source, to, checked = v.args[0].type, v.type, bool(v.attrs.get("checked"))
    b = k.builder
    if source == to:
        return x
    if to == ir.BOOL:
        if source in ir.FLOATS:
            return b.fcmp_unordered("!=", to_double(b, source, x), k.f64(0.0))     # NaN is true
        return b.icmp_unsigned("!=", x, ll.Constant(x.type, 0))
    if to in ir.FLOATS:
        if source in (*ir.INTEGERS, ir.BOOL) and to != ir.F16:
            convert = b.uitofp if source in (ir.BOOL, *ir.UNSIGNED) else b.sitofp
            result = convert(x, SCALAR_TYPES[to])       # rounded once, as NumPy's C cast rounds
        else:
            wide = to_double(b, source, x)
            result = wide if to == ir.F64 else b.fptrunc(wide, FLOAT) if to == ir.F32 else double_to_half(b, wide)
            if to != ir.F64:
                back = to_double(b, to, result)
                k.fail_if(b.and_(k.is_finite(wide), b.not_(k.is_finite(back))), Status.FALLBACK)
        return result
    if source in ir.FLOATS:
        return float_to_integer(k, source, to, x, checked)
    return integer_to_integer(k, source, to, x, checked)
