"""The kernel being emitted: LLVM types of the IR's scalars, the form an array takes inside a
kernel (`ArrayValue`; codegen.arrays lowers the array ops), and `KernelBuilder`, the helpers every
lowering uses (early exits with a status, libm calls, intrinsics, checked i64 arithmetic, polls
for signals), and the counted loops of the array ops (`for_range`, `for_strips`, `for_rows`)."""
from __future__ import annotations

import contextlib
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


class KernelRuntime(NamedTuple):
    """What a kernel calls outside itself: the (alloc, free) pair its arrays' memory comes from,
    and `check_signals`, an `i32 ()` that runs Python's pending signal handlers and returns
    nonzero if one raised (None: the kernel never polls, as where no Python runs it), with its
    LLVM calling convention (`preserve_mostcc` where the target has it: the loop around a poll
    keeps its values in registers, and a small kernel saves none at entry). With
    `shared_helpers` the runtime also defines the kernels' helper functions (the pairwise sums
    of codegen.reductions): a kernel declares them rather than compiling them again.
    `note_site`, a `void (i32)`, notes the site of a failure for this thread (the JIT's kernels
    may run on several threads at once without the GIL); None: a global of the module
    (`failed_site_slot`) holds it."""
    alloc: str
    free: str
    check_signals: str | None = None
    check_convention: str = ""
    shared_helpers: bool = False
    note_site: str | None = None


# C's own memory and no polls (exported libraries), unless the caller provides another runtime
# (the JIT's: its caching allocator and its signal check, codegen.runtime)
C_MEMORY = KernelRuntime("malloc", "free")

# How much work a kernel does between two polls for signals, in LLVM instructions of loop
# bodies run (about 1M: well under a millisecond of scalar code, and tens of milliseconds for
# bodies of libm calls). A poll costs a call of some 20 ns; counting costs a subtraction and a
# branch per iteration of a `loop` (codegen.lower), per strip or row of an array loop
# (for_range, for_strips, for_rows).
POLL_BUDGET = 1 << 20

# NumPy's narrow integers are LLVM integers of their width; a float16 is its 16 bits (codegen.casts)
LLVM_TYPES = {ir.F64: DOUBLE, ir.F32: FLOAT, ir.F16: ll.IntType(16), ir.BOOL: I1,
              **{t: ll.IntType(ir.BITS[t]) for t in ir.INTEGERS}}

# An i32 of each kernel's module: before a kernel returns a status its entry raises as an
# exception, it notes there which value failed (its index in codegen.lower.failure_sites, or -1),
# so that the traceback names the user's line (codegen.entry). The statuses on which Python runs
# the function again need no note.
FAILED_SITE = "__tracer_failed_site"
RERUN_STATUSES = (Status.FALLBACK, Status.SHAPE_MISMATCH)

INF = float("inf")


def llvm_type(t: ir.Type) -> ll.Type:
    if isinstance(t, (ir.TapeType, ir.ListType)):
        return PTR                     # the tape's or list's header (codegen.tape)
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


def note_failed_site(builder: ll.IRBuilder, memory: KernelRuntime, site: int) -> None:
    """Note `site` (-1: none) as where the kernel failed: through the runtime's `note_site`, or in
    the module's FAILED_SITE."""
    module = builder.module
    if memory.note_site is None:
        builder.store_atomic(ll.Constant(I32, site), failed_site_slot(module), "monotonic", 4)
        return
    note = module.globals.get(memory.note_site)
    if note is None:
        note = ll.Function(module, ll.FunctionType(ll.VoidType(), [I32]), memory.note_site)
        note.attributes.add("nounwind")
        note.attributes.add("cold")
    builder.call(note, [ll.Constant(I32, site)])


def failed_site_slot(module: ll.Module) -> ll.GlobalVariable:
    """The module's FAILED_SITE (made on first use)."""
    slot = module.globals.get(FAILED_SITE)
    if slot is None:
        slot = ll.GlobalVariable(module, I32, FAILED_SITE)
        slot.linkage = "internal"
        slot.initializer = ll.Constant(I32, -1)
    return slot


