"""The kernel being emitted: LLVM types of the IR's scalars, the form an array takes inside a
kernel (`ArrayValue`; codegen.arrays lowers the array ops), and `KernelBuilder`, the helpers every
lowering uses (early exits with a status, libm calls, intrinsics, checked i64 arithmetic)."""
from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from llvmlite import ir as ll

from tracer import ir
from tracer.errors import Status

DOUBLE = ll.DoubleType()
FLOAT = ll.FloatType()
I1 = ll.IntType(1)
I32 = ll.IntType(32)
I64 = ll.IntType(64)
PTR = ll.PointerType()

# The (alloc, free) pair kernels get their arrays' memory from: C's own, unless the caller
# provides another with the same signatures (the JIT's caching pair, codegen.runtime)
C_MEMORY = ("malloc", "free")

LLVM_TYPES = {ir.F64: DOUBLE, ir.F32: FLOAT, ir.I64: I64, ir.BOOL: I1}

INF = float("inf")


def llvm_type(t: ir.Type) -> ll.Type:
    if isinstance(t, ir.TapeType):
        return PTR                     # the tape's header (codegen.tape)
    try:
        return LLVM_TYPES[t]
    except KeyError:
        raise NotImplementedError(f"codegen: no LLVM type for IR type {t}") from None


class ArrayValue(NamedTuple):
    """An array inside a kernel: its data pointer, and its sizes and byte strides (i64 values)."""
    data: ll.Value
    sizes: tuple
    strides: tuple


def abi_types(t: ir.ArrayType) -> list[ll.Type]:
    """The kernel arguments an array parameter takes (and the LLVM values an ArrayValue is):
    ptr data, i64 size_0 ... size_{r-1}, i64 stride_0 ... stride_{r-1}."""
    return [PTR] + [I64] * (2 * t.rank)


def from_arguments(t: ir.ArrayType, args: list) -> ArrayValue:
    """The ArrayValue of an array parameter, from its kernel arguments (consumed)."""
    data = args.pop(0)
    sizes = tuple(args.pop(0) for _ in range(t.rank))
    strides = tuple(args.pop(0) for _ in range(t.rank))
    return ArrayValue(data, sizes, strides)


def fields(a: ArrayValue) -> list:
    return [a.data, *a.sizes, *a.strides]


def param_types(t: ir.Type) -> list[ll.Type]:
    """The kernel arguments one parameter of type `t` takes (an array takes several)."""
    if isinstance(t, ir.ArrayType):
        return abi_types(t)
    return [llvm_type(t)]


def kernel_type(fn: ir.Function) -> ll.FunctionType:
    params = [a for p in fn.params for a in param_types(p.type)]
    outs = [PTR] * len(ir.leaf_types(fn.result_type))
    return ll.FunctionType(I32, params + outs)


