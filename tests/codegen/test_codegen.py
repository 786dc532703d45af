"""Tests for the back end (codegen/): every op against its evaluator, the CPython entry, the JIT.

IR is built by hand. Kernels are called through ctypes (their ABI is plain C); entries are
called as real builtins made with PyCFunction_NewEx(METH_FASTCALL), as the dispatcher does.
"""
from __future__ import annotations

import ctypes
import functools
import itertools
import math
import random
import struct
import sys

import pytest
from hypothesis import given, settings, strategies as st

from codegen import (LOWERINGS, assembly, compile_function, host_target_machine, lower_module,
                     optimize)
from ir_builder import Builder
from tracer import ir
from tracer.ir import ops
from tracer.errors import STATUS_EXCEPTIONS, OpFailure, Status
from tracer.ir import BOOL, F32, F64, I64, I64_MAX, I64_MIN, EntryArg


# ------------------------------------------------------------------------------------ building IR
def single_op(op: str, types, **attrs) -> ir.Function:
    b = Builder(*types, name=op)
    return b.function(b.op(op, *b.params, **attrs))


# -------------------------------------------------------------------------------- calling kernels
CTYPES = {F64: ctypes.c_double, F32: ctypes.c_float, I64: ctypes.c_int64, BOOL: ctypes.c_bool}


class Kernel:
    """A compiled function called through its kernel ABI: ("ok", value) or ("fail", status)."""

    def __init__(self, fn: ir.Function):
        self.compiled = compile_function(fn, [EntryArg(p.type, i) for i, p in enumerate(fn.params)])
        self.leaves = ir.leaf_types(fn.result_type)
        self.result_type = fn.result_type
        argtypes = [CTYPES[p.type] for p in fn.params] + [ctypes.POINTER(CTYPES[t]) for t in self.leaves]
        self.call = ctypes.CFUNCTYPE(ctypes.c_int32, *argtypes)(self.compiled.kernel_address)

    def __call__(self, *args):
        outs = [CTYPES[t]() for t in self.leaves]
        status = self.call(*args, *[ctypes.byref(o) for o in outs])
        if status != Status.OK:
            return ("fail", Status(status))
        values = iter([o.value for o in outs])

        def rebuild(t):
            if isinstance(t, ir.TupleType):
                return tuple(rebuild(e) for e in t.elements)
            return next(values)
        return ("ok", rebuild(self.result_type))


@functools.cache
def kernel(op: str, types: tuple, attrs: tuple = ()) -> Kernel:
    return Kernel(single_op(op, types, **dict(attrs)))


def reference(fn_or_op, args, attrs=()):
    try:
        if isinstance(fn_or_op, str):
            return ("ok", ops.OPS[fn_or_op].evaluate(*args, **dict(attrs)))
        return ("ok", ops.run(fn_or_op, args))
    except OpFailure as exc:
        return ("fail", exc.status)


def same(a, b) -> bool:
    """Bit for bit for floats (0.0 is not -0.0), any NaN equal to any NaN; exact type otherwise."""
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(map(same, a, b))
    if isinstance(a, float):
        return isinstance(b, float) and (struct.pack("<d", a) == struct.pack("<d", b) or (a != a and b != b))
    return type(a) is type(b) and a == b


def check(op, types, args, attrs=()):
    got = kernel(op, tuple(types), tuple(attrs))(*args)
    want = reference(op, args, attrs)
    assert got[0] == want[0] and same(got[1], want[1]), f"{op}{tuple(args)}: got {got}, want {want}"


# ---------------------------------------------------------------------------------------- inputs
def from_bits(n: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", n & (2 ** 64 - 1)))[0]


FLOAT_EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, 2.5, -2.5, 0.1, -0.1, 1.5,
               math.inf, -math.inf, math.nan, -math.nan, 1e308, -1e308, 1.7976931348623157e308,
               5e-324, -5e-324, 2.2250738585072014e-308, 1e-310, 1e-300, 1e300, 1e16, -1e16,
               2.0 ** 53, 2.0 ** 63, -2.0 ** 63, 2.0 ** 64, 710.0, -745.0, 1e-10, 7.0, -7.0, 100.5]
