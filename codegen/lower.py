"""IR -> LLVM IR: one kernel function per IR function, each op by its rule in the op table
(`codegen.lowerings.LOWERINGS`; the rules of the region ops if, loop, map and raise are here).

Kernel ABI:  i32 @symbol(<the args of each IR param>, ptr %out0, ..., ptr %outK)
  - params: f64 -> double, i64 -> i64, bool -> i1 (zeroext, like C's bool); an array -> its data
    pointer, its sizes and its byte strides (codegen.arrays);
  - one out pointer per leaf of the result type (`ir.leaf_types`), left to right (distinct,
    `noalias`; a bool is stored as one byte 0/1; an array as a new buffer, codegen.arrays);
  - returns int(Status): 0 writes the outputs, anything else leaves them untouched.

Every lowering must give what the op's evaluator in `tracer.ir.ops` gives, bit for bit
(codegen.scalars says how). A lowering is `(k: KernelBuilder, v: ir.Value, *operands) -> LLVM
value` (a tuple for tuples).
"""
from __future__ import annotations

from llvmlite import ir as ll

from codegen import (
    arrays,
    callouts,
    casts,
    fpflags,
    linalg,
    lists,
    masks,
    matmul,
    numpy_math,
    ownership,
    parallel,
    prange,
    reductions,
    scalars,
    scans,
    sorts,
    take,
    tape,
)
from codegen.kernel import (
    C_MEMORY,
    DOUBLE,
    FLOAT,
    I1,
    I64,
    POLL_BUDGET,
    PTR,
    ArrayValue,
    KernelBuilder,
    abi_types,
    fields,
    from_arguments,
    kernel_type,
    llvm_type,
)
from codegen.lowerings import lowering_for, lowers
from tracer import ir
from tracer.errors import RAISE_BASE, Status
from tracer.ir.array_ops import ELEMENTWISE
from tracer.ir.ops import OPS, sets_fp_flags

# the modules whose rules `lowering_for` finds (each registers its own, with @lowers)
RULE_MODULES = (scalars, casts, numpy_math, arrays, reductions, matmul, tape, lists, callouts, scans, sorts, masks,
                take, linalg, ownership)


# ----------------------------------------------------------------------- values with no code
@lowers("param")
def param(k, v):
    return k.params[v.attrs["index"]]


# tuples exist only in the IR: a tuple is the Python tuple of its operands' LLVM values
@lowers("tuple")
def make_tuple(k, v, *xs):
    return tuple(xs)


@lowers("getitem")
def getitem(k, v, t):
    return t[v.attrs["index"]]


def _leaves(value) -> list:
    """The leaves of a (nested) tuple of LLVM values: scalars, tape headers and ArrayValues."""
    if isinstance(value, tuple) and not isinstance(value, ArrayValue):
        return [leaf for element in value for leaf in _leaves(element)]
    return [value]


def _flat(value) -> list:
    """Every LLVM value in `value`, an ArrayValue as its data, sizes and strides (for phis)."""
    return [x for leaf in _leaves(value) for x in (fields(leaf) if isinstance(leaf, ArrayValue) else [leaf])]


def _flat_types(t: ir.Type) -> list[ll.Type]:
    return [x for leaf in ir.leaf_types(t)
            for x in (abi_types(leaf) if isinstance(leaf, ir.ArrayType) else [llvm_type(leaf)])]


def _from_flat(t: ir.Type, flat: list):
    """Rebuild the LLVM value of type `t` (a tuple of tuples...) from `_flat`'s list, consumed."""
    if isinstance(t, ir.TupleType):
        return tuple(_from_flat(e, flat) for e in t.elements)
    if isinstance(t, ir.ArrayType):
        return from_arguments(t, flat)
    return flat.pop(0)


def _zeros(t: ir.Type) -> list[ll.Constant]:
    """Placeholders for `_flat` of a value of type `t` (a path that computes nothing)."""
    return [ll.Constant(x, None) if x == PTR else ll.Constant(x, 0.0 if x in (DOUBLE, FLOAT) else 0)
            for x in _flat_types(t)]


