"""`for i in tracer.prange(n)` on the thread pool: a `loop` op with attrs parallel=True (the front
end marks the loop of a `for` over prange, tracer.frontend.iteration) runs its iterations in
chunks on the runtime's pool (tracer/csrc/pool.h, `parallel_for`) under `parallel=True`.

The user promises what numba's prange asks: iterations write disjoint array elements and read
nothing another iteration writes. The compiler checks the rest (`plan`): the loop counts up by a
constant step to a bound fixed before it starts; every other carried value is either left as it
is or is a scalar accumulator that each path through an iteration updates with `s += x` and
`s -= x` (or with `s *= x`), or leaves alone, and that nothing else in the body reads; and the body makes no call into Python, raises nothing, changes
no list and carries no array. Any other loop runs as a plain loop (as does every prange loop
without parallel=True, in an exported library, and inside another parallel loop).

The iterations 0..trips are cut into `chunks` pieces, a number that depends on the trip count and
the body's size only (never on the threads): chunk c runs iterations [c*trips/chunks,
(c+1)*trips/chunks) and leaves its partial of each accumulator (started from the op's identity,
-0.0 for float sums) in slot c; the kernel then adds the partials to the accumulator's value
before the loop in chunk order. A result is therefore the same on every run and every number
of threads, and a float sum is the sequential sum regrouped per chunk (equal to rounding, as
numba's are). A chunk that fails (an index out of bounds, an overflow past 64 bits, a NumPy
warning) makes the kernel return FALLBACK: the loop wrote only arrays of the kernel's own (an
argument's new contents are written back last), so the Python function runs from the start and
raises or warns as it does.
"""
from __future__ import annotations

from typing import NamedTuple

from llvmlite import ir as ll

from codegen import arrays
from codegen.kernel import DOUBLE, FLOAT, I1, I32, I64, PTR, ArrayValue, KernelBuilder, llvm_type
from codegen.parallel import PARALLEL_FOR, pack_word, unpack_word
from tracer import ir
from tracer.errors import Status

MAX_CHUNKS = 64             # pieces of a parallel loop, at most (partials combined in their order)
CHUNK_WORK = 4096           # IR ops of the body a chunk runs, at least (less is not worth a thread)
INNER_TRIPS = 32            # what a loop inside the body is counted as (its trips are not known)
FORBIDDEN = ("python_call", "raise", "writeback", "in_place_check")
CHUNK_TYPE = ll.FunctionType(I32, [PTR, I64, I64])


class Plan(NamedTuple):
    """What `plan` found in a parallel loop: the counter's place and step, the bound, the `if`
    whose `then` region is an iteration, each carried value's kind ("counter", "same",
    "reduce", "shadow": the value another carried value had before the iteration), each
    accumulator's way of combining, and the values of the kernel the iteration reads."""
    counter: int
    step: int
    test: ir.Value
    branch: ir.Value
    kinds: list
    updates: dict            # position -> how the accumulator's partials combine: "add" or "mul"
    free: list
    work: int                # IR ops per iteration, about