class KernelBuilder:
    """Emits one kernel: the LLVM values of the IR values, and the early exits for failures."""

    def __init__(self, module: ll.Module, function: ll.Function, fn: ir.Function,
                 memory: tuple[str, str] = C_MEMORY):
        self.module = module
        self.memory = memory
        self.function = function
        args = list(function.args)
        self.params = []             # one per IR parameter (an array: an ArrayValue)
        for p in fn.params:
            if isinstance(p.type, ir.ArrayType):
                self.params.append(from_arguments(p.type, args))
            else:
                self.params.append(args.pop(0))
        self.builder = ll.IRBuilder(function.append_basic_block("entry"))
        self._status_blocks: dict[Status, ll.Block] = {}
        self.tapes: dict = {}            # tape_new op -> its header (codegen.tape)
        self.arena = None                # the slot of the arena's head, if arrays are made (codegen.arrays)
        self.deferred = None             # a flag's slot: failures are noted there, not returned (lower_map)
        self.cleanups: list[Callable[[KernelBuilder], None]] = []   # run by `ret`, in order (tapes, arena)
        self.regions = None              # what lowers the regions of if/loop/map (codegen.lower.BlockLowering)
        self.array_params = [(a, p.type) for a, p in zip(self.params, fn.params) if isinstance(p.type, ir.ArrayType)]

    # -- constants -------------------------------------------------------------------------
    @staticmethod
    def f64(x: float) -> ll.Constant:
        return ll.Constant(DOUBLE, x)

    @staticmethod
    def i64(n: int) -> ll.Constant:
        return ll.Constant(I64, n)

    # -- failures: a branch to a block that returns the status -----------------------------
    def fail_if(self, cond: ll.Value, status: Status) -> None:
        """Return `status` if `cond`; while `deferred` is set (a flag's slot), only note it there."""
        if self.deferred is not None:
            self.builder.store(self.builder.or_(self.builder.load(self.deferred, typ=I1), cond), self.deferred)
            return
        block = self._status_blocks.get(status)
        if block is None:
            block = self.function.append_basic_block(f"fail_{status.name.lower()}")
            with self.builder.goto_block(block):
                self.ret(status)
            self._status_blocks[status] = block
        ok = self.function.append_basic_block("ok")
        br = self.builder.cbranch(cond, block, ok)
        br.set_weights([1, 1 << 20])      # failures are cold: keep the fast path straight
        self.builder.position_at_end(ok)

    def ret(self, status: int) -> None:
        """Return `status`, releasing first what the kernel holds: each of `cleanups` emits its
        release (every tape's buffer, codegen.tape; the arrays made, codegen.arrays)."""
        for cleanup in self.cleanups:
            cleanup(self)
        self.builder.ret(ll.Constant(I32, int(status)))

    # -- calls ---------------------------------------------------------------------------------
    def call_c(self, name: str, result: ll.Type, params: list, *args: ll.Value) -> ll.Value:
        """A call to the C library's `name` (malloc-family functions). Sizes are given as i64;
        on a 32-bit target (wasm32) C's size_t is 32 bits, and they are truncated to it."""
        if "-p:32" in str(self.module.data_layout):
            size_t = ll.IntType(32)
            args = [self.builder.trunc(a, size_t) if t == I64 else a for a, t in zip(args, params)]
            params = [size_t if t == I64 else t for t in params]
        return self.builder.call(self._declare(name, ll.FunctionType(result, params), ("nounwind",)), args)

    def allocate_bytes(self, size: ll.Value) -> ll.Value:
        """A new block of `size` bytes from the kernel's allocator (NULL if there is no memory).
        Its result is `noalias`, as malloc's is to LLVM: loops writing into a new array need no
        run-time overlap checks."""
        block = self.call_c(self.memory[0], PTR, [I64], size)
        block.callee.return_value.add_attribute("noalias")
        return block

    def free_bytes(self, block: ll.Value) -> None:
        self.call_c(self.memory[1], ll.VoidType(), [PTR], block)

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

    def call_intrinsic(self, name: str, result: ll.Type, params: list, *args: ll.Value) -> ll.Value:
        """A call to the LLVM intrinsic `name` (full name, e.g. llvm.fma.v4f64) of that signature."""
        return self.builder.call(self._declare(name, ll.FunctionType(result, params)), args)

    def libm(self, name: str, *args: ll.Value) -> ll.Value:
        """A call to the C library's `name`, exactly as CPython makes it.

        `nobuiltin` stops LLVM from treating it as the known libm function: otherwise it folds
        pow(x, 2.0) into x * x (or constants with its own folder), which can differ in the last bit.
        """
        fnty = ll.FunctionType(DOUBLE, [DOUBLE] * len(args))
        attrs = ("nobuiltin", "readnone", "nounwind")  # errno is never read: no memory effects
        return self.builder.call(self._declare(name, fnty, attrs), args)

    def with_overflow(self, op: str, a: ll.Value, b: ll.Value) -> tuple[ll.Value, ll.Value]:
        """i64 a <op> b (op: sadd, ssub, smul) and whether it overflowed."""
        fnty = ll.FunctionType(ll.LiteralStructType([I64, I1]), [I64, I64])
        pair = self.builder.call(self._declare(f"llvm.{op}.with.overflow.i64", fnty), [a, b])
        return self.builder.extract_value(pair, 0), self.builder.extract_value(pair, 1)

    def checked(self, op: str, a: ll.Value, b: ll.Value) -> ll.Value:
        """i64 a <op> b that returns FALLBACK instead of wrapping."""
        value, overflowed = self.with_overflow(op, a, b)
        self.fail_if(overflowed, Status.FALLBACK)
        return value

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