class BlockLowering:
    """Lowers a Block, value by value, each by its op's rule (`lowering_for`); an elementwise op
    on arrays by its scalar rule, element by element. The rules of the region ops (below) lower
    their regions through `k.regions`, this object: `values` holds the LLVM value of every IR
    value lowered so far, `raise_statuses` the status each `raise` returns."""

    def __init__(self, k: KernelBuilder, values: dict, raise_statuses: dict, sites: dict | None = None):
        self.k = k
        self.values = values
        self.raise_statuses = raise_statuses
        self.sites = sites or {}         # value -> its index among failure_sites (k.site while lowered)
        self.replaced: dict = {}         # value -> a function that lowers it instead of its op's rule
        self.probed: set = set()         # maps into arguments already probed for NumPy's warnings
        k.regions = self

    def block(self, block: ir.Block) -> list | None:
        """Lower `block`'s values; the LLVM values of its results, or None if it always raises."""
        for v in block.values:
            if v in self.replaced:       # lowered otherwise by a region's rule (lower_counted_loop)
                self.values[v] = self.replaced.pop(v)()
                continue
            operands = [self.values[a] for a in v.args]
            self.k.site = self.sites.get(v, -1)
            watched = self.k.numpy_flags is not None and sets_fp_flags(v) and not v.attrs.get("into")
            if v.op in fpflags.CHECKED_BEFORE:
                fpflags.fail_if_numpy_warns(self.k)
            if watched:
                fpflags.clear_flags(self.k, self.k.numpy_flags)
            if isinstance(v.type, ir.ArrayType) and v.op in ELEMENTWISE:
                result = arrays.elementwise(self.k, v, operands)
            else:
                result = lowering_for(v)(self.k, v, *operands)
            if result is BLOCK_ENDS:
                return None
            if watched:        # NumPy would warn: the Python function runs (codegen.fpflags)
                self.k.fail_if(fpflags.flags_raised(self.k, self.k.numpy_flags), Status.FALLBACK)
            self.values[v] = result
            if v.op == "in_place_check" and self.k.numpy_flags is not None:
                self._probe_maps_after(block, v)
        return [self.values[r] for r in block.results]

    def _probe_maps_after(self, block: ir.Block, check: ir.Value) -> None:
        """Probe each map after `check` that writes an argument in place for NumPy's warnings
        (_probe_warnings), all before the first of them writes: a warning found in the second
        must find the first argument as it was."""
        for m in block.values[block.values.index(check) + 1:]:
            if m.op == "map" and m.attrs.get("into") and sets_fp_flags(m):
                inputs = m.args[m.attrs["into"]:]
                types = m.type.elements if isinstance(m.type, ir.TupleType) else (m.type,)
                _probe_warnings(self.k, m.regions[0], ([self.values[a] for a in inputs],
                                [a.type.dtype for a in inputs], [t.dtype for t in types]))
                self.probed.add(m)


# ------------------------------------------------------------------------- the region ops
BLOCK_ENDS = object()       # what the rule of an op that never finishes (a raise) returns


@lowers("raise")
def lower_raise(k: KernelBuilder, v: ir.Value):
    """A return of the raise's status: the rest of its block is never reached."""
    k.ret(k.regions.raise_statuses[v])
    return BLOCK_ENDS


@lowers("if")
def lower_if(k: KernelBuilder, v: ir.Value, condition):
    """A diamond: each side's region, then phis of what they yield."""
    b, fn = k.builder, k.function
    then_block, else_block = fn.append_basic_block("then"), fn.append_basic_block("else")
    merge = fn.append_basic_block("endif")
    b.cbranch(condition, then_block, else_block)
    incoming = []                        # (leaves, LLVM block) of each side that finishes
    for region, start in zip(v.regions, (then_block, else_block)):
        b.position_at_end(start)
        results = k.regions.block(region)
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


