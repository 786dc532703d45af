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
growing), and yields whether to go on, the next values, and the state at each exit. A while loop is noticed only when its exit test turns out to be traced, in the
middle of an iteration: the frame then rolls back to its last arrival at the loop header (a
checkpoint) and builds the loop from there. A loop whose carried types change on the first
iteration (`acc = 0` then `acc += x`) has that iteration peeled off first.

Variables bound on only some paths become `MaybeUnbound` (a value and a traced "is bound" flag):
reading one checks the flag and raises UnboundLocalError where CPython would.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

from bytecode import Instr

from tracer import ir
from tracer.errors import BigIntInput, InternalError, SourceLoc, TracerError, UnsupportedError, is_internal
from tracer.frontend.builder import NeedsPython, is_number, is_traced
from tracer.frontend.generators import SUM_LOCAL
from tracer.frontend.iteration import AUTODIFF_UNROLL_LIMIT, UNROLL_LIMIT, ListChanged
from tracer.frontend.objects import NULL
from tracer.ir import BOOL, F64, I64, Block, TupleType, Value

RETURN = -1                 # the place of a returning outcome (pcs are >= 0)
MAX_PEELS = 2               # iterations peeled off a loop before its carried types must settle
MAX_LOOP_ATTEMPTS = 50      # the carried set grows on each attempt; it is bounded by the state


class RestartLoop(Exception):
    """A traced exit test of a loop being unrolled: roll back to its header and build a loop."""

    def __init__(self, header: int):
        self.header = header


class _Peel(Exception):
    """The carried values change type in the first iteration: peel it off."""


class MergeError(UnsupportedError):
    pass


# ------------------------------------------------------------------------------ symbolic objects
@dataclass(frozen=True, eq=False)
class MaybeUnbound:
    """A local bound on some paths only: `value` where `bound` (a traced bool) holds."""
    bound: Value
    value: object


# ------------------------------------------------------------------------------ frame states
@dataclass
class FrameState:
    pc: int | None
    stack: tuple
    locals: dict
    cells: dict                     # name -> contents (the Cell objects stay the frame's)
    return_value: object = NULL


@dataclass(frozen=True)
class StateLayout:
    """How frame states merge at one place: `layout` (see `layout_of`) of the value
    (stack, locals in `names` order, cells in `cells` order); names is None at a return."""
    names: tuple | None
    cells: tuple
    layout: object


@dataclass
class Outcome:
    """Where a run may continue: a state per place, and which place (traced) if several."""
    states: dict = field(default_factory=dict)        # place (pc or RETURN) -> FrameState
    selector: Value | None = None

    @property
    def places(self) -> list:
        return list(self.states)

    @classmethod
    def at(cls, place, state) -> Outcome:
        return cls({place: state})


# ------------------------------------------------------------------------------ layouts
@dataclass(frozen=True)
class Same:
    value: object


@dataclass(frozen=True)
class Slot:
    type: object


@dataclass(frozen=True)
class Many:
    kind: type                   # tuple or RangeIter
    parts: tuple


@dataclass(frozen=True)
class Maybe:
    inner: object


def _const_key(x):
    return (type(x), struct.pack("<d", x)) if isinstance(x, float) else (type(x), x)


def _numeric(x) -> bool:
    return is_traced(x) or (is_number(x))


TYPE_NAMES = {F64: "a float", I64: "an int", BOOL: "a bool"}


class _Everything:
    def __contains__(self, x):
        return True


ALL = _Everything()



def layout_of(values: list, what: str, b, force=frozenset()):
    """How to merge `values` (one per side): Same, a traced Slot, a Many of parts, or Maybe-bound.
    Traced values in `force` (those defined inside the regions) always get a slot."""
    first = values[0]
    if all(v is first for v in values) and not isinstance(first, (MaybeUnbound, tuple)) \
            and not getattr(type(first), "carried", False) and not (is_traced(first) and first in force):
        return Same(first)
    if _is_copyable_iterator(first) and all(type(v) is type(first) and v.__reduce__() == first.__reduce__()
                                             for v in values):
        return Same(first)          # copies of one iterator (each side got its own), not advanced
    if any(v is NULL or isinstance(v, MaybeUnbound) for v in values):
        inner = [v.value if isinstance(v, MaybeUnbound) else v for v in values if v is not NULL]
        return Maybe(layout_of(inner, what, b, force=ALL))
    if all(_numeric(v) for v in values):
        kinds = {b.kind(v) for v in values}
        if len(kinds) > 1:
            raise MergeError(f"{what} is {' on one path and '.join(TYPE_NAMES[k] for k in sorted(kinds, key=str))} "
                             f"on another; compiled code needs one type (convert it, e.g. with float())", b.loc)
        if force is not ALL and not any(is_traced(v) for v in values) and len({_const_key(v) for v in values}) == 1:
            return Same(first)
        return Slot(kinds.pop())
    if all(type(v) is tuple for v in values) and len({len(v) for v in values}) == 1:
        return Many(tuple, tuple(layout_of(list(col), f"{what}[{i}]", b, force)
                                 for i, col in enumerate(zip(*values))))
    if getattr(type(first), "carried", False) and all(type(v) is type(first) for v in values):
        # an object the interpreter rebuilds from its fields (a range being iterated, a list
        # held in an array, a running sum): its fields merge
        return Many(type(first), tuple(layout_of(list(col), f"{what} (a {type(first).__name__})", b, force)
                                       for col in zip(*(v.fields() for v in values))))
    kinds = ", ".join(sorted({_describe(v) for v in values}))
    raise MergeError(f"{what} differs between paths of a data-dependent branch or loop ({kinds}); "
                     f"only numbers and tuples of numbers can differ", b.loc)