INT_EDGES = [0, 1, -1, 2, -2, 3, -3, 7, -7, 10, -10, 63, 64, I64_MAX, I64_MIN, I64_MAX - 1, I64_MIN + 1,
             2 ** 31, -2 ** 31, 2 ** 32, 3037000499, 3037000500, -3037000500, 2 ** 53, 2 ** 53 + 1,
             -2 ** 53, -2 ** 53 - 1, 2 ** 62, -2 ** 62]


def random_float(rng: random.Random) -> float:
    kind = rng.random()
    if kind < 0.35:
        return from_bits(rng.getrandbits(64))
    if kind < 0.6:
        return rng.uniform(-10, 10)
    if kind < 0.7:
        return float(rng.randint(-100, 100))
    return rng.uniform(-1, 1) * 10.0 ** rng.randint(-320, 308)


def random_int(rng: random.Random) -> int:
    kind = rng.random()
    if kind < 0.3:
        return rng.randint(I64_MIN, I64_MAX)
    if kind < 0.6:
        return rng.randint(-100, 100)
    return rng.randint(-2 ** rng.randint(1, 63), 2 ** rng.randint(1, 63))


def inputs(types, n_random=300, seed=0):
    """All combinations of edge values, then random ones."""
    rng = random.Random(seed)
    edges = {F64: FLOAT_EDGES, I64: INT_EDGES, BOOL: [False, True]}
    yield from itertools.product(*(edges[t] for t in types))
    draw = {F64: random_float, I64: random_int, BOOL: lambda r: r.random() < 0.5}
    for _ in range(n_random):
        yield tuple(draw[t](rng) for t in types)


def signatures(op: str):
    """The operand types an op accepts, from its own type rule."""
    for arity in (1, 2, 3):
        for types in itertools.product((F64, I64, BOOL), repeat=arity):
            try:
                ops.OPS[op].result_type(types, {})
            except (TypeError, KeyError, IndexError):
                continue
            yield types


# ------------------------------------------------------------------------------------ every op
CONTROL_FLOW = ("if", "loop", "raise", "block_param", "map")   # lowered by codegen.lower.BlockLowering


def test_every_op_has_a_lowering():
    assert set(LOWERINGS) | set(CONTROL_FLOW) == set(ops.OPS)


TAPE_OPS = ("tape_new", "tape_push", "tape_get", "tape_len", "tape_free")   # test_tape_round_trip
ARRAY_OPS = ("dim", "load", "index", "broadcast_in_dim", "transpose", "reduce", "argreduce", "matmul", "full",
             "iota", "pack", "copy", "reshape", "store", "writeback", "slice", "in_place_check")
# tests/test_array_kernels.py, test_array_ops.py, test_array_slicing.py, test_inplace.py; "map" in tests/test_fusion.py
SCALAR_OPS = [name for name in ops.OPS if name not in
              ("param", "const", "tuple", "getitem", "fma", "pow") + CONTROL_FLOW + TAPE_OPS + ARRAY_OPS]


@pytest.mark.parametrize("op", SCALAR_OPS)
def test_op_matches_evaluator(op):
    sigs = list(signatures(op))
    assert sigs, op
    for types in sigs:
        for args in inputs(types):
            check(op, types, args)


def complex_pow_overflows(a, b) -> bool:
    """(-1e308) ** 2.5 is a complex overflow in Python: OverflowError('complex exponentiation'),
    which the evaluator calls POW_OVERFLOW (whose message is float pow's). The compiled code
    returns FALLBACK there, so the original function raises CPython's own exception."""
    return a < 0 and math.isfinite(a) and math.isfinite(b) and b != math.floor(b)


