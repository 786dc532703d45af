"""Data-dependent control flow: how the symbolic interpreter runs both sides of a branch and
turns loops into IR loops.

A branch whose condition is a traced value *forks* the frame: each side runs from a copy of the
frame's state (stack, locals, cells) into its own region, until it reaches the branch's join point
(`flow.FlowGraph.join_point`), a stop of an enclosing region, or a return. The sides' end states
are then *merged*: what is the same object on every side stays as it is; numbers that differ
become values the `if` op yields. A side that meets a Python exception ends in a `raise` op.

Where a run can end is an `Outcome`: for each place it may continue (a pc, or RETURN) the frame
state there, and when there are several, a traced `selector` saying which (the pc itself, or -1
for a return). An outcome with a place that is not a stop of the current run is *settled*: the
run continues from there (under `if selector == place` when there are several).

Loops. A `for` over a range with traced bounds (or a long constant range: a `RangeIter`, with the
unroll limits in tracer.frontend.iteration), or a `while` whose exit depends on a traced value,
becomes a `loop` op: the body is interpreted once from the loop header with the values that
change between iterations as block parameters (found by running the body until that set stops
growing), and yields whether to go on, the next values, and the state at each exit. A while
loop is noticed only when a traced jump decides to leave it (`flow.FlowGraph.loops_left`: a
target outside the loop, or sides that meet again only outside it, as the first test of
`if k > n or x: break` does), in the middle of an iteration: the frame then rolls back to its last
arrival at the loop header (a checkpoint) and builds the loop from there. A loop whose carried
types change on the first iteration (`acc = 0` then `acc += x`) has that iteration peeled off
first: it runs once, every branch in it forking, up to the header, where the loop is built.

How states merge (layouts, `MaybeUnbound` for a variable bound on some paths only, whose reads
check a traced "is bound" flag and raise UnboundLocalError where CPython would) is in
tracer.frontend.states.
"""
from __future__ import annotations

from bytecode import Instr

from tracer import ir
from tracer.errors import BigIntInput, InternalError, SourceLoc, TracerError, UnsupportedError, is_internal
from tracer.frontend import dicts, dynlists, instances
from tracer.frontend.builder import NeedsPython, is_traced
from tracer.frontend.generators import SUM_LOCAL
from tracer.frontend.iteration import AUTODIFF_UNROLL_LIMIT, UNROLL_LIMIT, ListChanged, ParallelRangeIter
from tracer.frontend.numpy_scalars import made_by_numpy
from tracer.frontend.objects import NULL
from tracer.frontend.states import (
    FrameState,
    Many,
    MergeError,
    Outcome,
    StateLayout,
    array_values,
    block_mark,
    changed_since,
    copy_iterator,
    cut_block,
    flatten,
    heap_layout,
    heap_values,
    is_copyable_iterator,
    layout_of,
    layout_types,
    mutable_snapshot,
    rebind_arrays,
    rebuild,
    rebuilt_heap,
    restore,
    zero_value,
    zeros,
)
from tracer.ir import F32, F64, I64, Block, TupleType, Value

RETURN = -1                 # the place of a returning outcome (pcs are >= 0)
MAX_PEELS = 2               # iterations peeled off a loop before its carried types must settle
MAX_LOOP_ATTEMPTS = 50      # the carried set grows on each attempt; it is bounded by the state
MAX_TRACE_VALUES = 100_000  # an unrolled trace this long would take minutes to compile: run Python
MAX_FORKS = 3000            # paths a trace forks into, in all (conditions that meet only late multiply them)
MAX_NESTING = 120          # regions inside regions (each some Python frames of the tracer's: far from the limit)


def unrolled_instead(tracer, exc: UnsupportedError) -> None:
    """A loop that could not be built unrolls instead; where that was because it changes a list
    made in the trace (ListChanged naming where), remember it (`held_instead`)."""
    if isinstance(exc, ListChanged) and getattr(exc, "sites", None):
        tracer.unrolled_for.append(exc)


