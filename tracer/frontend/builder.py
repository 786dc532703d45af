"""Builds IR while the symbolic interpreter runs, with Python's numeric semantics.

Operands are either traced values (`ir.Value`, known only at run time) or trace-time constants
(plain Python numbers). Two constants combine in Python right away (exact, big ints included);
anything touching a traced value emits IR, converting operands the way CPython does
(`int + float` converts the int; `True + 1` treats the bool as 1; `2 ** -1` is a float power).

Every traced value also carries its *example*: its value for the arguments of the call being
traced, evaluated with the op's reference semantics. When the tracer needs a concrete Python value
(`range(n)`, an index, an `if` on an int) it `concretize`s: that is allowed for values computed
only from int and bool arguments, and records a guard that those arguments keep their values.
A branch on a float is data-dependent control flow: the interpreter forks (tracer.frontend.branches).
"""
from __future__ import annotations

from bytecode import BinaryOp

from tracer.errors import (
    BigIntConstant,
    BigIntInput,
    DataDependentControlFlow,
    NeedsConcreteValue,
    OpFailure,
    SourceLoc,
    Status,
    UnsupportedError,
    exception_for,
)
from tracer.ir import (
    BOOL,
    F16,
    F32,
    F64,
    I64,
    I64_MAX,
    I64_MIN,
    NARROW,
    NUMPY_DTYPE_NAMES,
    ArrayType,
    Block,
    Function,
    ScalarType,
    TupleType,
    Value,
    ops,
    type_of_constant,
)
from tracer.ir.reductions import COUNTED_SUMS

Operand = "Value | int | float | bool"


class Failed:
    """The example of a value whose op fails for the example arguments (and how it fails)."""

    def __init__(self, status):
        self.status = status


class Unknown:
    """The example of a value computed in a traced branch or loop (no single trace-time value)."""


UNKNOWN = Unknown()


class NeedsPython(Exception):
    """Raised from compiled code where only Python gives the exact result (big ints): the call
    runs the Python function instead (a non-builtin exception falls back to Python)."""


# BinaryOp -> (IR op, Python operator for constants)
BINARY_OPS = {
    BinaryOp.ADD: "add", BinaryOp.INPLACE_ADD: "add",
    BinaryOp.SUBTRACT: "sub", BinaryOp.INPLACE_SUBTRACT: "sub",
    BinaryOp.MULTIPLY: "mul", BinaryOp.INPLACE_MULTIPLY: "mul",
    BinaryOp.TRUE_DIVIDE: "div", BinaryOp.INPLACE_TRUE_DIVIDE: "div",
    BinaryOp.FLOOR_DIVIDE: "floordiv", BinaryOp.INPLACE_FLOOR_DIVIDE: "floordiv",
    BinaryOp.REMAINDER: "mod", BinaryOp.INPLACE_REMAINDER: "mod",
    BinaryOp.POWER: "pow", BinaryOp.INPLACE_POWER: "pow",
}
PYTHON_BINARY = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b, "floordiv": lambda a, b: a // b, "mod": lambda a, b: a % b,
    "pow": lambda a, b: a ** b,
}
PYTHON_COMPARE = {
    "lt": lambda a, b: a < b, "le": lambda a, b: a <= b, "gt": lambda a, b: a > b,
    "ge": lambda a, b: a >= b, "eq": lambda a, b: a == b, "ne": lambda a, b: a != b,
}
NUMBER_TYPES = (bool, int, float)
# A float32 scalar (np.float32: an element or a reduction of a float32 array) has NumPy's float32
# arithmetic: operators on it go to tracer.frontend.arrays (as on arrays), which computes through to_f64
# and to_f32; other scalar code (math functions, int(), tuples) does not take it yet
# (the other narrow dtypes likewise, through `cast`: tracer.frontend.dtypes)
F32_SCALAR_OPS = {"to_f64", "store", "pack", "full", "tuple", "numpy_scalar_check", "cast", "mask_update",
                  "index_update"}
# the array ops that take arrays of the narrow dtypes as they are (they move elements, compute
# nothing); the others see them cast to int64 or float64 first (tracer.frontend.dtypes)
NARROW_ARRAY_OPS = {"cast", "load", "store", "full", "pack", "copy", "reshape", "broadcast_in_dim", "transpose",
                    "index", "slice", "dim", "writeback", "in_place_check", "mask_select", "mask_update",
                    "index_select", "index_update", "tuple", "getitem"}