def test_pow_matches_evaluator():
    k = kernel("pow", (F64, F64))
    for args in inputs((F64, F64), n_random=3000):
        if complex_pow_overflows(*args) and reference("pow", args) == ("fail", Status.POW_OVERFLOW):
            assert k(*args) == ("fail", Status.FALLBACK)
            with pytest.raises(OverflowError, match="complex exponentiation"):
                args[0] ** args[1]
            continue
        check("pow", (F64, F64), args)
    rng = random.Random(1)
    bases = INT_EDGES + [rng.randint(-50, 50) for _ in range(50)]
    exponents = list(range(-3, 70)) + [127, 128, 1000]
    for a in bases:
        for e in exponents:
            if abs(a) >= 2 and e > 70 and abs(a) ** 1 > 2 ** 20:
                continue  # Python would build a huge int; a smaller case covers the same overflow
            check("pow", (I64, I64), (a, e))
    for a in (0, 1, -1):                     # cheap in Python even for huge exponents
        for e in (I64_MAX, I64_MAX - 1, 2 ** 40 + 1):
            check("pow", (I64, I64), (a, e))


def ieee_fma(a, b, c):
    """IEEE fma, exactly: one rounding of a*b + c."""
    from fractions import Fraction
    if math.isfinite(a) and math.isfinite(b):
        if not math.isfinite(c):
            return c                                   # a finite product does not overflow first
        exact = Fraction(a) * Fraction(b) + Fraction(c)
        if exact == 0:
            return a * b + c                           # the sign of an exact zero
        try:
            return float(exact)
        except OverflowError:
            return math.inf if exact > 0 else -math.inf
    return a * b + c                                   # an infinite or NaN factor: as IEEE


def test_fma_is_one_rounding():
    """fma is IEEE fma (compared with an exact reference) and agrees with the evaluator, except
    where the evaluator computes a*b + c: a finite product past the float range plus an infinite
    addend (IEEE: the addend; a*b + c: inf - inf = NaN). Reported as an evaluator bug."""
    k = kernel("fma", (F64, F64, F64))
    for args in itertools.islice(inputs((F64, F64, F64), n_random=3000), 0, None, 5):
        got = k(*args)
        assert got[0] == "ok" and same(got[1], ieee_fma(*args)), (args, got)
        a, b, c = args
        if math.isfinite(a) and math.isfinite(b) and math.isinf(a * b) and math.isinf(c):
            continue
        try:
            want = ops.OPS["fma"].evaluate(*args)
        except (ValueError, OverflowError):   # math.fma's errors, where an evaluator uses it
            continue
        assert same(got[1], want), (args, got, want)


def test_const_of_each_type():
    for value in [0.0, -0.0, math.inf, -math.inf, math.nan, 5e-324, 0.1, 0, -1, I64_MAX, I64_MIN, True, False]:
        b = Builder()
        fn = b.function(b.const(value))
        assert same(Kernel(fn)()[1], value), value


def test_nested_tuple_and_getitem():
    b = Builder(F64, I64, BOOL)
    x, n, flag = b.params
    inner = b.op("tuple", n, flag)
    outer = b.op("tuple", x, inner, b.op("neg", x))
    picked = b.op("getitem", outer, index=1)
    fn = b.function(b.op("tuple", outer, b.op("getitem", picked, index=0), b.op("getitem", outer, index=2)))
    assert ir.leaf_types(fn.result_type) == [F64, I64, BOOL, F64, I64, F64]
    k = Kernel(fn)
    for args in [(1.5, 7, True), (-0.0, I64_MIN, False)]:
        assert same(k(*args)[1], ops.run(fn, list(args)))