class KernelBuilder:
    """Emits one kernel: the LLVM values of the IR values, and the early exits for failures."""

    def __init__(self, module: ll.Module, function: ll.Function, fn: ir.Function,
                 memory: tuple = C_MEMORY):
        self.module = module
        self.memory = memory
        self.check_signals = getattr(memory, "check_signals", None)   # None: no polls (poll_signals)
        self.numpy_flags = None          # the floating-point flags NumPy warns of, if watched (codegen.fpflags)
        self.numpy_warns = None          # i1 slot: a NumPy scalar result would have warned (codegen.fpflags)
        self.numpy_warns_at_once = False     # a warning fails the kernel where it happens (codegen.fpflags)
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
        self._site_blocks: dict[tuple[Status, int], ll.Block] = {}
        self.site = -1                   # the failure site being lowered (codegen.lower.failure_sites)
        self.tapes: dict = {}            # tape_new op -> its header (codegen.tape)
        self.arena = None                # the slot of the arena's head, if arrays are made (codegen.arrays)
        self.deferred = None             # a flag's slot: failures are noted there, not returned (lower_map)
        self.called_out = None           # a flag's slot: the kernel has called into Python (track_calls_out)
        self.cleanups: list[Callable[[KernelBuilder], None]] = []   # run by `ret`, in order (tapes, arena)
        self.regions = None              # what lowers the regions of if/loop/map (codegen.lower.BlockLowering)
        self.parallel = False            # maps may run on the thread pool (codegen.parallel)
        self.summed_later: dict = {}     # map -> the sum that is its one use (codegen.parallel.summed_later)
        self.reused: dict = {}           # ops that use an operand's memory: its place (codegen.ownership.memory_reuse)
        # what an interrupted kernel keeps: (IR value, write) pairs, `write(k, array)` writing the
        # value's contents where they belong once it is lowered (codegen.lower: writebacks)
        self.kept_on_interrupt: list[tuple[ir.Value, Callable]] = []
        self._budget = None              # the slot of the work left before the next poll
        self.polls = 0                   # poll sites emitted so far
        self.loop_depth = 0              # how many array loops the builder is inside (for_range)
        self.loop_metadata = None        # the llvm.loop a body asks its loop for (_counted_loop)
        self.rows_polled = 0             # inside rows that poll for their loops (for_rows)
        self.uncounted = 0               # instructions that run more often than they were emitted
                                         # (short loops that do not count their own work: for_range)
        self._interrupted = None         # the block that returns PYTHON_ERROR, and its phis
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
        if status not in RERUN_STATUSES:
            block = self._noting_site(status, block)
        ok = self.function.append_basic_block("ok")
        br = self.builder.cbranch(cond, block, ok)
        br.set_weights([1, 1 << 20])      # failures are cold: keep the fast path straight
        self.builder.position_at_end(ok)

    def _noting_site(self, status: Status, fail: ll.Block) -> ll.Block:
        """A block that notes `site` in FAILED_SITE, then goes on to `fail` (one per site)."""
        block = self._site_blocks.get((status, self.site))
        if block is None:
            block = self.function.append_basic_block(f"fail_site_{self.site}")
            with self.builder.goto_block(block):
                note_failed_site(self.builder, self.memory, self.site)
                self.builder.branch(fail)
            self._site_blocks[(status, self.site)] = block
        return block

    # -- polls for signals: Ctrl-C reaches a long loop -------------------------------------
    def poll_signals(self, work: ll.Value) -> None:
        """Count `work` (i64, LLVM instructions run since the last count) against the kernel's
        budget; when it runs out, poll (`poll_now`): call the runtime's `check_signals` (a cold
        call: Python's signal handlers run there, with the GIL the kernel's caller holds) and,
        if a handler raised (KeyboardInterrupt), return PYTHON_ERROR with what
        `kept_on_interrupt` keeps written back. Nothing at all where the kernel has no signal
        check (exported libraries)."""
        if self.check_signals is None:
            return
        b = self.builder
        poll, go_on = self.function.append_basic_block("poll"), self.function.append_basic_block("polled")
        b.cbranch(self.spend(work), poll, go_on).set_weights([1, 1 << 20])
        b.position_at_end(poll)
        self.poll_now()
        b.branch(go_on)
        b.position_at_end(go_on)

    def spend(self, work: ll.Value) -> ll.Value:
        """Count `work` against the budget: whether it ran out (an i1; then `poll_now`)."""
        b = self.builder
        budget = self._budget_slot()
        left, spent = self.with_overflow("usub", b.load(budget, typ=I64), work)   # (x86: sub, jb)
        b.store(left, budget)
        return spent

    def poll_now(self) -> None:
        """The poll: a full budget again, the call, and the return of PYTHON_ERROR if a signal
        handler raised; the builder goes on where it did not."""
        b = self.builder
        self.polls += 1
        b.store(self.i64(POLL_BUDGET), self._budget_slot())
        if self.called_out is not None:    # a call into CPython notes its line; a poll notes none
            note_failed_site(b, self.memory, -1)
        convention = self.memory.check_convention
        check = self.declare_function(self.check_signals, ll.FunctionType(I32, []), ("cold", "nounwind"))
        check.calling_convention = convention
        raised = b.icmp_signed("!=", b.call(check, [], cconv=convention or None), ll.Constant(I32, 0))
        go_on = self.function.append_basic_block("polled")
        b.cbranch(raised, self.python_error_exit(), go_on).set_weights([1, 1 << 20])
        b.position_at_end(go_on)

    def exit_if_interrupted(self, cond: ll.Value) -> None:
        """Return PYTHON_ERROR if `cond` (a signal handler raised where a poll ran outside this
        function: codegen.reductions.pairwise_sum), as `poll_now` does."""
        if self.called_out is not None:
            note_failed_site(self.builder, self.memory, -1)
        go_on = self.function.append_basic_block("not_interrupted")
        self.builder.cbranch(cond, self.python_error_exit(), go_on).set_weights([1, 1 << 20])
        self.builder.position_at_end(go_on)

    def stack_slot(self, t: ll.Type, name: str = "") -> ll.Value:
        """A slot of type `t` on the kernel's stack (made in its entry block)."""
        with self.builder.goto_entry_block():
            return self.builder.alloca(t, name=name)

    def count_work(self, work: ll.Value) -> None:
        """Count `work` against the budget without polling: the next poll comes sooner (a
        subtraction, saturating at none left). Nothing where the kernel does not poll."""
        if self.check_signals is None:
            return
        budget = self._budget_slot()
        left = self.call_intrinsic("llvm.usub.sat.i64", I64, [I64, I64], self.builder.load(budget, typ=I64), work)
        self.builder.store(left, budget)

    def _budget_slot(self):
        """The slot of the work left before the next poll (made, full, at the kernel's entry)."""
        if self._budget is None:
            with self.builder.goto_entry_block():
                self._budget = self.builder.alloca(I64, name="poll_budget")
                self.builder.store(self.i64(POLL_BUDGET), self._budget)
        return self._budget

    def mark(self) -> tuple:
        """Where the builder is now, for `instructions_since`."""
        return len(self.function.blocks), len(self.builder.block.instructions), self.builder.block, self.uncounted

    def instructions_since(self, mark: tuple) -> int:
        """The LLVM instructions emitted since `mark` (and `uncounted` since), at least 1: what an
        iteration of a loop body emitted there costs, roughly, for `poll_signals`."""
        blocks, start, block, uncounted = mark
        count = len(block.instructions) - start + sum(len(x.instructions) for x in self.function.blocks[blocks:])
        return max(1, count + self.uncounted - uncounted)

    def python_error_exit(self) -> ll.Block:
        """The block that returns PYTHON_ERROR, reached from the builder's block: one per kernel,
        with a phi per field of each kept value (NULL data where it is not lowered yet)."""
        b = self.builder
        if self._interrupted is None:
            block = self.function.append_basic_block("interrupted")
            with b.goto_block(block):
                kept = [[b.phi(PTR)] + [b.phi(I64) for _ in range(2 * value.type.rank)]
                        for value, _ in self.kept_on_interrupt]
                polls, deferred, self.check_signals, self.deferred = self.check_signals, self.deferred, None, None
                for (value, write), phis in zip(self.kept_on_interrupt, kept):
                    with b.if_then(b.icmp_unsigned("!=", phis[0], ll.Constant(PTR, None))):
                        write(self, from_arguments(value.type, list(phis)))
                self.check_signals, self.deferred = polls, deferred
                self.ret(Status.PYTHON_ERROR)
            self._interrupted = (block, kept)
        block, kept = self._interrupted
        lowered = self.regions.values if self.regions is not None else {}
        for (value, _), phis in zip(self.kept_on_interrupt, kept):
            array = lowered.get(value)
            incoming = fields(array) if array is not None else [ll.Constant(p.type, None if p.type == PTR else 0)
                                                                for p in phis]
            for phi, x in zip(phis, incoming):
                phi.add_incoming(x, b.block)
        return block

    def outlined(self, name: str, arrays: list, emit: Callable) -> None:
        """Call, here, a new function of the module whose body is emit(*arrays), emitted with this
        builder, the arrays (ArrayValues) passed as its arguments: internal, cold and small
        (minsize: its loops are not vectorized or unrolled), for code that rarely runs (what an
        interrupted kernel writes back), so that it costs the kernel's compile little."""
        types = [t for a in arrays for t in [PTR] + [I64] * (len(a.sizes) + len(a.strides))]
        fn = ll.Function(self.module, ll.FunctionType(ll.VoidType(), types),
                         self.module.get_unique_name(f"{self.function.name}.{name}"))
        fn.linkage = "internal"
        for attribute in ("cold", "noinline", "minsize", "optsize", "nounwind"):
            fn.attributes.add(attribute)
        outer = self.function, self.builder, self.check_signals
        self.function, self.builder, self.check_signals = fn, ll.IRBuilder(fn.append_basic_block("entry")), None
        args = list(fn.args)
        emit(*(ArrayValue(args.pop(0), tuple(args.pop(0) for _ in a.sizes), tuple(args.pop(0) for _ in a.strides))
               for a in arrays))
        self.builder.ret_void()
        self.function, self.builder, self.check_signals = outer
        self.builder.call(fn, [x for a in arrays for x in fields(a)])

    # the state that belongs to the function being emitted (in_function), and its fresh values
    FUNCTION_STATE = {"_status_blocks": dict, "_site_blocks": dict, "cleanups": list, "deferred": lambda: None,
                      "_budget": lambda: None, "_interrupted": lambda: None, "kept_on_interrupt": list,
                      "called_out": lambda: None, "numpy_warns": lambda: None, "arena": lambda: None,
                      "loop_depth": int, "rows_polled": int, "uncounted": int, "check_signals": lambda: None}

    @contextlib.contextmanager
    def in_function(self, function: ll.Function):
        """Emit into another function of the module meanwhile (its builder at its new entry
        block), as a kernel of its own that never polls and has no cleanups: codegen.parallel's
        loop bodies. The kernel's own state is back afterwards."""
        saved = {name: getattr(self, name) for name in self.FUNCTION_STATE}
        outer = self.function, self.builder
        for name, fresh in self.FUNCTION_STATE.items():
            setattr(self, name, fresh())
        self.function, self.builder = function, ll.IRBuilder(function.append_basic_block("entry"))
        try:
            yield self.builder
        finally:
            self.function, self.builder = outer
            for name, value in saved.items():
                setattr(self, name, value)

    def ret(self, status: int) -> None:
        """Return `status`, releasing first what the kernel holds: each of `cleanups` emits its
        release (every tape's buffer, codegen.tape; the arrays made, codegen.arrays). FALLBACK
        becomes CALLED_OUT_FALLBACK once the kernel has called into Python (`called_out`)."""
        for cleanup in self.cleanups:
            cleanup(self)
        value = ll.Constant(I32, int(status))
        if status == Status.FALLBACK and self.called_out is not None:
            value = self.builder.select(self.builder.load(self.called_out, typ=I1),
                                        ll.Constant(I32, int(Status.CALLED_OUT_FALLBACK)), value)
        self.builder.ret(value)

    def track_calls_out(self) -> None:
        """Make `called_out`, the flag python_call sets (codegen.callouts), false at entry."""
        with self.builder.goto_entry_block():
            self.called_out = self.builder.alloca(I1, name="called_out")
            self.builder.store(ll.Constant(I1, 0), self.called_out)

    # -- calls ---------------------------------------------------------------------------------
    def call_c(self, name: str, result: ll.Type, params: list, *args: ll.Value) -> ll.Value:
        """A call to the C library's `name` (malloc-family functions). Sizes are given as i64;
        on a 32-bit target (wasm32) C's size_t is 32 bits, and they are truncated to it."""
        if "-p:32" in str(self.module.data_layout):
            size_t = ll.IntType(32)
            args = [self.builder.trunc(a, size_t) if t == I64 else a for a, t in zip(args, params)]
            params = [size_t if t == I64 else t for t in params]
        return self.builder.call(self.declare_function(name, ll.FunctionType(result, params), ("nounwind",)), args)

    def call_c_api(self, name: str, result: ll.Type, params: list, *args: ll.Value) -> ll.Value:
        """A call to CPython's C API function `name` (JIT code only: the process has libpython)."""
        return self.builder.call(self.declare_function(name, ll.FunctionType(result, params)), args)

    def allocate_bytes(self, size: ll.Value) -> ll.Value:
        """A new block of `size` bytes from the kernel's allocator (NULL if there is no memory).
        Its result is `noalias`, as malloc's is to LLVM: loops writing into a new array need no
        run-time overlap checks."""
        block = self.call_c(self.memory[0], PTR, [I64], size)
        block.callee.return_value.add_attribute("noalias")
        return block

    def free_bytes(self, block: ll.Value) -> None:
        self.call_c(self.memory[1], ll.VoidType(), [PTR], block)

    def declare_function(self, name: str, fnty: ll.FunctionType, attrs=()) -> ll.Function:
        """The module's function `name`, declared with `attrs` the first time."""
        fn = self.module.globals.get(name)
        if fn is None:
            fn = ll.Function(self.module, fnty, name)
            for a in attrs:
                fn.attributes.add(a)
        return fn

    def intrinsic(self, name: str, *args: ll.Value) -> ll.Value:
        """llvm.<name>.f64 on doubles (exact operations: sqrt, fabs, floor, fma, copysign...)."""
        fnty = ll.FunctionType(DOUBLE, [DOUBLE] * len(args))
        return self.builder.call(self.declare_function(f"llvm.{name}.f64", fnty), args)

    def call_intrinsic(self, name: str, result: ll.Type, params: list, *args: ll.Value) -> ll.Value:
        """A call to the LLVM intrinsic `name` (full name, e.g. llvm.fma.v4f64) of that signature."""
        return self.builder.call(self.declare_function(name, ll.FunctionType(result, params)), args)

    def libm(self, name: str, *args: ll.Value) -> ll.Value:
        """A call to the C library's `name`, exactly as CPython makes it.

        `nobuiltin` stops LLVM from treating it as the known libm function: otherwise it folds
        pow(x, 2.0) into x * x (or constants with its own folder), which can differ in the last bit.
        """
        fnty = ll.FunctionType(DOUBLE, [DOUBLE] * len(args))
        attrs = ("nobuiltin", "readnone", "nounwind")  # errno is never read: no memory effects
        return self.builder.call(self.declare_function(name, fnty, attrs), args)

    def with_overflow(self, op: str, a: ll.Value, b: ll.Value) -> tuple[ll.Value, ll.Value]:
        """i64 a <op> b (op: sadd, ssub, smul; usub: unsigned) and whether it overflowed."""
        fnty = ll.FunctionType(ll.LiteralStructType([I64, I1]), [I64, I64])
        pair = self.builder.call(self.declare_function(f"llvm.{op}.with.overflow.i64", fnty), [a, b])
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