# and those that take float16 arrays as they are: sums and products in NumPy's float16 loops
# (tracer.frontend.numpy_float16)
FLOAT16_ARRAY_OPS = {"reduce", "scan"}
# and those that take the narrow integer arrays as they are: maxima, minima and their positions
# (codegen.extremes: NumPy's vector loops, no int64 copy)
NARROW_EXTREME_KINDS = {"max", "min", "argmax", "argmin"}
FLOAT32_SCALARS = ("a {dtype} scalar (an element or a reduction of a {dtype} array, or np.{dtype}(x)) is "
                   "supported in NumPy operations and arithmetic only yet: convert it with float(...) or int(...)")


# array ops that never loop at run time (views, one element); every other op on arrays loops
ONE_STEP_ARRAY_OPS = frozenset({"dim", "load", "index", "slice", "store"})
LOOPING_OPS = frozenset({"loop", "map", "python_call", "list_array"})    # (list_find: codegen.lists)
# A finished trace of more than MAX_TRACE_OPS ops (loops unrolled because they change lists, with
# the values that size them pinned) would take LLVM many seconds to compile, and again for every
# other size: the call runs as Python instead. While tracing, loops unroll before they are rolled
# back into loop ops: up to MAX_TRACING_OPS ops are held then. Traces for autodiff have no Python
# version: no bound.
MAX_TRACE_OPS = 12_000
MAX_TRACING_OPS = 10 * MAX_TRACE_OPS
SIZE_CHECK_EVERY = 1024         # ops emitted between two counts of the trace's size


class TraceTooLarge(UnsupportedError):
    """The trace grew past its bound: it is not compiled (no graph break, no retrace)."""
    final = True


NO_LOOPS = ("a loop or an array operation inside a try body whose handler would catch an interrupt (a `with`, "
            "a `finally`, a bare `except` or `except BaseException`): compiled code checks for Ctrl-C in loops, "
            "and an interrupt found there would skip that handler")


def loops(op: str, args: tuple, result_type) -> bool:
    """Whether an op runs a loop at run time (where compiled code checks for Ctrl-C)."""
    if op in LOOPING_OPS:
        return True
    if op in ONE_STEP_ARRAY_OPS:
        return op == "store" and isinstance(args[-1].type, ArrayType)
    return isinstance(result_type, ArrayType) or any(isinstance(a.type, ArrayType) for a in args)


def is_number(x) -> bool:
    return isinstance(x, NUMBER_TYPES)


def is_traced(x) -> bool:
    return isinstance(x, Value)


def raises_python_error(opdef, v: Value) -> bool:
    """Whether op `v` may fail at run time with an exception compiled code raises itself (not
    FALLBACK or SHAPE_MISMATCH, which run the Python function anyway)."""
    return opdef.may_fail(v) and any(st not in (Status.FALLBACK, Status.SHAPE_MISMATCH) for st in opdef.statuses)


def block_size(block: Block) -> int:
    """The ops of a block, those of the regions inside it included."""
    return len(block.values) + sum(block_size(r) for v in block.values for r in v.regions)