def test_failure_leaves_outputs_untouched():
    b = Builder(F64, F64)
    x, y = b.params
    fn = b.function(b.op("tuple", x, b.op("div", x, y)))
    k = Kernel(fn)
    outs = [ctypes.c_double(42.0), ctypes.c_double(43.0)]
    status = k.call(1.0, 0.0, *[ctypes.byref(o) for o in outs])
    assert status == Status.FLOAT_DIVISION_BY_ZERO
    assert [o.value for o in outs] == [42.0, 43.0]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["add", "sub", "mul", "div", "floordiv", "mod", "pow", "atan2", "hypot",
                        "copysign", "fmod", "math_pow", "min", "max"]),
       st.floats(), st.floats())
def test_float_binary_hypothesis(op, a, b):
    if op == "pow" and complex_pow_overflows(a, b) and reference(op, (a, b)) == ("fail", Status.POW_OVERFLOW):
        assert kernel(op, (F64, F64))(a, b) == ("fail", Status.FALLBACK)
        return
    check(op, (F64, F64), (a, b))


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["add", "sub", "mul", "div", "floordiv", "mod", "min", "max", "lt", "ne"]),
       st.integers(I64_MIN, I64_MAX), st.integers(I64_MIN, I64_MAX))
def test_int_binary_hypothesis(op, a, b):
    check(op, (I64, I64), (a, b))


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(ops.MATH_UNARY + ["floor", "ceil", "trunc", "round_even", "to_i64", "to_bool"]),
       st.floats())
def test_float_unary_hypothesis(op, x):
    check(op, (F64,), (x,))


# ------------------------------------------------------------------------ random programs
FLOAT_PROGRAM_OPS = {1: ["neg", "abs", "sqrt", "exp", "log", "sin", "floor", "round_even", "fabs", "trunc"],
                     2: ["add", "sub", "mul", "div", "floordiv", "mod", "pow", "min", "max", "atan2",
                         "hypot", "copysign", "fmod", "math_pow"]}
INT_PROGRAM_OPS = {1: ["neg", "abs"], 2: ["add", "sub", "mul", "floordiv", "mod", "min", "max"]}


def random_program(rng: random.Random, t, table, n_params=3, steps=12) -> ir.Function:
    """Ops on params and constants (so LLVM folds and combines them), with a compare+select."""
    b = Builder(*[t] * n_params)
    edges = FLOAT_EDGES if t == F64 else INT_EDGES
    pool = list(b.params) + [b.const(rng.choice(edges)) for _ in range(2)]
    for _ in range(steps):
        arity = rng.choice([1, 2, 2, 2])
        pool.append(b.op(rng.choice(table[arity]), *[rng.choice(pool) for _ in range(arity)]))
        if rng.random() < 0.2:
            x, y = rng.choice(pool), rng.choice(pool)
            pool.append(b.op("select", b.op(rng.choice(["lt", "le", "eq", "ne"]), x, y), x, y))
    if t == I64 and rng.random() < 0.5:
        pool.append(b.op("pow", rng.choice(pool), b.const(rng.randint(0, 5))))
    return b.function(b.op("tuple", *pool[-3:]))


@pytest.mark.parametrize("t", [F64, I64])
def test_random_programs_match_evaluator(t):
    rng = random.Random(11 if t == F64 else 12)
    for _ in range(15):
        fn = random_program(rng, t, FLOAT_PROGRAM_OPS if t == F64 else INT_PROGRAM_OPS)
        k = Kernel(fn)
        for args in itertools.islice(inputs((t, t, t), n_random=200, seed=rng.random()), 0, None, 53):
            got, want = k(*args), reference(fn, list(args))
            if want == ("fail", Status.POW_OVERFLOW) and got == ("fail", Status.FALLBACK):
                continue          # a complex overflow: see complex_pow_overflows
            assert got[0] == want[0] and same(got[1], want[1]), f"{fn}\n{args}: got {got}, want {want}"