# --------------------------------------------------------------------------------- loops
def for_range(k: KernelBuilder, n, body, carried=(), poll: bool = True) -> list:
    """for i in range(n): body(i), emitted at the builder's position. With `carried` (initial
    values), body(i, *values) returns the next values (loop-carried, as phis), and the values
    after the loop are returned. Without `poll`, the loop never checks for signals (work an op
    does on the side, like a dict's hash index: the loops around it poll).

    Where the kernel polls for signals (KernelBuilder.poll_signals), an innermost loop (one
    whose body does not poll) inside no other (over a 1-D array) runs in strips of at most
    STRIP iterations and polls after each, counting its work: nothing inside a strip calls
    anything (LLVM still vectorizes it), and Ctrl-C still reaches a loop over a billion
    elements. Other innermost loops poll once before they start, counting the work of all their
    iterations, unless inside `for_rows` or `for_strips`, which poll for the loops they run, or
    of a SHORT_BODY: that work is only counted, for the next poll. A loop of at most STRIP
    iterations known at compile time is counted by the loop around it, as if its body were
    written out that many times."""
    b = k.builder
    if k.check_signals is None or k.rows_polled or not poll:
        return _counted_loop(k, k.i64(0), n, body, carried)[0]
    polls = k.polls
    if isinstance(n, ll.Constant) and n.constant <= STRIP:
        values, weight = _counted_loop(k, k.i64(0), n, body, carried)
        if k.polls == polls:
            k.uncounted += max(0, n.constant - 1) * weight
        return values
    before, head, done = (k.function.append_basic_block(x) for x in ("count", "strip", "strip_end"))
    b.branch(before)
    b.position_at_end(head)
    first, last = b.phi(I64), b.phi(I64)
    values = [b.phi(x.type) for x in carried]
    k.loop_depth += 1
    new, weight = _counted_loop(k, first, last, body, values)
    k.loop_depth -= 1
    innermost = k.polls == polls
    in_strips = innermost and k.loop_depth == 0 and weight > SHORT_BODY
    after = b.block
    with b.goto_block(before):            # (only now is it known whether the body polls)
        if innermost and not in_strips:       # (+ 1: no iteration still counts)
            work = b.add(b.mul(n, k.i64(weight)), k.i64(1))
            (k.count_work if weight <= SHORT_BODY else k.poll_signals)(work)
        end = _strip_end(k, k.i64(0), n) if in_strips else n
        entered = b.block
        b.branch(head)
    first.add_incoming(k.i64(0), entered)
    last.add_incoming(end, entered)
    for phi, x in zip(values, carried):
        phi.add_incoming(x, entered)
    if not in_strips:                     # one pass over the whole range
        b.branch(done)
        b.position_at_end(done)
        return new
    b.position_at_end(after)
    k.poll_signals(b.mul(b.sub(last, first), k.i64(weight)))
    following = k.function.append_basic_block("next_strip")
    b.cbranch(b.icmp_signed("<", last, n), following, done)
    b.position_at_end(following)
    first.add_incoming(last, following)
    last.add_incoming(_strip_end(k, last, n), following)
    for phi, x in zip(values, new):
        phi.add_incoming(x, following)
    b.branch(head)
    b.position_at_end(done)
    return new