@lowers("map")
def lower_map(k: KernelBuilder, v: ir.Value, *operands):
    """One loop nest over the elements. A straight-line region whose ops may fail runs
    twice if needed: first with its failures only noted in a flag (no exit from the loop,
    so LLVM can vectorize it), then, if the flag is set, element by element again, stopping
    at the first element that fails, with that element's status."""
    region = v.regions[0]
    types = v.type.elements if isinstance(v.type, ir.TupleType) else (v.type,)
    n = v.attrs.get("into", 0)            # leading operands: arrays it writes, not reads
    into = list(operands[:n]) if n else None
    inputs = v.args[n:]
    arguments = (list(operands[n:]), [a.type.dtype for a in inputs], [t.dtype for t in types])

    def element(flag):
        def compute(*xs):
            k.deferred = flag
            k.regions.values.update(zip(region.params, xs))
            results = k.regions.block(region)
            k.deferred = None
            if results is None:          # the element always raises: nothing to store
                k.builder.position_at_end(k.function.append_basic_block("dead"))
                return [ll.Constant(llvm_type(t.dtype), None) for t in types]
            return results
        return compute
    straight = not any(x.regions or x.op == "raise" for x in region.values)
    if into and k.numpy_flags is not None and sets_fp_flags(v) and v not in k.regions.probed:
        _probe_warnings(k, region, arguments)
    if inputs and parallel.sums_as_it_goes(k, v, k.summed_later.get(v)):     # (codegen.reductions.fused_sum)
        return parallel.PendingMap(v, arguments, element)
    if inputs and parallel.splits(k, v):     # on every core (codegen.parallel)
        outs = parallel.map_elements(k, v, arguments, element, into)
    elif v in k.reused:                   # over an operand dead after it (codegen.ownership), whose
        b = k.builder                     # elements fail with FALLBACK only: no second run
        with b.goto_entry_block():
            flag = b.alloca(I1, name="failed")
        b.store(ll.Constant(I1, 0), flag)
        outs = arrays.map_elements(k, *arguments, element(flag), into=[operands[k.reused[v]]])
        k.fail_if(b.load(flag, typ=I1), Status.FALLBACK)
    elif not straight or not any(OPS[x.op].may_fail(x) for x in region.values):
        outs = arrays.map_elements(k, *arguments, element(None), into=into)
    else:
        b = k.builder
        with b.goto_entry_block():
            flag = b.alloca(I1, name="failed")
        b.store(ll.Constant(I1, 0), flag)
        outs = arrays.map_elements(k, *arguments, element(flag), into=into)
        with b.if_then(b.load(flag, typ=I1)):
            arrays.map_elements(k, *arguments, element(None), into=into)
    return tuple(outs) if isinstance(v.type, ir.TupleType) else outs[0]


def _probe_warnings(k: KernelBuilder, region: ir.Block, arguments: tuple) -> None:
    """FALLBACK if NumPy would warn in a map that writes its results over an argument, found
    before the first write, so that the Python function, run instead, finds its arguments as
    they were: every element is computed but not stored, and the CPU's flags tested (NumPy's
    own test) where a result came out an infinity or a NaN, which each watched flag makes. The
    writes then go unwatched: what they compute is what was just tested."""
    b = k.builder
    found = k.stack_slot(I1, "nonfinite")
    b.store(ll.Constant(I1, 0), found)

    def check(*xs):
        k.regions.values.update(zip(region.params, xs))
        if k.regions.block(region) is not None:
            b.store(b.or_(b.load(found, typ=I1), fpflags.any_nonfinite(k, region)), found)
        return []
    inputs, dtypes, _ = arguments
    fpflags.clear_flags(k, k.numpy_flags)
    arrays.map_elements(k, inputs, dtypes, [], check, into=[])
    k.fail_if(b.and_(b.load(found, typ=I1), fpflags.flags_raised(k, k.numpy_flags)), Status.FALLBACK)