def plan(v: ir.Value) -> Plan | None:
    """The Plan of the `loop` v if it can run in chunks (see the module docstring), else None."""
    body = v.regions[0]
    test, params = body.results[0], body.params
    if test.op != "lt" or test.args[0] not in params or test.args[0].type != ir.I64:
        return None
    if not all(isinstance(p.type, ir.ScalarType) for p in params):
        return None
    inside = ir.defined_in([body])
    if test.args[1] in inside:
        return None
    branch = next((x for x in body.values if x.op == "if" and x.args[0] is test), None)
    if branch is None or any(x is not test and x is not branch and not (x.op == "getitem" and x.args[0] is branch)
                             for x in body.values):
        return None
    then, other = branch.regions
    counter = params.index(test.args[0])
    uses = _uses(then)
    kinds, updates, step = [], {}, 0
    for position, (p, r) in enumerate(zip(params, body.results[1:])):
        if r in params:
            if p in uses or p in ir.used_in([other]) or r is p:
                return None
            kinds.append("shadow")
            continue
        if not (r.op == "getitem" and r.args[0] is branch):
            return None
        following = then.results[r.attrs["index"]]
        if position == counter:
            if following.op != "add" or following.args[0] is not p or following.args[1].op != "const":
                return None
            step = following.args[1].attrs["value"]
            if type(step) is not int or step <= 0:
                return None
            kinds.append("counter")
        elif following is p:
            kinds.append("same")
        elif (accumulates := _accumulation(p, r.attrs["index"], uses)) is not None:
            kinds.append("reduce")
            updates[position] = accumulates
        else:
            return None
    sources = {p: r for p, r in zip(params, body.results[1:]) if r in params}
    for read in sources.values():      # a shadow's value is known where it copies the counter or a same
        if read in sources and kinds[params.index(sources[read])] not in ("counter", "same"):
            return None
    if any(x.op in FORBIDDEN or x.op.startswith(("list_", "tape_")) for x in _walk(then)):
        return None
    defined = ir.defined_in([then])
    free = [x for x in ir.used_in([then]) if x not in defined and x not in params and x is not test]
    if any(x in inside or x.type == ir.F16 or not isinstance(x.type, (ir.ScalarType, ir.ArrayType)) for x in free):
        return None
    return Plan(counter, step, test, branch, kinds, updates, free, _work(then))


UPDATES = {"add": "add", "sub": "add", "mul": "mul"}   # an update's op -> how partials combine


def _accumulation(p: ir.Value, position: int, uses: dict) -> str | None:
    """How the carried value p (yielded at `position` of the iteration) accumulates: "add"
    where every path through the iteration adds to it or subtracts from it (`s += x`, `s -= x`,
    or nothing: an `if` that updates it on one side only) and nothing else reads it or a running
    value made from it; "mul" the same for `s *= x`; else None. Each path is then p op e, e not
    made from p, so a chunk's partial (from the op's identity) and the others combine."""
    if p.type not in (ir.F64, ir.F32, ir.I64):
        return None
    made, todo, kinds, joins, updates = {p}, [p], set(), [], []
    while todo:
        x = todo.pop()
        for use in uses.get(x, []):
            if use[0] == "top":
                if use[1] != position:
                    return None
                continue
            if use[0] == "yield":                # a side of an if: what the if yields there
                owner, j = use[1], use[2]
                if owner.op != "if":
                    return None
                joins.append((owner, j))
                found = [y for kind, y, *_ in uses.get(owner, []) if kind == "op" and y.op == "getitem"
                         and y.attrs["index"] == j] if isinstance(owner.type, ir.TupleType) else [owner]
                news = found
            else:
                y = use[1]
                if y.op in UPDATES and y.type == p.type:
                    kinds.add(UPDATES[y.op])
                    updates.append(y)
                elif y.op != "numpy_scalar_check":     # (its operand checked below)
                    return None
                news = [y]
            for y in news:
                if y not in made:
                    made.add(y)
                    todo.append(y)
    if len(kinds) != 1 or not updates:
        return None
    for y in updates:                            # one operand made from p: the first, for sub
        if (y.args[0] in made) == (y.args[1] in made) or (y.op == "sub" and y.args[0] not in made):
            return None
    if any(x.op == "numpy_scalar_check" and x.args[0] not in made for x in made):
        return None
    if any(r.results[j] not in made for owner, j in joins for r in owner.regions):
        return None                              # a side yields something else there
    return kinds.pop()