STRIP = 1 << 14         # iterations of a 1-D array loop between two polls, at most (for_range)
SHORT_BODY = 8          # instructions: a loop body this short (a fill, a copy) runs at memory speed,
                        # a billion iterations a second or so: it is not cut into strips


def _strip_end(k: KernelBuilder, first, n):
    """The end of the strip from `first`: min(n, first + STRIP)."""
    b = k.builder
    return b.select(b.icmp_signed(">", b.sub(n, first), k.i64(STRIP)), b.add(first, k.i64(STRIP)), n)


def _counted_loop(k: KernelBuilder, first, last, body, carried) -> tuple[list, int]:
    """for i in range(first, last), as `for_range` says; and, where the kernel polls, the
    instructions its body emitted (what one iteration costs, roughly)."""
    b = k.builder
    start = b.block
    head, loop, done = (k.function.append_basic_block(x) for x in ("for", "for_body", "for_end"))
    b.branch(head)
    b.position_at_end(head)
    i = b.phi(I64)
    i.add_incoming(first, start)
    values = [b.phi(x.type) for x in carried]
    for phi, x in zip(values, carried):
        phi.add_incoming(x, start)
    b.cbranch(b.icmp_signed("<", i, last), loop, done)
    b.position_at_end(loop)
    mark = k.mark() if k.check_signals is not None else None
    k.loop_metadata = None
    new = body(i, *values)
    weight = k.instructions_since(mark) if mark is not None else 0
    end = b.block
    i.add_incoming(b.add(i, k.i64(1)), end)
    for phi, x in zip(values, new if carried else ()):
        phi.add_incoming(x, end)
    back = b.branch(head)
    if k.loop_metadata is not None:          # (codegen.numpy_math: np_exp)
        back.set_metadata("llvm.loop", k.loop_metadata)
        k.loop_metadata = None
    b.position_at_end(done)
    return values, weight