# ------------------------------------------------------------------------------------- hypot
def test_hypot_is_cpythons_vector_norm():
    """math.hypot is CPython's own algorithm (libm's hypot differs in the last bit), per version."""
    k = kernel("hypot", (F64, F64))
    rng = random.Random(7)
    tiny = [0.0, 5e-324, 1e-323, 2.0 ** -1024, 2.0 ** -1023, 2.0 ** -1022, 3e-308, 1e-310]
    cases = [(a, b) for a in tiny for b in tiny]
    cases += [(a, b) for a in FLOAT_EDGES for b in FLOAT_EDGES]
    cases += [(random_float(rng), random_float(rng)) for _ in range(50_000)]
    cases += [(rng.uniform(-10, 10), rng.uniform(-10, 10)) for _ in range(50_000)]
    for a, b in cases:
        got, want = k(a, b), ("ok", math.hypot(a, b))
        assert same(got[1], want[1]), (a, b, got, want)


# ------------------------------------------------------------------------------- the assembly
def host_has_fma() -> bool:
    import llvmlite.binding as llvm
    return "+fma" in llvm.get_host_cpu_features().flatten().split(",")


def kernel_asm(compiled) -> str:
    return compiled.assembly.split(compiled.kernel_symbol + ":", 1)[1].split(".Lfunc_end", 1)[0]


@pytest.mark.skipif(not host_has_fma(), reason="the host CPU has no FMA instructions")
def test_fma_is_one_vfmadd():
    asm = kernel_asm(kernel("fma", (F64, F64, F64)).compiled)
    assert asm.count("vfmadd") == 1 and "call" not in asm, asm


def test_mul_add_is_not_contracted():
    b = Builder(F64, F64, F64)
    x, y, z = b.params
    compiled = Kernel(b.function(b.op("add", b.op("mul", x, y), z))).compiled
    assert "fmadd" not in kernel_asm(compiled) and "contract" not in compiled.optimized_ir


def test_named_like_libm_does_not_call_itself():
    for name in ("sin", "pow", "fma"):
        b = Builder(F64, F64, name=name)
        x, y = b.params
        fn = b.function(b.op("add", b.op("sin", x), b.op("pow", x, y)))
        k = Kernel(fn)
        assert k.compiled.kernel_symbol.startswith("__tracer_" + name)
        assert same(k(0.5, 2.0)[1], math.sin(0.5) + 0.5 ** 2.0)


def test_dump_api_without_jit():
    b = Builder(F64, F64, F64)
    x, y, z = b.params
    fn = b.function(b.op("fma", x, y, z))
    module = lower_module(fn, [EntryArg(F64, i) for i in range(3)])
    text = str(module)
    assert '@"__tracer_f"(' in text and '@"__tracer_f_entry"(' in text and "llvm.fma.f64" in text
    optimized = optimize(module)
    asm = assembly(optimized)
    assert "__tracer_f_entry:" in asm
    assert host_target_machine().triple in str(optimized)


# ---------------------------------------------------------------------------------- the entry
class PyMethodDef(ctypes.Structure):
    _fields_ = [("ml_name", ctypes.c_char_p), ("ml_meth", ctypes.c_void_p),
                ("ml_flags", ctypes.c_int), ("ml_doc", ctypes.c_char_p)]


METH_FASTCALL = 0x0080
_new_builtin = ctypes.pythonapi.PyCFunction_NewEx
_new_builtin.restype = ctypes.py_object
_new_builtin.argtypes = [ctypes.POINTER(PyMethodDef), ctypes.py_object, ctypes.c_void_p]
_keep_alive = []     # a builtin keeps its PyMethodDef* (and the code) without owning them


def builtin(fn: ir.Function, entry_args, fallback=None):
    """The compiled entry as a real METH_FASTCALL builtin whose `self` is `fallback`."""
    compiled = compile_function(fn, entry_args, fn.name)
    md = PyMethodDef(fn.name.encode(), compiled.entry_address, METH_FASTCALL, None)
    _keep_alive.append((md, compiled))
    return _new_builtin(ctypes.byref(md), fallback, None)


def assert_miss(f, *args):
    """A guard miss is NULL without an exception; CPython reports that as a SystemError."""
    with pytest.raises(SystemError, match="without (setting an )?exception"):
        f(*args)