def _uses(block: ir.Block) -> dict:
    """value -> how `block` (nested regions included) reads it: ("op", x) for an operand of x,
    ("yield", if-op, j) for a nested region's j-th yield, ("top", j) for `block`'s own j-th."""
    found: dict = {}

    def visit(b: ir.Block, owner) -> None:
        for x in b.values:
            for a in x.args:
                found.setdefault(a, []).append(("op", x))
            for r in x.regions:
                visit(r, x)
        for j, r in enumerate(b.results):
            found.setdefault(r, []).append(("top", j) if owner is None else ("yield", owner, j))
    visit(block, None)
    return found


def _walk(block: ir.Block):
    for x in block.values:
        yield x
        for r in x.regions:
            yield from _walk(r)


def _work(block: ir.Block) -> int:
    """IR ops that running `block` once costs, about (a loop's body counted INNER_TRIPS times)."""
    total = 0
    for x in block.values:
        inner = sum(_work(r) for r in x.regions)
        total += 1 + (INNER_TRIPS * inner if x.op == "loop" else inner)
    return max(1, total)


def lower_parallel_loop(k: KernelBuilder, v: ir.Value, initial: list) -> tuple | None:
    """The loop v on the pool (its carried values' final values), or None where it runs as a
    plain loop: not parallel code under Python, or not a loop `plan` accepts."""
    if not (k.parallel and k.check_signals is not None and k.deferred is None and k.called_out is None):
        return None
    found = plan(v)
    if found is None:
        return None
    b = k.builder
    body = v.regions[0]
    initial = list(initial)
    start, bound = initial[found.counter], k.regions.values[found.test.args[1]]
    trips = _trips(k, start, bound, found.step)
    work = b.mul(_umin(k, trips, k.i64(1 << 40)), k.i64(found.work))
    chunks = _umin(k, _umin(k, b.udiv(work, k.i64(CHUNK_WORK)), k.i64(MAX_CHUNKS)), trips)
    chunks = k.call_intrinsic("llvm.umax.i64", I64, [I64, I64], chunks, k.i64(1))
    reduced = [i for i, kind in enumerate(found.kinds) if kind == "reduce"]
    same = [i for i, kind in enumerate(found.kinds) if kind == "same"]
    with b.goto_entry_block():
        partials = b.alloca(I64, size=MAX_CHUNKS * max(1, len(reduced)), name="partials")
    header = [bound, chunks, start, partials] + [initial[i] for i in same]
    fields = list(header)
    for x in found.free:
        lowered = k.regions.values[x]
        fields += (lowered.data, *lowered.sizes, *lowered.strides) if isinstance(x.type, ir.ArrayType) else (lowered,)
    # one word per value (the bound and an array's size are then one value in the chunk too); a
    # constant stays one
    words = list({id(w): w for w in fields if not isinstance(w, ll.Constant)}.values())
    with b.goto_entry_block():
        context = b.alloca(I64, size=max(1, len(words)), name="prange_ctx")
    for i, w in enumerate(words):
        b.store(pack_word(b, w), b.gep(context, [k.i64(i)], source_etype=I64))
    chunk = _chunk_function(k, v, found, header, words, reduced, same)
    with b.if_then(b.icmp_unsigned(">", chunks, k.i64(1))):
        k.poll_now()            # (where the kernel's entry allows, the GIL is released from here on)
    run = k.declare_function(PARALLEL_FOR, ll.FunctionType(I32, [PTR, PTR, I64, I64]), ("nounwind",))
    status = b.call(run, [chunk, context, chunks, k.i64(1)])
    k.fail_if(b.icmp_unsigned("!=", status, ll.Constant(I32, 0)), Status.FALLBACK)
    final = list(initial)
    final[found.counter] = b.add(start, b.mul(trips, k.i64(found.step)))
    ran = b.icmp_signed(">", trips, k.i64(0))
    for position, r in enumerate(body.results[1:]):
        if found.kinds[position] == "shadow" and found.kinds[body.params.index(r)] in ("counter", "same"):
            # what r held when the last iteration started (where there was one)
            before = b.add(start, b.mul(b.sub(trips, k.i64(1)), k.i64(found.step))) \
                if r is body.params[found.counter] else initial[body.params.index(r)]
            final[position] = b.select(ran, before, initial[position])
    for slot, position in enumerate(reduced):
        final[position] = _combine(k, found.updates[position], initial[position], partials, slot, len(reduced), chunks)
    values = k.regions.values
    for p, x in zip(body.params, final):
        values[p] = x
    values[found.test] = ll.Constant(I1, 0)
    leaving = k.regions.block(found.branch.regions[1])     # the else side: what the last test yields
    results = []
    for r in body.results[1:]:
        results.append(final[body.params.index(r)] if r in body.params else leaving[r.attrs["index"]])
    return tuple(results)