@lowers("loop")
def lower_loop(k: KernelBuilder, v: ir.Value, *initial):
    """A header block whose phis carry the values, the body, and a branch back while the body
    yields continue. Ctrl-C must reach a loop that runs long (or forever), so loops poll for
    signals (KernelBuilder.poll_signals; the poll itself is a cold call), as cheaply as each
    kind allows:

    - a loop whose work is bounded at compile time (`_most_trips`), and small, does not poll:
      its work is counted before it starts, for the next poll. It calls nothing, so LLVM
      unrolls it as it would have (a call in a loop stops that);
    - a loop that counts up to a bound fixed before it starts (`_counted`: a `for` over a
      range, `while i < n: ... i += 1`) runs in strips (`lower_counted_loop`): the inner loop
      is the user's, its test against the bound replaced by a test against the strip's end,
      and the work of a strip is counted, and a poll made if it runs out, before the strip;
      the iterations themselves pay nothing;
    - any other loop counts each iteration's work on the way back (a subtraction and a
      predictable branch), after the test: LLVM still merges the body's own test of the loop
      condition, if any, with the branch that decides.

    A `for` over tracer.prange under parallel=True runs on the thread pool (codegen.prange)."""
    if v.attrs.get("parallel") and (done := prange.lower_parallel_loop(k, v, initial)) is not None:
        return done
    body = v.regions[0]
    trips, work = _most_trips(v), min(INSTRUCTIONS_PER_OP * _work(body), POLL_BUDGET)   # (per iteration)
    bounded = trips is not None and (trips + 1) * work <= POLL_BUDGET
    if bounded:
        k.count_work(k.i64((trips + 1) * work))
    elif k.check_signals is not None and (counted := _counted(v)) is not None:
        return lower_counted_loop(k, v, initial, work, *counted)
    b, fn = k.builder, k.function
    mark = loop_mark(k, body)
    header = fn.append_basic_block("loop")
    exit_ = fn.append_basic_block("endloop")
    entry = b.block
    b.branch(header)
    b.position_at_end(header)
    phis = [b.phi(t) for t in _flat_types(v.type)]
    for phi, x in zip(phis, _flat(tuple(initial))):
        phi.add_incoming(x, entry)
    copies = 1 if bounded or k.check_signals is None else _copies(body, work)
    carried, exits = phis, []
    for _ in range(copies):
        results = _lower_body(k, body, carried, exit_, mark)
        if results is None:
            return _from_flat(v.type, _zeros(v.type))
        go, carried = results[0], _flat(tuple(results[1:]))
        exits.append((carried, b.block))
        again = fn.append_basic_block("loop_again")
        b.cbranch(go, again, exit_)
        b.position_at_end(again)
    if not bounded:
        k.poll_signals(k.i64(copies * work))
    for phi, x in zip(phis, carried):
        phi.add_incoming(x, b.block)
    b.branch(header)
    b.position_at_end(exit_)
    if copies == 1:
        return _from_flat(v.type, list(carried))
    results = []
    for i, t in enumerate(_flat_types(v.type)):
        results.append(b.phi(t))
        for values, block in exits:
            results[-1].add_incoming(values[i], block)
    return _from_flat(v.type, results)


# How many copies of a short loop body whose trip count is not known may run between two counts
# of their work towards the next poll (lower_loop): enough for some POLL_COPY_WORK instructions.
POLL_COPY_WORK = 128