def float_builtin(op, fallback=None):
    b = Builder(F64, F64, name=op)
    return builtin(b.function(b.op(op, *b.params)), [EntryArg(F64, 0), EntryArg(F64, 1)], fallback)


def int_builtin(op, fallback=None):
    b = Builder(I64, I64, name=op)
    return builtin(b.function(b.op(op, *b.params)), [EntryArg(I64, 0), EntryArg(I64, 1)], fallback)


def test_entry_boxes_each_scalar_type():
    f = float_builtin("mul")
    assert same(f(1.5, -2.0), -3.0) and same(f(-0.0, 1.0), -0.0)
    g = int_builtin("add")
    assert g(2, 3) == 5 and type(g(2, 3)) is int and g(I64_MIN, 0) == I64_MIN
    h = int_builtin("lt")
    assert h(1, 2) is True and h(2, 1) is False
    d = int_builtin("div")
    assert same(d(7, 2), 3.5) and same(d(0, -5), -0.0)


def test_entry_exact_type_checks_miss_without_exception():
    f = float_builtin("add")
    assert f(1.0, 2.0) == 3.0

    class MyFloat(float):
        pass
    for args in [(1, 2.0), (1.0, True), (MyFloat(1.0), 2.0), ("1", 2.0), (None, 2.0), (1.0,), (1.0, 2.0, 3.0), ()]:
        assert_miss(f, *args)
    g = int_builtin("add")
    for args in [(1.0, 2), (True, 2), (2, False), (2 ** 63, 1), (-2 ** 63 - 1, 1), (2 ** 100, 0)]:
        assert_miss(g, *args)
    assert g(2 ** 63 - 1, 0) == 2 ** 63 - 1 and g(-2 ** 63, 0) == -2 ** 63
    b = Builder(BOOL, name="negate")
    n = builtin(b.function(b.op("not", b.params[0])), [EntryArg(BOOL, 0)])
    assert n(True) is False and n(False) is True
    for arg in (0, 1, 1.0, None):
        assert_miss(n, arg)


def test_entry_trace_time_constants_are_guarded():
    b = Builder(F64, name="scaled")
    x, = b.params
    fn = b.function(b.op("mul", x, b.const(3.0)))
    f = builtin(fn, [EntryArg(F64, 0), EntryArg(I64, None, 3), EntryArg(F64, None, -0.0), EntryArg(BOOL, None, True)])
    assert f(2.0, 3, -0.0, True) == 6.0
    for args in [(2.0, 4, -0.0, True), (2.0, 3.0, -0.0, True), (2.0, 3, 0.0, True), (2.0, 3, -0.0, False),
                 (2.0, True, -0.0, True), (2.0, 3, -0.0, 1)]:
        assert_miss(f, *args)


def test_entry_boxes_nested_tuples():
    b = Builder(F64, I64, BOOL, name="nested")
    x, n, flag = b.params
    fn = b.function(b.op("tuple", x, b.op("tuple", n, b.op("tuple", flag, x)), b.op("tuple")))
    f = builtin(fn, [EntryArg(F64, 0), EntryArg(I64, 1), EntryArg(BOOL, 2)])
    assert f(1.5, -4, True) == (1.5, (-4, (True, 1.5)), ())


def test_entry_bool_results_keep_refcounts_right():
    h = int_builtin("lt")
    before = sys.getrefcount(True), sys.getrefcount(False)
    for i in range(10_000):
        h(i % 2, 1)
    after = sys.getrefcount(True), sys.getrefcount(False)
    assert after == before      # immortal on 3.12+ (and unchanged), counted on 3.11


def test_entry_result_refcount():
    f = float_builtin("add")
    r = f(1.0, 2.0)
    assert sys.getrefcount(r) == 2     # only `r` (and the call's argument) hold it