def _chunk_function(k: KernelBuilder, v: ir.Value, found: Plan, header: list, words: list, reduced: list,
                    same: list) -> ll.Function:
    """`i32 chunk(ptr ctx, i64 first, i64 end)`: runs chunks first..end of the loop, each
    leaving its accumulators' partials in its slots; 0, or the status of a failure."""
    body, then = v.regions[0], found.branch.regions[0]
    fn = ll.Function(k.module, CHUNK_TYPE, k.module.get_unique_name(f"{k.function.name}.prange"))
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    values = k.regions.values
    saved = {x: values[x] for x in found.free}
    warns = k.numpy_warns is not None
    with k.in_function(fn) as b:
        context, first, end = fn.args
        loaded = {id(w): unpack_word(b, b.load(b.gep(context, [k.i64(i)], source_etype=I64), typ=I64), w.type)
                  for i, w in enumerate(words)}

        def take(w: ll.Value) -> ll.Value:       # (a constant stays one: it is not in the words)
            return w if isinstance(w, ll.Constant) else loaded[id(w)]
        bound, chunks, start, partials, *initial = map(take, header)
        trips = _trips(k, start, bound, found.step)
        for i, x in zip(same, initial):
            values[body.params[i]] = x
        for x in found.free:
            outer = saved[x]
            if isinstance(x.type, ir.ArrayType):
                values[x] = ArrayValue(take(outer.data), tuple(map(take, outer.sizes)), tuple(map(take, outer.strides)))
            else:
                values[x] = take(outer)
        values[found.test] = ll.Constant(I1, 1)
        if warns:
            k.numpy_warns = k.stack_slot(I1, "numpy_warns")
            b.store(ll.Constant(I1, 0), k.numpy_warns)
        allocates = arrays.allocates_in(then)
        if allocates:
            arrays.start_arena(k)
        with _counting(k, first, end) as c:
            lo = b.udiv(b.mul(c, trips), chunks)
            hi = b.udiv(b.mul(b.add(c, k.i64(1)), trips), chunks)
            for fact in (b.icmp_signed(">=", lo, k.i64(0)), b.icmp_signed("<=", hi, trips)):
                k.call_intrinsic("llvm.assume", ll.VoidType(), [I1], fact)    # (LLVM drops index checks)
            types = [llvm_type(body.params[i].type) for i in reduced]
            with _counting(k, lo, hi, [_identity(t, found.updates[i]) for t, i in zip(types, reduced)]) as (it, acc):
                b = k.builder
                values[body.params[found.counter]] = b.add(start, b.mul(it, k.i64(found.step)))
                for i, x in zip(reduced, acc):
                    values[body.params[i]] = x
                mark = arrays.arena_mark(k) if allocates else None
                results = k.regions.block(then)
                if mark is not None:
                    arrays.free_arena_to(k, mark)
                acc[:] = [results[body.results[1 + i].attrs["index"]] for i in reduced]
            b = k.builder
            for slot, x in enumerate(acc.final):
                where = b.add(b.mul(c, k.i64(len(reduced))), k.i64(slot))
                b.store(pack_word(b, x), b.gep(partials, [where], source_etype=I64))
        if warns:
            k.fail_if(k.builder.load(k.numpy_warns, typ=I1), Status.FALLBACK)
        k.ret(Status.OK)
    values.update(saved)
    return fn