ITERATOR_TYPES = {type(iter([])), type(iter(())), type(iter(range(1))), type(reversed([]))}


def _is_copyable_iterator(x) -> bool:
    return type(x) in ITERATOR_TYPES


def _copy_iterator(x):
    """A fresh iterator at the same position (each side of a fork advances its own)."""
    fn, args, *state = x.__reduce__()
    it = fn(*args)
    if state and state[0] is not None:
        it.__setstate__(state[0])
    return it


def _describe(v) -> str:
    if is_traced(v):
        return TYPE_NAMES.get(v.type, str(v.type))
    if v is NULL:
        return "unbound"
    return type(v).__name__


def layout_types(layout) -> list:
    if isinstance(layout, Slot):
        return [layout.type]
    if isinstance(layout, Many):
        return [t for p in layout.parts for t in layout_types(p)]
    if isinstance(layout, Maybe):
        return [BOOL] + layout_types(layout.inner)
    return []


def flatten(layout, value, b) -> list[Value]:
    """The traced leaves of `value` under `layout` (constants become const ops)."""
    if isinstance(layout, Same):
        return []
    if isinstance(layout, Slot):
        return [b.convert(value, layout.type) if not is_traced(value) else value]
    if isinstance(layout, Many):
        fields = value if layout.kind is tuple else value.fields()
        return [x for p, f in zip(layout.parts, fields) for x in flatten(p, f, b)]
    if value is NULL:
        return [b.const(False)] + zeros(layout.inner, b)
    if isinstance(value, MaybeUnbound):
        return [value.bound] + flatten(layout.inner, value.value, b)
    return [b.const(True)] + flatten(layout.inner, value, b)


def zeros(layout, b) -> list[Value]:
    return [b.const(ir.zero(t)) for t in layout_types(layout)]


def rebuild(layout, leaves: list):
    """The value of `layout` from its leaves (consumed from the front)."""
    if isinstance(layout, Same):
        return layout.value
    if isinstance(layout, Slot):
        return leaves.pop(0)
    if isinstance(layout, Many):
        parts = [rebuild(p, leaves) for p in layout.parts]
        return tuple(parts) if layout.kind is tuple else layout.kind(*parts)
    bound = leaves.pop(0)
    value = rebuild(layout.inner, leaves)
    if bound.op == "const":
        return value if bound.attrs["value"] else NULL
    return MaybeUnbound(bound, value)


# ------------------------------------------------------------------------------ mutable objects
def _mutable_snapshot(objects) -> list:
    """(object, contents) for the lists and iterators reachable from `objects`: a side that
    changes one would change it for the other side too, which compiled code cannot mirror."""
    out, seen, stack = [], set(), list(objects)
    while stack:
        x = stack.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        if type(x) is list:
            out.append((x, list(x)))
            stack.extend(x)
        elif type(x) is tuple:
            stack.extend(x)
    return out


def _changed(snapshot) -> bool:
    for obj, contents in snapshot:
        now = list(obj)
        if len(now) != len(contents) or any(a is not c and a != c for a, c in zip(now, contents)):
            return True
    return False