ERROR_CASES = [
    ("div", F64, (1.0, 0.0), Status.FLOAT_DIVISION_BY_ZERO),
    ("floordiv", F64, (1.0, -0.0), Status.FLOAT_FLOOR_DIVISION_BY_ZERO),
    ("mod", F64, (1.0, 0.0), Status.FLOAT_MODULO_BY_ZERO),
    ("div", I64, (1, 0), Status.INT_DIVISION_BY_ZERO),
    ("floordiv", I64, (1, 0), Status.INT_FLOOR_DIVISION_BY_ZERO),
    ("mod", I64, (1, 0), Status.INT_MODULO_BY_ZERO),
    ("pow", F64, (0.0, -1.0), Status.ZERO_TO_NEGATIVE_POWER),
    ("pow", F64, (10.0, 400.0), Status.POW_OVERFLOW),
    ("atan2", F64, (math.inf, math.nan), None),             # no error: NaN from a NaN input
    ("math_pow", F64, (0.0, -1.0), Status.MATH_DOMAIN),
    ("math_pow", F64, (10.0, 400.0), Status.MATH_RANGE),
]


@pytest.mark.parametrize("op, t, args, status", ERROR_CASES)
def test_entry_raises_what_cpython_raises(op, t, args, status):
    f = (float_builtin if t == F64 else int_builtin)(op)
    if status is None:
        f(*args)
        return
    exc_type, message = STATUS_EXCEPTIONS[status]
    with pytest.raises(exc_type) as info:
        f(*args)
    assert type(info.value) is exc_type and str(info.value) == message


@pytest.mark.parametrize("op, x, status", [("sqrt", -1.0, Status.MATH_DOMAIN), ("exp", 1000.0, Status.MATH_RANGE),
                                           ("log", 0.0, Status.MATH_DOMAIN), ("to_i64", math.inf, Status.FLOAT_INFINITY_TO_INT),
                                           ("to_i64", math.nan, Status.FLOAT_NAN_TO_INT)])
def test_entry_raises_unary(op, x, status):
    b = Builder(F64, name=op)
    f = builtin(b.function(b.op(op, b.params[0])), [EntryArg(F64, 0)])
    exc_type, message = STATUS_EXCEPTIONS[status]
    with pytest.raises(exc_type) as info:
        f(x)
    assert type(info.value) is exc_type and str(info.value) == message


def test_entry_fallback_calls_self():
    calls = []

    def original(a, b):
        calls.append((a, b))
        return a * b
    f = int_builtin("mul", fallback=original)
    assert f(3, 4) == 12 and calls == []
    assert f(2 ** 40, 2 ** 40) == 2 ** 80 and calls == [(2 ** 40, 2 ** 40)]
    p = int_builtin("pow", fallback=lambda a, b: a ** b)
    assert p(2, 10) == 1024 and p(2, -1) == 0.5 and p(3, 50) == 3 ** 50
    g = float_builtin("pow", fallback=lambda a, b: a ** b)
    assert g(-8.0, 1 / 3) == (-8.0) ** (1 / 3)


def test_entry_fallback_exception_propagates():
    def original(a, b):
        raise KeyError("from the original")
    f = int_builtin("add", fallback=original)
    with pytest.raises(KeyError, match="from the original"):
        f(I64_MAX, 1)


# ------------------------------------------------------------------------------------- the JIT
def test_compiled_function_handle():
    b = Builder(F64, F64, F64, name="fma")
    fn = b.function(b.op("add", b.op("mul", *b.params[:2]), b.params[2]))
    c = compile_function(fn, [EntryArg(F64, i) for i in range(3)], "fma")
    assert c.entry_address and c.kernel_address and c.entry_address != c.kernel_address
    assert c.kernel_symbol.startswith("__tracer_fma_") and c.entry_symbol == c.kernel_symbol + "_entry"
    assert "define i32 @" in c.llvm_ir and "fmul" in c.optimized_ir and c.kernel_symbol + ":" in c.assembly
    again = compile_function(fn, [EntryArg(F64, i) for i in range(3)], "fma", export_kernel=False)
    assert again.kernel_symbol != c.kernel_symbol         # one library per compile, unique names
    assert again.kernel_address is None and again.kernel_symbol + ":" not in again.assembly
    f = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.py_object, ctypes.POINTER(ctypes.py_object),
                          ctypes.c_ssize_t)(again.entry_address)
    assert f(None, (ctypes.py_object * 3)(2.0, 3.0, 4.0), 3) == 10.0
    assert set(c.timings) == {"lower", "optimize", "codegen", "link"}