class _Carried(list):
    """The accumulators of a loop `_counting` builds: its phis inside; set them (acc[:] = ...)
    to the next values at the end of the body; `final` after it."""
    final: list = []


class _counting:
    """`with _counting(k, lo, hi[, initial]) as i` (or `as (i, carried)`): a loop over
    i in [lo, hi), the builder in its body; carried values (phis) from `initial`."""

    def __init__(self, k: KernelBuilder, lo, hi, initial=None):
        self.k, self.lo, self.hi, self.initial = k, lo, hi, initial

    def __enter__(self):
        k, b = self.k, self.k.builder
        fn = k.function
        self.entry, self.header = b.block, fn.append_basic_block("chunk_loop")
        self.body, self.exit = fn.append_basic_block("chunk_body"), fn.append_basic_block("chunk_done")
        b.branch(self.header)
        b.position_at_end(self.header)
        self.index = b.phi(I64)
        self.index.add_incoming(self.lo, self.entry)
        self.carried = _Carried()
        for x in self.initial or []:
            phi = b.phi(x.type)
            phi.add_incoming(x, self.entry)
            self.carried.append(phi)
        self.phis = list(self.carried)
        b.cbranch(b.icmp_signed("<", self.index, self.hi), self.body, self.exit)
        b.position_at_end(self.body)
        return self.index if self.initial is None else (self.index, self.carried)

    def __exit__(self, kind, value, traceback):
        if kind is not None:
            return False
        b = self.k.builder
        self.index.add_incoming(b.add(self.index, self.k.i64(1)), b.block)
        for phi, x in zip(self.phis, self.carried):
            phi.add_incoming(x, b.block)
        b.branch(self.header)
        b.position_at_end(self.exit)
        self.carried.final = self.phis
        return False


def _identity(t: ll.Type, op: str) -> ll.Constant:
    """Where a chunk's partial starts: x op identity is x (-0.0 for a float sum: -0.0 + 0.0 is
    0.0); a difference's partial is the negated sum of what it subtracts."""
    if t in (DOUBLE, FLOAT):
        return ll.Constant(t, 1.0 if op == "mul" else -0.0)
    return ll.Constant(t, 1 if op == "mul" else 0)


def _combine(k: KernelBuilder, update: str, value: ll.Value, partials: ll.Value, slot: int, count: int,
             chunks: ll.Value) -> ll.Value:
    """The accumulator's value before the loop with each chunk's partial added (multiplied, for
    `*=`) in chunk order; FALLBACK where an int goes past 64 bits."""
    with _counting(k, k.i64(0), chunks, [value]) as (c, acc):
        b = k.builder
        word = b.load(b.gep(partials, [b.add(b.mul(c, k.i64(count)), k.i64(slot))], source_etype=I64), typ=I64)
        partial = unpack_word(b, word, value.type)
        multiply = update == "mul"
        if value.type in (DOUBLE, FLOAT):
            acc[:] = [b.fmul(acc[0], partial) if multiply else b.fadd(acc[0], partial)]
        else:
            acc[:] = [k.checked("smul" if multiply else "sadd", acc[0], partial)]
    return acc.final[0]


def _trips(k: KernelBuilder, start: ll.Value, bound: ll.Value, step: int) -> ll.Value:
    """len(range(start, bound, step)), step > 0."""
    b = k.builder
    span = b.sub(bound, start)
    return b.select(b.icmp_signed(">", span, k.i64(0)),
                    b.add(b.sdiv(b.sub(span, k.i64(1)), k.i64(step)), k.i64(1)), k.i64(0))


def _umin(k: KernelBuilder, a: ll.Value, b: ll.Value) -> ll.Value:
    return k.call_intrinsic("llvm.umin.i64", I64, [I64, I64], a, b)