def held_instead(tracer, error: TracerError) -> TracerError:
    """What a trace grown too long or too deep raises: the ListChanged of a loop unrolled because
    it changes a list (the call is traced again with that list held, the loop a loop op), else
    `error`."""
    return tracer.unrolled_for[0] if tracer.unrolled_for else error


def too_deep(tracer, loc) -> TracerError:
    """The tracer's own recursion ran out (a RecursionError: the user's recursion is unrolled by
    the tracer, so never the user's exception), or regions nest past MAX_NESTING."""
    return held_instead(tracer, UnsupportedError("the trace nests too deeply (data-dependent branches in loops "
                                                 "that could not compile to loops)", loc))


class RestartLoop(Exception):
    """A traced exit test of a loop being unrolled: roll back to its header and build a loop."""

    def __init__(self, header: int):
        self.header = header


class AlwaysRaises:
    """The return value of a frame whose every path raises (in the compiled code)."""


class EveryPathRaises(BaseException):
    """Raised in the caller of a call whose every path raises (the raises are in the IR): what
    follows the call on this path never runs. (Not an Exception: no handler takes it for the
    user's exception.)"""


class _Peel(Exception):
    """The carried values change type in the first iteration: peel it off."""


class Branching:
    """Mixin for SymbolicFrame: forks, merges, loops (see the module docstring)."""

    # ------------------------------------------------------------------ state
    def save(self) -> FrameState:
        cells = {n: c.contents for n, c in self.cells.items()}
        return FrameState(self.pc, tuple(self.stack), dict(self.locals), cells, self.return_value,
                          array_values((self.stack, tuple(self.locals.values()), tuple(cells.values()))),
                          instances.snapshot(self.tracer))

    def restore(self, s: FrameState) -> None:
        self.pc = s.pc if s.pc is not None else self.pc
        self.stack = list(s.stack)
        self.locals = dict(s.locals)
        for n, contents in s.cells.items():
            self.cells[n].contents = contents
        self.return_value = s.return_value
        instances.restore_heap(self.tracer, s.heap)
        b = self.builder
        rebind_arrays(s.arrays, b.enclosing[0] if b.enclosing else b.block)

    def _trim(self, place, s: FrameState) -> FrameState:
        """Drop the locals nothing reads from `place` on (they need no merging)."""
        if place == RETURN:
            return s
        live = self.graph.live_locals(place)
        return FrameState(s.pc, s.stack, {n: v for n, v in s.locals.items() if n in live or n == SUM_LOCAL},
                          s.cells, s.return_value, heap=s.heap)

    def _state_layout(self, place, states: list[FrameState], force=frozenset()) -> StateLayout:
        """How the states reaching `place` merge (traced values in `force` always get a slot)."""
        b = self.builder
        # instances made in the trace: the attributes of those on every path (states.heap_layout)
        objects, kept, heap = heap_layout(states, b, force, lambda values, what, mutated, heaps:
                                          layout_of(values, what, b, force, mutated, heaps))
        mutated = frozenset(inst for inst, _ in objects)
        heaps = [s.heap for s in states]
        if place == RETURN:
            value = layout_of([s.return_value for s in states], "the return value", b, force, mutated, heaps)
            return StateLayout(None, (), Many(tuple, (value, heap)), objects, kept)
        depth = {len(s.stack) for s in states}
        if len(depth) != 1:
            raise UnsupportedError("paths of a branch meet with different stack depths", b.loc)
        names = tuple(sorted(set().union(*(s.locals for s in states))))
        cells = tuple(sorted(states[0].cells))
        def part(values, what):
            return layout_of(values, what, b, force, mutated, heaps)
        stack = Many(tuple, tuple(part([s.stack[i] for s in states], f"stack slot {i}") for i in range(depth.pop())))
        local = Many(tuple, tuple(part([s.locals.get(n, NULL) for s in states], f"variable '{n}'") for n in names))
        cell = Many(tuple, tuple(part([s.cells[n] for s in states], f"closure variable '{n}'") for n in cells))
        return StateLayout(names, cells, Many(tuple, (stack, local, cell, heap)), objects, kept)

    @staticmethod
    def _as_value(sl: StateLayout, s: FrameState):
        """A state as the value `sl.layout` describes: (stack, locals by name, cells by name,
        heap), or (return value, heap)."""
        heap = heap_values(sl.objects, s.heap)
        if sl.names is None:
            return (s.return_value, heap)
        return (s.stack, tuple(s.locals.get(n, NULL) for n in sl.names), tuple(s.cells[n] for n in sl.cells), heap)

    def _flatten_state(self, sl: StateLayout, s: FrameState) -> list:
        return flatten(sl.layout, self._as_value(sl, s), self.builder, s.heap)

    def _zeros_state(self, sl: StateLayout) -> list:
        return zeros(sl.layout, self.builder)

    @staticmethod
    def _state_types(sl: StateLayout) -> list:
        return layout_types(sl.layout)

    def _rebuild_state(self, place, sl: StateLayout, leaves: list) -> FrameState:
        made = instances.made_since(self.tracer)
        value = rebuild(sl.layout, leaves)          # (merged instances are made here: alive after it)
        if sl.names is None:
            value, heap = value
            return FrameState(None, (), {}, {}, value, heap=rebuilt_heap(sl.objects, sl.kept, heap, made()))
        stack, local, cells, heap = value
        return FrameState(place, stack, {n: v for n, v in zip(sl.names, local) if v is not NULL},
                          dict(zip(sl.cells, cells)), heap=rebuilt_heap(sl.objects, sl.kept, heap, made()))

    # ------------------------------------------------------------------ running
    def run_until(self, stops: frozenset, skip_first: bool = False):
        """Interpret until a pc in `stops` (other than where it starts, with skip_first), a
        return, or (a generator) a yield. The Outcome, or None after a yield."""
        outer_stops, self.stops = self.stops, stops
        checkpoints: dict[int, tuple] = {}      # loop header -> where this run last arrived there
        entries: dict[int, list] = {}          # loop header -> [iterations unrolled, checkpoint on entry]
        first = skip_first
        previous = None                        # the pc of the last instruction run
        try:
            while True:
                if self.return_value is not NULL:
                    return Outcome.at(RETURN, self.save())
                if self.yielded:
                    return None
                instr = self.instrs[self.pc]
                if isinstance(instr, Instr):
                    if self.pc in stops and not first:
                        return Outcome.at(self.pc, self.save())
                    first = False
                try:
                    built = False                  # whether a loop was built here
                    result = None
                    if isinstance(instr, Instr) and self.pc in self.graph.header_pcs \
                            and instr.name != "FOR_ITER" and self.pc not in self.building:
                        if self.pc not in checkpoints:
                            self.active_headers[self.pc] = self.active_headers.get(self.pc, 0) + 1
                        checkpoints[self.pc] = (self.builder.block, block_mark(self.builder.block), self.save(),
                                                self.mutable_contents())
                        result = self._unrolled_too_long(entries, previous)
                        built = result is not None
                    if isinstance(instr, Instr):
                        previous = self.pc
                        if not self.tracer.steps % 4096:
                            self._check_trace_length()
                    if result is None:
                        result = self.step_instruction()
                    settled = self.settle(result) if isinstance(result, Outcome) else None
                except RestartLoop as restart:
                    settled, built = self._roll_back(checkpoints, restart), True
                if settled is not None:
                    return settled
                if built:                      # (at the header after a peeled iteration: enter anew)
                    previous = None
        finally:
            self.stops = outer_stops
            for h in checkpoints:
                self.active_headers[h] -= 1
                if not self.active_headers[h]:
                    del self.active_headers[h]

    def _check_trace_length(self) -> None:
        """Stop a trace whose unrolled loops made it too long to compile in reasonable time."""
        b = self.builder
        top = b.enclosing[0] if b.enclosing else b.block
        if len(top.values) > MAX_TRACE_VALUES:
            raise held_instead(self.tracer, UnsupportedError(f"the trace is too long (over {MAX_TRACE_VALUES} "
                                                             f"operations, from loops that could not compile to "
                                                             f"loops and were unrolled)", b.loc))

    def _roll_back(self, checkpoints: dict, restart: RestartLoop):
        """Build the loop `restart` names from this run's last arrival at its header (again for
        an outer loop when building it, or going on after it, finds that loop's exit traced
        too), and settle its outcome: None to go on from where the frame is now."""
        while True:
            if checkpoints.get(restart.header) is None:
                raise restart
            block, mark, state, contents = checkpoints[restart.header]
            checkpoints[restart.header] = None
            assert block is self.builder.block
            cut_block(block, mark)
            self.restore(state)
            restore(contents, self.builder)      # (the lists the rolled back iteration changed, as they were)
            try:
                result = self.build_loop()
                return self.settle(result) if isinstance(result, Outcome) else None
            except RestartLoop as again:
                restart = again

    def _unrolled_too_long(self, entries: dict, previous: int | None):
        """At a while loop's header whose exit test has been known at trace time so far: after
        more than UNROLL_LIMIT iterations (AUTODIFF_UNROLL_LIMIT traced for autodiff), roll back
        to the loop's entry and build it as a loop op, the numbers that change between
        iterations becoming carried values. The Outcome of the loop, or None to go on unrolling
        (also when the body needs those numbers at trace time, e.g. as list indexes)."""
        h = self.pc
        loop = self.graph.header_pcs[h]
        if previous is None or self.graph.block_at[previous] not in loop.blocks or h not in entries:
            # entering the loop; or back at its header in a run that started inside it (a side of
            # a peeled iteration): count from this iteration, which a loop op can start from
            entries[h] = [0, (self.builder.block, block_mark(self.builder.block), self.save())]
            return None
        count = entries[h][0] = entries[h][0] + 1
        limit = AUTODIFF_UNROLL_LIMIT if self.tracer.unroll_loops else UNROLL_LIMIT
        if count <= limit or self.is_generator or h in self.unrolled_headers:
            return None
        block, mark, state = entries[h][1]
        if block is not self.builder.block:
            return None
        here, unrolled = self.save(), cut_block(block, mark)
        self.restore(state)
        try:
            return self.build_loop()
        except UnsupportedError as exc:
            unrolled_instead(self.tracer, exc)
            self.unrolled_headers.add(h)     # unroll this loop to the end, as before
            cut_block(block, mark)
            block.values.extend(unrolled)
            self.restore(here)
            return None

    def mutable_contents(self) -> list:
        """The contents of the lists, dicts and iterators the frame reaches (states.mutable_snapshot)."""
        return mutable_snapshot((tuple(self.stack), tuple(self.locals.values()),
                                 tuple(c.contents for c in self.cells.values())))

    def run_side(self, block: Block, stops: frozenset, skip_first: bool = False, setup=None) -> Outcome:
        """Run into `block` (a region) until `stops`, after `setup()` (which sets the side's
        frame up, emitting into the region: a loop's element read happens only if it goes on);
        a Python exception ends the side with a `raise` op (an Outcome with no places)."""
        if len(self.builder.enclosing) > MAX_NESTING:
            raise too_deep(self.tracer, self.builder.loc)
        snapshot = self.mutable_contents()
        with self.builder.region(block):
            try:
                if setup is not None:
                    setup()
                outcome = self.run_until(stops, skip_first)
            except (TracerError, RestartLoop, _Peel) as exc:
                if not isinstance(exc, BigIntInput):
                    raise
                outcome = self._raise(exc)
            except EveryPathRaises:           # a call on this path raised (its raises are compiled)
                outcome = Outcome()
            except Exception as exc:          # what CPython raises on this path
                if isinstance(exc, RecursionError):
                    raise too_deep(self.tracer, self.builder.loc) from None
                if is_internal(exc):
                    raise InternalError(f"internal error in the tracer ({type(exc).__name__}: {exc}); please "
                                        f"report it", self.builder.loc) from exc
                outcome = self._raise(exc)
        if outcome is None:
            raise UnsupportedError("a generator that yields inside a data-dependent branch or loop "
                                   "is not supported", self.builder.loc)
        changed = changed_since(snapshot, self.builder, loop_body=skip_first)
        if changed:
            made = self.tracer.list_sites
            sites = {id(x): made[id(x)][1] for x in changed if id(x) in made and made[id(x)][0] is x}
            # the lists whose length changed are made as lists of run-time length next time
            # (with the type of their items: a read may come before the first append)
            # (a dict that changes is made a dict of run-time size, whatever changed)
            # (only lists of numbers or tuples of numbers: others are held, or unrolled, as before;
            # a list of tuples whose items changed is one too: an array holds numbers only; so is a
            # list of numbers of several types, of Mixed items: an array would make the ints floats)
            grown = {site: dicts.type_hint(self.builder, list(obj.items()) or contents) if type(obj) is dict
                     else dynlists.common_type(self.builder, [*obj, *contents]) if obj or contents else None
                     for obj, contents in snapshot
                     if (site := sites.get(id(obj))) is not None
                     and (type(obj) is dict or len(obj) != len(contents) or any(type(x) is tuple for x in obj)
                          or not dynlists.holds_items(self.builder, [*obj, *contents]))   # (Mixed items)
                     and (type(obj) is dict or dynlists.common_type(self.builder, [*obj, *contents]) is not None)}
            restore(snapshot, self.builder)      # as it was: the caller may run this code again
            exc = ListChanged("a list is changed inside a data-dependent branch or "
                              "loop; compiled code cannot change it on one path only", self.builder.loc)
            exc.sites, exc.grown = frozenset(sites.values()), grown
            raise exc
        return outcome

    def _raise(self, exc: BaseException) -> Outcome:
        if isinstance(exc, BigIntInput):
            exc = NeedsPython(str(exc))
        self.builder.raise_(exc)
        return Outcome()

    # ------------------------------------------------------------------ branches
    def branch(self, cond: Value, on_true, on_false, targets: tuple[int, ...]):
        """A jump on a traced bool at the instruction before self.pc. `on_true`/`on_false` set
        the frame up for each side; `targets` are the pcs the sides go to."""
        here = self.pc - 1
        # a traced decision to leave a while loop being unrolled makes it a loop op: the
        # outermost one it may leave (its sides never meet inside that loop again)
        left = self.graph.loops_left(here, targets)
        for loop in left:
            if loop.header_pc in self.active_headers and loop.header_pc not in self.building:
                raise RestartLoop(loop.header_pc)
        join = self.graph.join_point(here)
        stops = self.stops | {join} if join is not None else self.stops
        if not left or left[-1].header_pc in stops:
            return self.fork(cond, [on_true, on_false], stops)
        # a loop that unrolls: the sides that go on with it (several, with and/or) meet at its
        # next iteration, which runs once for all of them, up to the join
        header = left[-1].header_pc
        outcome = self.fork(cond, [on_true, on_false], stops | {header})
        if header not in outcome.places or len(outcome.places) == 1:
            return outcome
        return self._run_place(outcome, header, stops)

    def fork(self, cond: Value, setups, stops) -> Outcome:
        self.tracer.forks += 1
        if self.tracer.forks > MAX_FORKS:
            raise UnsupportedError(f"the function's branches fork into too many paths (over {MAX_FORKS}) to trace",
                                   self.builder.loc)
        base = self.save()
        sides = []
        for setup in setups:
            self.restore(base)
            self.stack = [copy_iterator(x) if is_copyable_iterator(x) else x for x in self.stack]
            self.locals = {n: copy_iterator(x) if is_copyable_iterator(x) else x for n, x in self.locals.items()}
            block = Block()
            sides.append((block, self.run_side(block, stops, setup=setup)))
        return self.merge(cond, sides)

    def merge(self, cond: Value, sides: list[tuple[Block, Outcome]]) -> Outcome:
        """One `if` op from two finished sides; the merged Outcome."""
        b = self.builder
        places = []
        for _, o in sides:
            places += [p for p in o.places if p not in places]
        inner = ir.defined_in([block for block, _ in sides])
        layouts = {p: self._state_layout(p, [self._trim(p, o.states[p]) for _, o in sides if p in o.states], inner)
                   for p in places}
        # which place: a constant per side is chosen by the condition itself (a select);
        # a side that can end in several places yields its own selector
        several = len(places) > 1
        chosen = several and all(len(o.places) <= 1 for _, o in sides)
        yields_selector = several and not chosen
        types = [I64] * yields_selector + [t for p in places for t in self._state_types(layouts[p])]
        for block, o in sides:
            with b.region(block):
                if not o.places:           # every path of this side raises
                    block.results = [b.const(0)] * yields_selector + [x for p in places for x in self._zeros_state(layouts[p])]
                    continue
                leaves = []
                if yields_selector:
                    leaves.append(o.selector if len(o.places) > 1 else b.const(o.places[0]))
                for p in places:
                    leaves += (self._flatten_state(layouts[p], self._trim(p, o.states[p])) if p in o.states
                               else self._zeros_state(layouts[p]))
                block.results = leaves
        op = b.append(Value("if", (cond,), TupleType(tuple(types)), loc=b.loc))
        op.regions = [block for block, _ in sides]
        items = [b.emit("getitem", (op,), index=i) for i in range(len(types))]
        out = Outcome()
        if yields_selector:
            out.selector = items.pop(0)
        elif chosen:
            then_place, else_place = (o.places[0] if o.places else places[0] for _, o in sides)
            out.selector = b.emit("select", (cond, b.const(then_place), b.const(else_place)))
        for p in places:
            out.states[p] = self._rebuild_state(p, layouts[p], items)
        return out

    def settle(self, outcome: Outcome):
        """Continue an outcome's places that are not stops of this run. None: the frame goes on
        at one place (state restored); else the Outcome this run ends with."""
        pending = [p for p in outcome.places if p != RETURN and p not in self.stops]
        if not pending:
            if outcome.places == [RETURN]:    # the instances' attributes as they are at the return
                instances.restore_heap(self.tracer, outcome.states[RETURN].heap)
            return outcome
        if len(outcome.places) == 1:
            self.restore(outcome.states[pending[0]])
            return None
        # where the places' paths meet (a loop's break and its end): each runs up to there,
        # and what follows runs once for all of them
        join = self.graph.common_join(pending)
        place = next((p for p in pending if p != join), pending[0])
        stops = self.stops | {join} if join is not None and join != place else self.stops
        return self.settle(self._run_place(outcome, place, stops))

    def _run_place(self, outcome: Outcome, place, stops) -> Outcome:
        """Run on from `place` of `outcome` until `stops`, when the selector says so; the
        outcome's other places stay as they are."""
        here = self.builder.compare("eq", outcome.selector, place)
        rest = Outcome({p: s for p, s in outcome.states.items() if p != place},
                       outcome.selector if len(outcome.places) > 2 else None)
        then_block = Block()
        self.restore(outcome.states[place])
        then_outcome = self.run_side(then_block, stops)
        return self.merge(here, [(then_block, then_outcome), (Block(), rest)])

    # ------------------------------------------------------------------ loops
    def _keep_numpy_scalars(self, params: list, initial: list) -> None:
        """A carried number that enters the loop a NumPy scalar (`r = a.sum()`, then `r += x`
        in the loop) stays one: its arithmetic warns as NumPy's does (numpy_scalars)."""
        for param, value in zip(params, initial):
            if is_traced(value) and value.type in (F64, F32) and made_by_numpy(self.tracer, value):
                self.tracer.numpy_scalars.add(param)

    def build_loop(self):
        """Build a `loop` op for the loop whose header is at self.pc (the frame is there)."""
        h = self.pc
        self.loop_allowed(h)
        loop = self.graph.header_pcs[h]
        exits = frozenset(self.graph.exit_pcs(loop))
        stops = self.stops | exits | {h}
        b = self.builder
        init = self._trim(h, self.save())
        layout = self._state_layout(h, [init])            # nothing carried yet
        self.building.add(h)
        try:
            for _ in range(MAX_LOOP_ATTEMPTS):
                body = Block()
                with b.region(body):
                    params = [b.block_param(body, t) for t in self._state_types(layout)]
                self._keep_numpy_scalars(params, self._flatten_state(layout, init))
                state_in = self._rebuild_state(h, layout, list(params))
                self.restore(state_in)
                outcome = self.run_side(body, stops, skip_first=True)
                cont = outcome.states.get(h)
                if cont is None:
                    break
                try:
                    new = self._state_layout(h, [init, self._trim(h, cont), state_in])
                except MergeError:
                    raise _Peel() from None
                if new == layout:
                    break
                layout = new
            else:
                raise UnsupportedError("could not find the loop's carried values", b.loc)
        except _Peel:
            self.building.discard(h)
            return self._peel(h, init)
        finally:
            self.building.discard(h)
        self.peel_counts.pop(h, None)
        parallel = self.instrs[h].name == "FOR_ITER" and isinstance(init.stack[-1], ParallelRangeIter)
        return self._finish_loop(h, init, layout, body, outcome, parallel)

    def _peel(self, h, init):
        count = self.peel_counts.get(h, 0) + 1
        if count > MAX_PEELS:
            raise UnsupportedError("a variable changes type from one iteration of this loop to the next",
                                   self.builder.loc)
        self.peel_counts[h] = count
        self.restore(init)
        if self.instrs[h].name == "FOR_ITER":
            self.pc = h + 1
            return self.branch_for_iter(force_fork=True)
        # a while loop: its first iteration runs here, every traced branch in it forking, up to
        # the header (where the loop is built, with the types that iteration left) or an exit
        self.building.add(h)
        try:
            return self.run_until(self.stops | frozenset(self.graph.exit_pcs(self.graph.header_pcs[h])) | {h},
                                  skip_first=True)
        finally:
            self.building.discard(h)

    def _finish_loop(self, h, init, layout, body: Block, outcome: Outcome, parallel: bool = False):
        b = self.builder
        exits = [p for p in outcome.places if p != h]
        inner = ir.defined_in([body])
        exit_layouts = {p: self._state_layout(p, [self._trim(p, outcome.states[p])], inner) for p in exits}
        n_carried = len(body.params)
        extra_types = ([I64] if len(exits) > 1 else []) + [t for p in exits for t in self._state_types(exit_layouts[p])]
        with b.region(body):
            for t in extra_types:
                b.block_param(body, t)
            if outcome.places:
                if len(outcome.places) > 1:
                    go = b.compare("eq", outcome.selector, h)
                else:
                    go = b.const(outcome.places[0] == h) if outcome.places else b.const(False)
                cont = outcome.states.get(h)
                leaves = self._flatten_state(layout, self._trim(h, cont)) if cont else self._zeros_state(layout)
                if len(exits) > 1:
                    leaves.append(outcome.selector if len(outcome.places) > 1 else b.const(exits[0]))
                for p in exits:
                    s = outcome.states.get(p)
                    leaves += self._flatten_state(exit_layouts[p], self._trim(p, s)) if s else self._zeros_state(exit_layouts[p])
                body.results = [go] + leaves
            else:
                body.results = [b.const(False)] + [zero_value(b, p.type) for p in body.params]
        inits = self._flatten_state(layout, init) + [zero_value(b, t) for t in extra_types]
        types = [p.type for p in body.params]
        header_line = self.instrs[h].lineno or self.lineno      # the loop's `for`/`while` line
        op = b.append(Value("loop", tuple(inits), TupleType(tuple(types)),
                            loc=SourceLoc(self.code.co_filename, header_line)))
        op.regions = [body]
        if parallel:                   # a `for` over tracer.prange (codegen.prange)
            op.attrs["parallel"] = True
        items = [b.emit("getitem", (op,), index=i) for i in range(len(types))][n_carried:]
        out = Outcome()
        if len(exits) > 1:
            out.selector = items.pop(0)
        for p in exits:
            out.states[p] = self._rebuild_state(p, exit_layouts[p], items)
        return out                     # no exits: the loop never ends (or always raises)