def _copies(body: ir.Block, work: int) -> int:
    """The copies of `body` that an iteration of its loop runs: several where the body is short,
    is innermost and makes no call into CPython and no array (so that running it in copies
    changes nothing but the code's size), else 1."""
    if work * 2 > POLL_COPY_WORK:
        return 1
    inside = _defined_in(body)
    if any(x.op in ("loop", "python_call") or isinstance(x.type, ir.ArrayType) for x in inside):
        return 1
    return min(8, POLL_COPY_WORK // work)


def loop_mark(k: KernelBuilder, body: ir.Block) -> ll.Value | None:
    """Where the arena starts before a loop whose body makes arrays (None if it makes none): at
    the end of each iteration, what was allocated since is freed (_lower_body)."""
    return arrays.arena_mark(k) if k.arena is not None and arrays.allocates_in(body) else None


def _lower_body(k: KernelBuilder, body: ir.Block, carried: list, exit_: ll.Block, mark=None) -> list | None:
    """Lower a loop's body on the carried values (the header's phis); its results, or None
    where it always raises (then the loop never repeats and its exit is unreachable). With the
    arena's `mark` (loop_mark), the arrays made since die at the end of the iteration: those
    carried to the next are copied into new blocks first, and the previous ones are freed."""
    carried = list(carried)
    for p in body.params:
        k.regions.values[p] = _from_flat(p.type, carried)
    results = k.regions.block(body)
    if results is not None and mark is not None:
        results = [results[0], *(_keep_arrays(k, r, v.type) for r, v in zip(results[1:], body.results[1:]))]
        kept = sum(isinstance(t, ir.ArrayType) for v in body.results[1:] for t in ir.leaf_types(v.type))
        arrays.free_arena_to(k, mark, keep=kept)
    if results is None:
        k.builder.position_at_end(exit_)
        k.builder.unreachable()
        k.builder.position_at_end(k.function.append_basic_block("dead"))
    return results


def _keep_arrays(k: KernelBuilder, value, t: ir.Type):
    """`value` (of type `t`) with each array in it copied into a new arena block."""
    leaves = [arrays.copy_to_new(k, leaf, lt.dtype) if isinstance(lt, ir.ArrayType) else leaf
              for leaf, lt in zip(_leaves(value), ir.leaf_types(t))]
    return _from_flat(t, _flat(tuple(leaves)))


def lower_counted_loop(k: KernelBuilder, v: ir.Value, initial, work: int, counter: ir.Value, tested: ir.Value,
                       bound: ir.Value, step: int, replays: bool):
    """A counted loop (`_counted`) in strips of at most POLL_BUDGET work each:

        strip:   (the carried values)  end = min(bound, counter + strip * step)
                 count end - counter's work; poll if the budget ran out
        loop:    the body, its `counter < bound` lowered as `counter < end`
                 continue: back to loop
                 stop: counter < bound?  yes: the strip ended: back to strip, with the
                       values this iteration started from (it ran only replayable code)
                       no: the loop ended

    The inner loop calls nothing, so LLVM optimizes it as the loop without polls. (A loop that
    tests last, `replays` False, goes back to the strip with the values its iteration made.)"""
    b, fn = k.builder, k.function
    body = v.regions[0]
    mark = loop_mark(k, body)
    types = _flat_types(v.type)
    strip_block, header = fn.append_basic_block("strip"), fn.append_basic_block("loop")
    ended, exit_ = fn.append_basic_block("loop_stopped"), fn.append_basic_block("endloop")
    entry = b.block
    b.branch(strip_block)
    b.position_at_end(strip_block)
    outer = [b.phi(t) for t in types]
    for phi, x in zip(outer, _flat(tuple(initial))):
        phi.add_incoming(x, entry)
    start = _from_flat(counter.type, outer[_flat_position(body, counter):])
    first = _from_flat(counter.type, _flat(tuple(initial))[_flat_position(body, counter):])
    # the counter only grows: told so, LLVM drops the checks of indices made from it
    k.call_intrinsic("llvm.assume", ll.VoidType(), [I1], b.icmp_signed(">=", start, first))
    limit = k.regions.values[bound]
    strip = max(1, POLL_BUDGET // work)
    end = k.call_intrinsic("llvm.smin.i64", I64, [I64] * 2, limit,
                           k.call_intrinsic("llvm.sadd.sat.i64", I64, [I64] * 2, start,
                                            k.i64(min(strip * step, 1 << 62))))
    span = k.call_intrinsic("llvm.smax.i64", I64, [I64] * 2, b.sub(end, start), k.i64(0))
    k.poll_signals(b.mul(b.udiv(b.add(span, k.i64(step - 1)), k.i64(step)), k.i64(work)))
    from_strip = b.block
    b.branch(header)
    b.position_at_end(header)
    phis = [b.phi(t) for t in types]
    for phi, x in zip(phis, outer):
        phi.add_incoming(x, from_strip)
    go = body.results[0]
    k.regions.replaced[go] = lambda: b.icmp_signed("<", k.regions.values[tested], end)
    results = _lower_body(k, body, phis, exit_, mark)
    if results is None:
        return _from_flat(v.type, _zeros(v.type))
    nexts = _flat(tuple(results[1:]))
    b.cbranch(results[0], header, ended)
    for phi, x in zip(phis, nexts):
        phi.add_incoming(x, b.block)
    b.position_at_end(ended)
    strip_ended = b.icmp_signed("<", k.regions.values[tested], limit)
    b.cbranch(strip_ended, strip_block, exit_).set_weights([1, 1 << 10])
    for phi, x in zip(outer, phis if replays else nexts):
        phi.add_incoming(x, ended)
    b.position_at_end(exit_)
    return _from_flat(v.type, list(nexts))


INSTRUCTIONS_PER_OP = 2      # LLVM instructions per IR op, about (what a loop counts per iteration)


def _work(block: ir.Block) -> int:
    """What running `block` once costs, in ops: a loop in it that counts to a bound known at
    compile time costs its trips' worth, one that does not counts as one iteration (it polls)."""
    total = 0
    for v in block.values:
        trips = _most_trips(v) if v.op == "loop" else None
        total += 1 + (trips + 1) * _work(v.regions[0]) if trips is not None else 1 + sum(map(_work, v.regions))
    return max(1, total)


def _most_trips(v: ir.Value) -> int | None:
    """How often at most a `loop` goes back, if it counts a carried int up from a constant by
    a constant step while it is below a constant (a `for` over a range or a list whose length
    the trace fixed); else None."""
    body = v.regions[0]
    go = body.results[0]
    if go.op != "lt" or go.args[0] not in body.params or go.args[1].op != "const" or go.args[0].type != ir.I64:
        return None
    counter = go.args[0]
    position = body.params.index(counter)
    start, step = v.args[position], _step(body.results[1 + position], counter, go)
    if start.op != "const" or not step or step <= 0:
        return None
    return max(0, -(-(go.args[1].attrs["value"] - start.attrs["value"]) // step))


def _counted(v: ir.Value) -> tuple[ir.Value, ir.Value, ir.Value, int, bool] | None:
    """(counter, tested, bound, step, replays) if the `loop` v counts a carried i64 up by a
    constant step while it (`tested`: the counter, or its next value) is below a bound fixed
    before the loop starts; else None. `replays`: the test comes first (a `for` over a range:
    `if counter < bound: <the iteration>`), so an iteration that a strip stops (its test is
    against the strip's end, lower_counted_loop) is run again from its start, which needs it
    to have run only code that can be run again (`_replayable`: then it ran only its test and
    the loop's way out). A loop that tests last (`while i < n: ...; i += 1`) goes on with the
    iteration's results. (Only an innermost loop, or one whose inner loops are short: strips of
    an outer loop keep LLVM from optimizing the inner loops as well as it otherwise does; and
    none that carries arrays.)"""
    body = v.regions[0]
    go = body.results[0]
    if go.op != "lt" or go.args[0].type != ir.I64 or go.args[1].type != ir.I64:
        return None
    if any(isinstance(t, ir.ArrayType) for t in ir.leaf_types(v.type)):
        return None     # (a replayed iteration would start from carried arrays its end freed)
    tested, bound = go.args
    inside = _defined_in(body)
    if bound in inside or any(x.op == "loop" and _most_trips(x) is None for x in inside):
        return None
    replays = tested in body.params
    if replays:
        counter = tested
    else:
        counter = next((p for p, r in zip(body.params, body.results[1:]) if r is tested), None)
        if counter is None:
            return None
    step = _step(body.results[1 + body.params.index(counter)], counter, go)
    if not step or step <= 0:
        return None
    if replays:
        stops = [x for x in body.values if not (x.op == "if" and x.args[0] is go)]
        stops += [x for x in body.values if x.op == "if" and x.args[0] is go for x in x.regions[1].values]
        if not all(map(_replayable, stops)):
            return None
    return counter, tested, bound, step, replays


def _replayable(v: ir.Value) -> bool:
    """Whether running `v` again changes nothing: it touches no memory, cannot fail, and makes
    no array (a buffer made twice would be one too many)."""
    op = OPS[v.op]
    return (not op.effect and not op.may_fail(v) and not v.regions and v.op != "python_call"
            and not any(isinstance(t, ir.ArrayType) for t in ir.leaf_types(v.type)))


def _defined_in(block: ir.Block) -> set:
    """The values `block` defines, its params and those of its regions included."""
    found = set(block.params)
    for x in block.values:
        found.add(x)
        for region in x.regions:
            found |= _defined_in(region)
    return found


def _flat_position(body: ir.Block, param: ir.Value) -> int:
    """Where the carried value `param` starts among the loop's flattened values."""
    index = body.params.index(param)
    return sum(len(_flat_types(p.type)) for p in body.params[:index])


def _step(following: ir.Value, counter: ir.Value, go: ir.Value) -> int | None:
    """The constant `following` adds to `counter` while `go` holds (through the `if` on `go`)."""
    if following.op == "add" and following.args[0] is counter and following.args[1].op == "const":
        return following.args[1].attrs["value"]
    if following.op == "getitem" and following.args[0].op == "if" and following.args[0].args[0] is go:
        return _step(following.args[0].regions[0].results[following.attrs["index"]], counter, go)
    return None


def keep_writes_on_interrupt(k: KernelBuilder, fn: ir.Function) -> None:
    """An interrupted kernel (Ctrl-C in a loop, KernelBuilder.poll_signals) keeps what the
    function wrote into its argument arrays so far, as CPython would have: each array that the
    final `writeback` copies into an argument (the copy the writes went to) is written back
    from the moment it is computed."""
    top = set(fn.body.values)
    for v in fn.body.values:
        if v.op != "writeback":
            continue
        for target, contents in zip(v.args[::2], v.args[1::2]):
            if target.op == "param" and contents is not target and contents in top:
                def write(k, array, target=k.params[target.attrs["index"]], dtype=target.type.dtype):
                    arrays.write_back_if_apart(k, target, dtype, array)
                k.kept_on_interrupt.append((contents, write))


def raise_sites(fn: ir.Function) -> list[ir.Value]:
    """The function's `raise` ops in walk order: the i-th returns status RAISE_BASE + i."""
    return [v for v in fn.walk() if v.op == "raise"]


def failure_sites(fn: ir.Function) -> list[ir.Value]:
    """The values whose op may fail, in walk order: a kernel failing at the i-th notes i in
    codegen.kernel.FAILED_SITE, and its entry puts that value's line in the traceback."""
    return [v for v in fn.walk() if OPS[v.op].may_fail(v)]


def lower_function(fn: ir.Function, module: ll.Module, symbol: str, memory: tuple[str, str] = C_MEMORY) -> ll.Function:
    """Emit `fn` into `module` as the kernel `symbol` (see the module docstring for the ABI);
    its arrays are allocated and freed by the `memory` functions (see KernelBuilder)."""
    function = ll.Function(module, kernel_type(fn), symbol)
    function.attributes.add("nounwind")
    k = KernelBuilder(module, function, fn, memory)
    k.parallel = fn.parallel
    k.summed_later, k.reused = parallel.summed_later(fn), ownership.memory_reuse(fn)
    if fn.python_on_failure and k.check_signals is not None:    # (under Python: NumPy's warnings)
        k.numpy_flags = fpflags.watched_flags(module)
    if any(v.op == "python_call" for v in fn.walk()):
        k.track_calls_out()
    fpflags.start_numpy_warns(k, fn)
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

    tape.allocate_headers(k, fn)
    if arrays.uses_arena(fn):
        arrays.start_arena(k)
    keep_writes_on_interrupt(k, fn)
    values = {p: a for p, a in zip(fn.params, k.params)}
    statuses = {v: RAISE_BASE + i for i, v in enumerate(raise_sites(fn))}
    sites = {v: i for i, v in enumerate(failure_sites(fn))}
    results = BlockLowering(k, values, statuses, sites).block(fn.body)
    k.site = -1
    if results is None:
        return function
    for leaf, t, out in zip(_leaves(results[0]), ir.leaf_types(fn.result_type), outs):
        if isinstance(t, ir.ArrayType):
            arrays.export_result(k, leaf, t, out)
        else:
            k.builder.store(leaf, out)
    fpflags.fail_if_numpy_warns(k)
    k.ret(Status.OK)
    return function