class GraphBuilder:
    def __init__(self, name: str):
        self.name = name
        self.params: list[Value] = []
        self.block = Block()
        self.enclosing: list[Block] = []        # the blocks holding the region being built
        self.examples: dict[Value, object] = {}
        self.loc: SourceLoc | None = None       # the user's line being traced
        self.pinned: dict[Value, object] = {}   # params whose value the trace depends on
        self.strings: list[str] = []            # strings chosen at run time index these (run_time_strings)
        self.string_ids: dict[str, int] = {}
        self.diverged: dict[int, object] = {}   # iterators a branch advanced on one side (states.changed_since)
        self.no_loops = 0       # frames in a try body whose handler catches an interrupt (opcodes.exceptions)
        self.caught_by_python = None    # None -> whether a handler of the user's may catch a failure now
        self.raise_attrs = None         # exc -> the attributes of its `raise` op (opcodes.exceptions)
        self.fails_in_handler = None    # where an op that may raise was emitted that such a handler may catch
                                        # (or inside a handler: its exception's context)
        self.max_ops: int | None = MAX_TRACE_OPS     # of the finished trace; None: no bound (autodiff's)
        self.next_size_check = SIZE_CHECK_EVERY        # (counted in emitted ops, rolled-back ones too)
        self.emitted = 0
        self.too_large = False

    # ------------------------------------------------------------------ building blocks
    def add_param(self, name: str, type: ScalarType, example, numpy: bool = False) -> Value:
        """A parameter (`numpy`: the argument is a NumPy scalar, codegen.entry reads it so)."""
        attrs = {"index": len(self.params), **({"numpy": True} if numpy else {})}
        p = Value("param", (), type, attrs, loc=self.loc, name=name)
        self.params.append(p)
        self.examples[p] = example
        return p

    def emit(self, op: str, args: tuple[Value, ...], **attrs) -> Value:
        narrow = next((a.type for a in args if a.type in NARROW), None)
        if narrow is not None and op not in F32_SCALAR_OPS:
            raise UnsupportedError(FLOAT32_SCALARS.format(dtype=NUMPY_DTYPE_NAMES[narrow]), self.loc)
        narrow = next((a.type.dtype for a in args if isinstance(a.type, ArrayType) and a.type.dtype in NARROW
                       and a.type.dtype != F32), None)
        if narrow is not None and op not in NARROW_ARRAY_OPS and not (narrow == F16 and op in FLOAT16_ARRAY_OPS) \
                and not (narrow != F16 and op in ("reduce", "argreduce") and attrs.get("kind") in NARROW_EXTREME_KINDS) \
                and not (op == "reduce" and attrs.get("kind") == "sum" and narrow in COUNTED_SUMS):     # (into int64)
            raise UnsupportedError(f"this operation ({op}) on {NUMPY_DTYPE_NAMES[narrow]} arrays is not supported "
                                   f"yet", self.loc)
        self.emitted += 1
        if self.max_ops is not None and (self.too_large or self.emitted >= self.next_size_check):
            self.check_size()
        opdef = ops.OPS[op]
        result_type = opdef.result_type(tuple(a.type for a in args), attrs)
        if self.no_loops and loops(op, args, result_type):
            raise UnsupportedError(NO_LOOPS, self.loc)
        v = Value(op, args, result_type, attrs, loc=self.loc)
        self.block.values.append(v)
        if self.caught_by_python is not None and self.fails_in_handler is None and raises_python_error(opdef, v) \
                and self.caught_by_python(None):
            self.fails_in_handler = self.loc
        if opdef.effect or isinstance(result_type, ArrayType) or any(isinstance(a.type, ArrayType) for a in args):
            # never evaluated at trace time: an effect would write the caller's arrays, and no
            # value read from an array can be used at trace time anyway (`concretize`)
            self.examples[v] = UNKNOWN
            return v
        operands = [self.examples[a] for a in args]
        failed = next((x for x in operands if isinstance(x, (Failed, Unknown))), None)
        if failed is not None:
            self.examples[v] = failed
        else:
            try:
                self.examples[v] = ops.evaluate(v, operands)
            except OpFailure as exc:
                self.examples[v] = Failed(exc.status)
        return v

    def check_size(self) -> None:
        """Raise TraceTooLarge where the ops the trace holds now (nested regions included) pass
        10 x max_ops; once they have, on every later emit too (so no other path goes on tracing)."""
        if not self.too_large:
            self.next_size_check = self.emitted + SIZE_CHECK_EVERY
            blocks = [*self.enclosing, self.block]
            held = block_size(blocks[0]) + sum(len(b.values) for b in blocks[1:])
            self.too_large = held > self.max_ops * (MAX_TRACING_OPS // MAX_TRACE_OPS)
        if self.too_large:
            raise self.too_large_error()

    def too_large_error(self) -> TraceTooLarge:
        return TraceTooLarge(f"the trace grew past {self.max_ops} operations (loops unrolled over sizes known at "
                             f"trace time): compiling it would take long", self.loc)

    def append(self, v: Value, example=UNKNOWN) -> Value:
        """Add a value built elsewhere (control flow ops) to the current block."""
        self.block.values.append(v)
        self.examples[v] = example
        return v

    def raise_(self, exc: BaseException) -> Value:
        """raise exc (at run time): nothing after it in this block runs. (`uncaught`: no handler of
        the user's catches it, `contexts`: the exceptions it is raised while handling, innermost
        first: opcodes.exceptions.raise_attrs.)"""
        attrs = {"exception": exc}
        if self.raise_attrs is not None:
            attrs.update(self.raise_attrs(exc))
        return self.append(Value("raise", (), TupleType(()), attrs, loc=self.loc))

    def raise_if(self, cond: Value, exc: BaseException) -> None:
        """if cond: raise exc (at run time)."""
        then, otherwise = Block(), Block()
        with self.region(then):
            self.raise_(exc)
        op = self.append(Value("if", (cond,), TupleType(()), loc=self.loc))
        op.regions = [then, otherwise]

    def region(self, block: Block) -> _InRegion:
        """`with builder.region(block):` emits into `block` (a region of an op being built)."""
        return _InRegion(self, block)

    def block_param(self, block: Block, type: ScalarType) -> Value:
        p = block.add_param(type, self.loc)
        self.examples[p] = UNKNOWN
        return p

    def const(self, x) -> Value:
        if type(x) is int and not I64_MIN <= x <= I64_MAX:
            # a trace-time int past 64 bits meets compiled code: only Python has the exact answer
            raise BigIntConstant(f"the int {x:.3e} is beyond 64 bits; only Python computes with it", self.loc)
        return self.emit("const", (), value=x)

    def value(self, x) -> Value:
        """A traced value for an operand (constants become `const` ops)."""
        return x if is_traced(x) else self.const(x)

    def finish(self, result: Value) -> Function:
        """The traced function: pinned params are replaced by their constant values."""
        fn = Function(self.name, list(self.params), self.block)
        fn.body.results = [result]
        for p, example in self.pinned.items():
            c = Value("const", (), p.type, {"value": example}, loc=p.loc)
            fn.body.values.insert(0, c)
            fn.replace_all_uses(p, c)
        fn.params = [p for p in fn.params if p not in self.pinned]
        for i, p in enumerate(fn.params):
            p.attrs["index"] = i
        if self.max_ops is not None and block_size(fn.body) > self.max_ops:
            raise self.too_large_error()
        return fn

    def must_be_concrete(self, x) -> bool:
        """Whether `concretize(x)` would pin it: it depends only on int/bool arguments."""
        if not is_traced(x):
            return True
        if isinstance(self.examples.get(x), Unknown):
            return False
        stack, seen = [x], set()
        while stack:
            v = stack.pop()
            if v in seen:
                continue
            seen.add(v)
            if v.op == "param" and (v.type == F64 or isinstance(v.type, ArrayType) or v.attrs.get("numpy")):
                return False
            stack.extend(v.args)
        return True

    # --------------------------------------------------------------- Python number semantics
    @staticmethod
    def kind(x) -> ScalarType:
        return x.type if is_traced(x) else type_of_constant(x)

    def convert(self, x, to: ScalarType) -> Value:
        """Convert an operand to `to` the way Python's numeric tower does (bool < int < float)."""
        if not is_traced(x):
            return self.const(float(x) if to == F64 else int(x) if to == I64 else bool(x))
        if x.type == to:
            return x
        if to == F64:
            return self.emit("to_f64", (x,))
        if to == I64 and x.type == BOOL:
            return self.emit("to_i64", (x,))
        raise AssertionError(f"no implicit conversion from {x.type} to {to}")

    def _numeric(self, x, what: str) -> ScalarType:
        if is_traced(x) or is_number(x):
            return self.kind(x)
        raise UnsupportedError(f"{what} of a {type(x).__name__} is not supported", self.loc)

    def binary(self, op: str, a, b):
        """a <op> b for op in add sub mul div floordiv mod pow."""
        if not is_traced(a) and not is_traced(b):
            return PYTHON_BINARY[op](a, b)
        ka, kb = self._numeric(a, op), self._numeric(b, op)
        if F64 in (ka, kb):
            common = F64
        elif op == "pow" and not is_traced(b) and b < 0:
            common = F64       # int ** negative int is computed as a float power by CPython
        else:
            common = I64
        return self.emit(op, (self.convert(a, common), self.convert(b, common)))

    def compare(self, op: str, a, b):
        if not is_traced(a) and not is_traced(b):
            return PYTHON_COMPARE[op](a, b)
        ka, kb = self._numeric(a, "comparison"), self._numeric(b, "comparison")
        if {ka, kb} == {I64, F64}:
            n = a if ka == I64 else b
            if is_traced(n) or float(n) != n:
                return self._compare_int_float(op, a, b)
        common = F64 if F64 in (ka, kb) else (BOOL if ka == kb == BOOL else I64)
        return self.emit(op, (self.convert(a, common), self.convert(b, common)))

    def _compare_int_float(self, op: str, a, b) -> Value:
        """Python compares an int with a float exactly; float(n) rounds when |n| > 2**53.

        Rounding is monotonic, so float(n) < x implies n < x (and likewise for >). When
        float(n) == x, x is an integer in [-2**63, 2**63]: compare as ints, except x == 2**63,
        which is above every i64.
        """
        int_first = self.kind(a) == I64
        n, x = (a, b) if int_first else (b, a)
        n, x = self.value(n), self.value(x)
        nf = self.emit("to_f64", (n,))
        rounded_equal = self.emit("eq", (nf, x))
        below_2_63 = self.emit("lt", (x, self.const(2.0 ** 63)))
        use_int = self.emit("select", (rounded_equal, below_2_63, self.const(False)))
        xi = self.emit("to_i64", (self.emit("select", (use_int, x, self.const(0.0))),))   # never fails
        by_int = self.emit(op, (n, xi) if int_first else (xi, n))
        by_float = self.emit(op, (nf, x) if int_first else (x, nf))
        n_below_x = self.const(PYTHON_COMPARE[op](0, 1) if int_first else PYTHON_COMPARE[op](1, 0))
        return self.emit("select", (use_int, by_int, self.emit("select", (rounded_equal, n_below_x, by_float))))

    def negate(self, a):
        if not is_traced(a):
            return -a
        return self.emit("neg", (self.convert(a, I64 if a.type == BOOL else a.type),))

    def positive(self, a):
        if not is_traced(a):
            return +a
        return self.convert(a, I64) if a.type == BOOL else a

    def absolute(self, a):
        if not is_traced(a):
            return abs(a)
        return self.emit("abs", (self.convert(a, I64 if a.type == BOOL else a.type),))

    def truth(self, a):
        """bool(a), traced or not."""
        if not is_traced(a):
            return bool(a)
        if a.type in NARROW:
            return self.emit("cast", (a,), to="bool")
        return a if a.type == BOOL else self.emit("to_bool", (a,))

    def logical_not(self, a):
        t = self.truth(a)
        return (not t) if not is_traced(t) else self.emit("not", (t,))

    # ------------------------------------------------------------------ concrete values
    def concretize(self, x, why: str):
        """The Python value of `x` for this trace, guarding the arguments it depends on."""
        if not is_traced(x):
            return x
        deps, stack, seen = [], [x], set()
        while stack:
            v = stack.pop()
            if v in seen:
                continue
            seen.add(v)
            if v.op == "param":
                deps.append(v)
            stack.extend(v.args)
        arrays = [p.name for p in deps if isinstance(p.type, ArrayType)]
        if arrays:
            raise NeedsConcreteValue(f"{why} depends on the contents or sizes of array argument(s) "
                                     f"{', '.join(arrays)}; it must be known when the function is compiled",
                                     self.loc)
        scalars = [p.name for p in deps if p.attrs.get("numpy")]
        if scalars:
            raise NeedsConcreteValue(f"{why} depends on the value of NumPy scalar argument(s) {', '.join(scalars)}; "
                                     f"it must be known when the function is compiled (pass an int)", self.loc)
        floats = [p.name for p in deps if p.type == F64]
        if floats:
            raise DataDependentControlFlow(
                f"data-dependent control flow is not supported yet: {why} depends on the value of "
                f"float argument(s) {', '.join(floats)}", self.loc)
        example = self.examples[x]
        if isinstance(example, Unknown):
            raise NeedsConcreteValue(f"{why} depends on a value computed in a data-dependent branch or "
                                   f"loop; it must be known when the function is compiled", self.loc)
        if isinstance(example, Failed):
            # CPython raised at the first operation that failed (ops are emitted in program order):
            # raise the same, or let Python compute the exact answer
            path = [v for b in [*self.enclosing, self.block] for v in b.values]
            example = next(self.examples[v] for v in path if isinstance(self.examples[v], Failed))
            if example.status in (Status.FALLBACK, Status.SHAPE_MISMATCH):
                raise BigIntInput(f"{why} needs a value only Python can compute exactly", self.loc)
            raise exception_for(example.status)
        for p in deps:
            self.pinned[p] = self.examples[p]
        return example


class _InRegion:
    def __init__(self, builder: GraphBuilder, block: Block):
        self.builder, self.block = builder, block

    def __enter__(self):
        b = self.builder
        b.enclosing.append(b.block)
        b.block = self.block
        return self.block

    def __exit__(self, *exc):
        b = self.builder
        b.block = b.enclosing.pop()
        return False