def test_entry_args_must_feed_every_parameter():
    b = Builder(F64, F64)
    fn = b.function(b.op("add", *b.params))
    with pytest.raises(ValueError):
        compile_function(fn, [EntryArg(F64, 0)])
    with pytest.raises(ValueError):
        compile_function(fn, [EntryArg(F64, 0), EntryArg(I64, 1)])


def tape_round_trip() -> ir.Function:
    """Push (x * i, i, i odd) for i in 0..n-1 in one loop, then sum what a second loop reads back
    in reverse: sum(x * i * (2 if odd else 1)), the tape's length added as an f64."""
    x, n = ir.make_param(0, "x", F64), ir.make_param(1, "n", I64)
    b = ir.Block()
    def emit(block, op, *args, **attrs):
        v = ir.Value(op, args, ops.OPS[op].result_type(tuple(a.type for a in args), attrs), attrs)
        block.values.append(v)
        return v
    fields = (F64, I64, BOOL)
    tape = emit(b, "tape_new", fields=fields)
    zero, one, two = (emit(b, "const", value=c) for c in (0, 1, 2))
    push = ir.Block()
    i, t = push.add_param(I64), push.add_param(ir.TapeType(fields))
    odd = emit(push, "eq", emit(push, "mod", i, two), one)
    pushed = emit(push, "tape_push", t, emit(push, "mul", x, emit(push, "to_f64", i)), i, odd)
    nxt = emit(push, "add", i, one)
    push.results = [emit(push, "lt", nxt, n), nxt, pushed]
    filled = ir.Value("loop", (zero, tape), ir.TupleType((I64, tape.type)))
    filled.regions = [push]
    b.values.append(filled)
    full = emit(b, "getitem", filled, index=1)
    length = emit(b, "tape_len", full)
    read = ir.Block()
    k, acc = read.add_param(I64), read.add_param(F64)
    record = emit(read, "tape_get", full, k)
    value, index, flag = (emit(read, "getitem", record, index=j) for j in range(3))
    term = emit(read, "select", flag, emit(read, "mul", value, emit(read, "const", value=2.0)), value)
    total = emit(read, "add", acc, emit(read, "add", term, emit(read, "to_f64", emit(read, "sub", index, index))))
    read.results = [emit(read, "gt", k, zero), emit(read, "sub", k, one), total]
    summed = ir.Value("loop", (emit(b, "sub", length, one), emit(b, "const", value=0.0)), ir.TupleType((I64, F64)))
    summed.regions = [read]
    b.values.append(summed)
    emit(b, "tape_free", full)
    result = emit(b, "add", emit(b, "getitem", summed, index=1), emit(b, "to_f64", length))
    b.results = [result]
    return ir.verify(ir.Function("tape_round_trip", [x, n], b))


def test_tape_round_trip():
    """Records of every field type survive the buffer's growth (past its first 64 records)."""
    fn = tape_round_trip()
    compiled = Kernel(fn)
    for x, n in [(1.5, 1), (0.25, 63), (-2.0, 64), (3.0, 65), (0.1, 1000)]:
        acc = 0.0
        for i in reversed(range(n)):
            term = x * float(i)
            acc = acc + ((term * 2.0 if i % 2 == 1 else term) + 0.0)
        assert ops.run(fn, [x, n]) == acc + n
        assert compiled(x, n) == ("ok", acc + n)