class Branching:
    """Mixin for SymbolicFrame: forks, merges, loops (see the module docstring)."""

    # ------------------------------------------------------------------ state
    def save(self) -> FrameState:
        return FrameState(self.pc, tuple(self.stack), dict(self.locals),
                          {n: c.contents for n, c in self.cells.items()}, self.return_value)

    def restore(self, s: FrameState) -> None:
        self.pc = s.pc if s.pc is not None else self.pc
        self.stack = list(s.stack)
        self.locals = dict(s.locals)
        for n, contents in s.cells.items():
            self.cells[n].contents = contents
        self.return_value = s.return_value

    def _trim(self, place, s: FrameState) -> FrameState:
        """Drop the locals nothing reads from `place` on (they need no merging)."""
        if place == RETURN:
            return s
        live = self.graph.live_locals(place)
        return FrameState(s.pc, s.stack, {n: v for n, v in s.locals.items() if n in live or n == SUM_LOCAL},
                          s.cells, s.return_value)

    def _state_layout(self, place, states: list[FrameState], force=frozenset()) -> StateLayout:
        """How the states reaching `place` merge (traced values in `force` always get a slot)."""
        b = self.builder
        if place == RETURN:
            return StateLayout(None, (), layout_of([s.return_value for s in states], "the return value", b, force))
        depth = {len(s.stack) for s in states}
        if len(depth) != 1:
            raise UnsupportedError("paths of a branch meet with different stack depths", b.loc)
        names = tuple(sorted(set().union(*(s.locals for s in states))))
        cells = tuple(sorted(states[0].cells))
        def part(values, what):
            return layout_of(values, what, b, force)
        stack = Many(tuple, tuple(part([s.stack[i] for s in states], f"stack slot {i}") for i in range(depth.pop())))
        local = Many(tuple, tuple(part([s.locals.get(n, NULL) for s in states], f"variable '{n}'") for n in names))
        cell = Many(tuple, tuple(part([s.cells[n] for s in states], f"closure variable '{n}'") for n in cells))
        return StateLayout(names, cells, Many(tuple, (stack, local, cell)))

    @staticmethod
    def _as_value(sl: StateLayout, s: FrameState):
        """A state as the value `sl.layout` describes: (stack, locals by name, cells by name)."""
        if sl.names is None:
            return s.return_value
        return (s.stack, tuple(s.locals.get(n, NULL) for n in sl.names), tuple(s.cells[n] for n in sl.cells))

    def _flatten_state(self, sl: StateLayout, s: FrameState) -> list:
        return flatten(sl.layout, self._as_value(sl, s), self.builder)

    def _zeros_state(self, sl: StateLayout) -> list:
        return zeros(sl.layout, self.builder)

    @staticmethod
    def _state_types(sl: StateLayout) -> list:
        return layout_types(sl.layout)

    @staticmethod
    def _rebuild_state(place, sl: StateLayout, leaves: list) -> FrameState:
        value = rebuild(sl.layout, leaves)
        if sl.names is None:
            return FrameState(None, (), {}, {}, value)
        stack, local, cells = value
        return FrameState(place, stack, {n: v for n, v in zip(sl.names, local) if v is not NULL},
                          dict(zip(sl.cells, cells)))

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
                result = None
                if isinstance(instr, Instr):
                    if self.pc in stops and not first:
                        return Outcome.at(self.pc, self.save())
                    first = False
                    if self.pc in self.graph.header_pcs and instr.name != "FOR_ITER" and self.pc not in self.building:
                        if self.pc not in checkpoints:
                            self.active_headers[self.pc] = self.active_headers.get(self.pc, 0) + 1
                        checkpoints[self.pc] = (self.builder.block, len(self.builder.block.values), self.save())
                        result = self._unrolled_too_long(entries, previous)
                    previous = self.pc
                try:
                    if result is None:
                        result = self.step_instruction()
                except RestartLoop as restart:
                    if checkpoints.get(restart.header) is None:
                        raise
                    block, size, state = checkpoints[restart.header]
                    checkpoints[restart.header] = None
                    assert block is self.builder.block
                    del block.values[size:]
                    self.restore(state)
                    result = self.build_loop()
                if isinstance(result, Outcome):
                    settled = self.settle(result)
                    if settled is not None:
                        return settled
        finally:
            self.stops = outer_stops
            for h in checkpoints:
                self.active_headers[h] -= 1
                if not self.active_headers[h]:
                    del self.active_headers[h]

    def _unrolled_too_long(self, entries: dict, previous: int | None):
        """At a while loop's header whose exit test has been known at trace time so far: after
        more than UNROLL_LIMIT iterations (AUTODIFF_UNROLL_LIMIT traced for autodiff), roll back
        to the loop's entry and build it as a loop op, the numbers that change between
        iterations becoming carried values. The Outcome of the loop, or None to go on unrolling
        (also when the body needs those numbers at trace time, e.g. as list indexes)."""
        h = self.pc
        loop = self.graph.header_pcs[h]
        if previous is None or self.graph.block_at[previous] not in loop.blocks:
            entries[h] = [0, (self.builder.block, len(self.builder.block.values), self.save())]
            return None
        count = entries[h][0] = entries[h][0] + 1
        limit = AUTODIFF_UNROLL_LIMIT if self.tracer.unroll_loops else UNROLL_LIMIT
        if count <= limit or self.is_generator or h in self.unrolled_headers:
            return None
        block, size, state = entries[h][1]
        if block is not self.builder.block:
            return None
        here, unrolled = self.save(), block.values[size:]
        del block.values[size:]
        self.restore(state)
        try:
            return self.build_loop()
        except UnsupportedError:
            self.unrolled_headers.add(h)     # unroll this loop to the end, as before
            del block.values[size:]
            block.values.extend(unrolled)
            self.restore(here)
            return None

    def run_side(self, block: Block, stops: frozenset, skip_first: bool = False, setup=None) -> Outcome:
        """Run into `block` (a region) until `stops`, after `setup()` (which sets the side's
        frame up, emitting into the region: a loop's element read happens only if it goes on);
        a Python exception ends the side with a `raise` op (an Outcome with no places)."""
        snapshot = _mutable_snapshot((tuple(self.stack), tuple(self.locals.values()), tuple(c.contents for c in self.cells.values())))
        with self.builder.region(block):
            try:
                if setup is not None:
                    setup()
                outcome = self.run_until(stops, skip_first)
            except (TracerError, RestartLoop, _Peel) as exc:
                if not isinstance(exc, BigIntInput):
                    raise
                outcome = self._raise(exc)
            except Exception as exc:          # what CPython raises on this path
                if is_internal(exc):
                    raise InternalError(f"internal error in the tracer ({type(exc).__name__}: {exc}); please "
                                        f"report it", self.builder.loc) from exc
                outcome = self._raise(exc)
        if outcome is None:
            raise UnsupportedError("a generator that yields inside a data-dependent branch or loop "
                                   "is not supported", self.builder.loc)
        if _changed(snapshot):
            for obj, contents in snapshot:      # as it was: the caller may run this code again
                obj[:] = contents
            raise ListChanged("a list is changed inside a data-dependent branch or "
                              "loop; compiled code cannot change it on one path only", self.builder.loc)
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
        loop = self.graph.loop_of(here)
        if loop is not None and loop.header_pc in self.active_headers and loop.header_pc not in self.building \
                and any(self.graph.leaves_loop(loop, t) for t in targets):
            if self.peels.get(loop.header_pc, 0) > 0:
                self.peels[loop.header_pc] -= 1
            else:
                raise RestartLoop(loop.header_pc)
        join = self.graph.join_point(here)
        stops = self.stops | {join} if join is not None else self.stops
        return self.fork(cond, [on_true, on_false], stops)

    def fork(self, cond: Value, setups, stops) -> Outcome:
        base = self.save()
        sides = []
        for setup in setups:
            self.restore(base)
            self.stack = [_copy_iterator(x) if _is_copyable_iterator(x) else x for x in self.stack]
            self.locals = {n: _copy_iterator(x) if _is_copyable_iterator(x) else x for n, x in self.locals.items()}
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
            return outcome
        if len(outcome.places) == 1:
            self.restore(outcome.states[pending[0]])
            return None
        place = pending[0]            # run on from `place` when the selector says so
        here = self.builder.compare("eq", outcome.selector, place)
        rest = Outcome({p: s for p, s in outcome.states.items() if p != place},
                       outcome.selector if len(outcome.places) > 2 else None)
        then_block = Block()
        self.restore(outcome.states[place])
        then_outcome = self.run_side(then_block, self.stops)
        return self.settle(self.merge(here, [(then_block, then_outcome), (Block(), rest)]))

    # ------------------------------------------------------------------ loops
    def build_loop(self):
        """Build a `loop` op for the loop whose header is at self.pc (the frame is there)."""
        h = self.pc
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
        return self._finish_loop(h, init, layout, body, outcome)

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
        self.peels[h] = self.peels.get(h, 0) + 1
        return None                       # run on from the header; the exit test forks once

    def _finish_loop(self, h, init, layout, body: Block, outcome: Outcome):
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
                body.results = [b.const(False)] + [b.const(ir.zero(p.type)) for p in body.params]
        inits = self._flatten_state(layout, init) + [b.const(ir.zero(t)) for t in extra_types]
        types = [p.type for p in body.params]
        header_line = self.instrs[h].lineno or self.lineno      # the loop's `for`/`while` line
        op = b.append(Value("loop", tuple(inits), TupleType(tuple(types)),
                            loc=SourceLoc(self.code.co_filename, header_line)))
        op.regions = [body]
        items = [b.emit("getitem", (op,), index=i) for i in range(len(types))][n_carried:]
        out = Outcome()
        if len(exits) > 1:
            out.selector = items.pop(0)
        for p in exits:
            out.states[p] = self._rebuild_state(p, exit_layouts[p], items)
        return out                     # no exits: the loop never ends (or always raises)