def for_strips(k: KernelBuilder, n, emit) -> None:
    """emit(first, last): loops over range(first, last) (all of them: several versions of one
    loop, say). Where the kernel polls for signals and no loop around polls for these, range(n)
    goes in strips of at most STRIP iterations, with a poll after each counting their work (the
    instructions `emit` made, per iteration), and the loops of `emit` do not poll. Else emit():
    its loops over all of range(n), as they would be without strips."""
    b = k.builder
    if k.check_signals is None or k.rows_polled or k.loop_depth:
        emit()
        return
    end = _strip_end(k, k.i64(0), n)
    start = b.block
    head, done = k.function.append_basic_block("strip"), k.function.append_basic_block("strip_end")
    b.branch(head)
    b.position_at_end(head)
    first, last = b.phi(I64), b.phi(I64)
    first.add_incoming(k.i64(0), start)
    last.add_incoming(end, start)
    mark = k.mark()
    k.rows_polled += 1
    k.loop_depth += 1
    emit(first, last)
    k.rows_polled -= 1
    k.loop_depth -= 1
    k.poll_signals(b.mul(b.sub(last, first), k.i64(k.instructions_since(mark))))
    following = k.function.append_basic_block("next_strip")
    b.cbranch(b.icmp_signed("<", last, n), following, done)
    b.position_at_end(following)
    first.add_incoming(last, following)
    last.add_incoming(_strip_end(k, last, n), following)
    b.branch(head)
    b.position_at_end(done)


def for_rows(k: KernelBuilder, n, per_row, body, weight: int | None = None) -> None:
    """for i in range(n): body(i), where a row (body) is `per_row` (i64) iterations of inner
    loops. Where the kernel polls for signals, each row polls when it is done, counting its
    work (per_row times `weight`, by default the instructions the body emitted: a subtraction
    and a predictable branch a row, the product being the same for every row), and the loops
    of the row do not poll. (A row of more than some 10^8 inner iterations so delays a poll
    until it ends.)"""
    if k.check_signals is None or k.rows_polled:
        for_range(k, n, body)
        return
    b = k.builder

    def row(i):
        start = k.mark()
        k.rows_polled += 1
        body(i)
        k.rows_polled -= 1
        work = b.mul(per_row, k.i64(weight or k.instructions_since(start)))
        k.poll_signals(b.add(work, k.i64(1)))          # (+ 1: rows of no element still count)
    k.loop_depth += 1
    _counted_loop(k, k.i64(0), n, row, ())
    k.loop_depth -= 1
