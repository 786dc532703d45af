"""Opcode handlers: jumps, loops, generators, assert.

A condition known at trace time is simply followed (an `if` on a constant takes one side, a loop
over a short constant range unrolls). A condition on a traced value forks the frame
(`tracer.frontend.branches`): both sides are compiled into an `if`. A `for` over a range with traced
bounds, or over a constant range longer than `iteration.UNROLL_LIMIT`, becomes a `loop` op.
"""
from __future__ import annotations

import sys

from bytecode import Instr

from tracer.errors import BigIntInput, NeedsConcreteValue, UnsupportedError
from tracer.frontend import arrays, dicts, dynlists, gathered
from tracer.frontend.branches import unrolled_instead
from tracer.frontend.builder import is_traced
from tracer.frontend.generators import SUM_LOCAL
from tracer.frontend.iteration import (
    AUTODIFF_UNROLL_LIMIT,
    UNROLL_LIMIT,
    ListChanged,
    ParallelRange,
    ParallelRangeIter,
    RangeIter,
)
from tracer.frontend.objects import (
    BoundMethod,
    ExternalList,
    ExternalObject,
    MaybeNone,
    SymbolicFunction,
    SymbolicRange,
    TracedArray,
)
from tracer.frontend.opcodes.containers import type_name
from tracer.frontend.opcodes.exceptions import next_instruction
from tracer.frontend.states import block_mark, cut_block, diverged_error

PY313 = sys.version_info >= (3, 13)
GROWN_UNROLL_LIMIT = 64    # a longer loop that appends to a list is compiled with a list of run-time length



class ControlFlowOps:
    def _jump_on(self, value, when: bool, label, pop: bool = True):
        """Jump to `label` if bool(value) == when. `pop`: the value leaves the stack on both
        sides (POP_JUMP_IF_*); else it stays on the jumping side only (JUMP_IF_*_OR_POP)."""
        truth = self.truth_of(value)
        if is_traced(truth) and self.tracer.unroll_loops and self.builder.must_be_concrete(truth):
            # traced for autodiff: a decision made by int arguments only is pinned, so loops
            # it controls unroll (as loops over their ranges do; a compiled loop needs a tape)
            truth = self.builder.concretize(truth, "this branch condition")
        target = self.labels[label]
        if not is_traced(truth):
            if pop:
                self.pop()
            if truth == when:
                self.jump(label)
            elif not pop:
                self.pop()
            return None
        if pop:
            self.pop()
        def jump():
            self.pc = target
        def fall_through():
            if not pop:
                self.pop()
        sides = (jump, fall_through) if when else (fall_through, jump)
        return self.branch(truth, *sides, targets=(target, self.pc))

    def _pop_jump_none(self, instr, when: bool):
        value = self.stack[-1]
        if isinstance(value, MaybeNone):          # None on some paths: a traced test
            return self._jump_on(self.builder.logical_not(value.present), when, instr.arg)
        if (self.pop() is None) == when:
            self.jump(instr.arg)

    def op_POP_JUMP_IF_TRUE(self, instr): return self._jump_on(self.stack[-1], True, instr.arg)
    def op_POP_JUMP_IF_FALSE(self, instr): return self._jump_on(self.stack[-1], False, instr.arg)
    def op_POP_JUMP_IF_NONE(self, instr): return self._pop_jump_none(instr, True)
    def op_POP_JUMP_IF_NOT_NONE(self, instr): return self._pop_jump_none(instr, False)
    op_POP_JUMP_FORWARD_IF_TRUE = op_POP_JUMP_BACKWARD_IF_TRUE = op_POP_JUMP_IF_TRUE
    op_POP_JUMP_FORWARD_IF_FALSE = op_POP_JUMP_BACKWARD_IF_FALSE = op_POP_JUMP_IF_FALSE
    op_POP_JUMP_FORWARD_IF_NONE = op_POP_JUMP_BACKWARD_IF_NONE = op_POP_JUMP_IF_NONE
    op_POP_JUMP_FORWARD_IF_NOT_NONE = op_POP_JUMP_BACKWARD_IF_NOT_NONE = op_POP_JUMP_IF_NOT_NONE

    def op_JUMP_IF_TRUE_OR_POP(self, instr):    # 3.11 `or`
        return self._jump_on(self.stack[-1], True, instr.arg, pop=False)

    def op_JUMP_IF_FALSE_OR_POP(self, instr):   # 3.11 `and`
        return self._jump_on(self.stack[-1], False, instr.arg, pop=False)

    def op_JUMP_FORWARD(self, instr):
        self.jump(instr.arg)

    op_JUMP_BACKWARD = op_JUMP_BACKWARD_NO_INTERRUPT = op_JUMP = op_JUMP_NO_INTERRUPT = op_JUMP_FORWARD

    # -- loops
    def op_GET_ITER(self, instr):
        iterable = self.pop()
        if is_traced(iterable):
            raise TypeError(f"'{type_name(iterable)}' object is not iterable")
        if isinstance(iterable, (range, SymbolicRange)):
            self.push(self.range_iterator(iterable))
        elif isinstance(iterable, TracedArray):
            self.push(arrays.iterate(self.tracer, iterable))
        elif isinstance(iterable, RangeIter):
            self.push(iterable)                           # zip() of long lists is its own iterator
        elif isinstance(iterable, dynlists.DynList):
            self.push(dynlists.iterate(self.tracer, iterable))
        elif isinstance(iterable, dicts.DynSet):
            dicts.not_iterable(self.tracer, iterable)
        elif isinstance(iterable, dicts.DynDict):
            self.push(dicts.iterate(self.tracer, iterable))
        elif (it := gathered.iterator_of(self.tracer, iterable)) is not None:
            self.push(it)                                 # a long list held in an array
        elif isinstance(iterable, (ExternalList, ExternalObject, BoundMethod, SymbolicFunction)):
            self.push(iter(self.materialize(iterable)))   # an input list's items, loaded per call
        else:
            # Python's own iterator: a list built in the trace is iterated live (items appended
            # in the loop are seen), an iterator (zip, a generator) is its own
            self.push(iter(iterable))

    def range_iterator(self, r):
        """A Python iterator over the range (its loop unrolls) or a RangeIter (a compiled loop).

        Unrolled: short constant ranges; every range in a generator (its loop yields, which a
        compiled loop cannot); and, traced for autodiff, ranges known at trace time up to
        AUTODIFF_UNROLL_LIMIT (an unrolled gradient needs no tape and can be differentiated
        again). Unrolling a range with traced bounds pins them."""
        symbolic = isinstance(r, SymbolicRange)
        if self.is_generator:
            return iter(r.concrete() if symbolic else r)
        if self.tracer.unroll_loops and (not symbolic or all(self.builder.must_be_concrete(a) for a in r.args)):
            r = r.concrete() if symbolic else r
            symbolic = False
            if len(r) <= AUTODIFF_UNROLL_LIMIT:
                return iter(r)
        elif not symbolic and len(r) <= UNROLL_LIMIT:
            return iter(r)
        if isinstance(r, ParallelRange):      # tracer.prange: a loop marked parallel
            start = r.args[0]
            return ParallelRangeIter(*r.args, start if is_traced(start) else self.builder.const(start))
        if symbolic:
            return RangeIter(*r.args, r.args[0])
        return RangeIter(r.start, r.stop, r.step, self.builder.const(r.start))

    def op_FOR_ITER(self, instr):
        iterator = self.stack[-1]
        if isinstance(iterator, RangeIter):
            return self.branch_for_iter()
        if (error := diverged_error(self.builder, iterator)) is not None:
            raise error
        try:
            self.push(next(iterator))
        except StopIteration:
            self.pop()
            self.pc = self.graph.for_iter_exit(self.labels[instr.arg])

    def branch_for_iter(self, force_fork: bool = False):
        """FOR_ITER over a RangeIter (the frame's pc is just past it): a loop is built here,
        unless this is the header test of the loop being built (or an iteration being peeled)."""
        here = self.pc - 1
        it = self.stack[-1]
        more = it.has_next(self.builder, fold=force_fork)
        instr = self.instrs[here]
        exit_pc = self.graph.for_iter_exit(self.labels[instr.arg])
        def advance():
            self.stack[-1] = it.advanced(self.builder)
            self.push(it.index if it.array is None else gathered.element_at(self.tracer, it.array, it.index))
        def leave():
            self.pop()
            self.pc = exit_pc
            top = self.stack[-1] if self.stack else None
            if isinstance(top, gathered.ListView) and top.buffer is not None:
                self.stack[-1] = top.finish(self.tracer)    # a compiled comprehension is done
        if not is_traced(more):
            (advance if more else leave)()
            return None
        if here in self.building or force_fork:
            return self.fork(more, [advance, leave], self.stops | {exit_pc})
        if here not in self.graph.header_pcs:  # no way back to it (the body always breaks or
            return self.branch(more, advance, leave, targets=(self.pc, exit_pc))   # returns): an if
        self.pc = here
        if self.is_generator:                  # a loop that yields cannot be compiled: unroll
            return self._unroll_range(it, instr)
        state, block = self.save(), self.builder.block
        mark = block_mark(block)
        over_list = it.array is not None and not gathered.over_arrays(it.array)
        try:
            self._fill_comprehension(it, here)
            return self.build_loop()
        except (NeedsConcreteValue, ListChanged, UnsupportedError) as exc:
            # the body needs the loop counter at trace time (to index a list) or appends to a
            # list: unroll instead, if the bounds can be known (they depend only on int
            # arguments, which are pinned). A loop over a long Python list also unrolls when
            # it cannot be a loop op for another reason (as it did before lists were gathered).
            retryable = isinstance(exc, (NeedsConcreteValue, ListChanged)) or over_list
            if isinstance(exc, BigIntInput) or not retryable or it.stop is None or getattr(exc, "final", False):
                raise               # (stop None: a DynList's loop; final: a dict or set the next trace holds)
            self.restore(state)
            cut_block(block, mark)               # (a peeled first iteration, if any)
            b = self.builder
            if gathered.over_arrays(it.array) or not all(b.must_be_concrete(x) for x in it.fields()[:4]):
                raise
            if getattr(exc, "grown", None) and len(range(*(b.concretize(x, "the range of a loop")
                                                          for x in (it.index, it.stop, it.step)))) > GROWN_UNROLL_LIMIT:
                raise          # a long loop that changes a list's length: the next trace holds the list
            unrolled_instead(self.tracer, exc)
            return self._unroll_range(it, instr)

    def _unroll_range(self, it, instr):
        """Go on with a Python iterator over the range's values (pinned at trace time), or over
        the items of a list held in an array."""
        b = self.builder
        start, stop, step, index = (b.concretize(x, "the range of a loop") for x in it.fields()[:4])
        if it.array is None:
            self.stack[-1] = iter(range(index, stop, step))
        elif gathered.over_arrays(it.array):
            raise self.tracer.error("a loop over an array inside a generator is not supported")
        else:
            self.stack[-1] = it.array.unrolled(self.tracer, index)
        self.pc += 1
        return self.op_FOR_ITER(instr)

    # -- a list comprehension over a long list or range compiles to a loop that fills an array
    def _fill_comprehension(self, it, here: int) -> None:
        """If the loop at `here` is a list comprehension's, with a trip count known at trace time,
        its (empty) list becomes a ListView the loop fills (LIST_APPEND stores item i at i)."""
        b = self.builder
        if it.stop is None:            # a loop over a list of run-time length: no trip count
            return
        if not self.tracer.gather_lists or not all(not is_traced(x) for x in it.fields()[:3]) \
                or is_traced(it.index) and it.index.op != "const":
            return
        names = [(x.name, x.arg) for x in self.instrs[max(0, here - 4):here] if isinstance(x, Instr)]
        listcomp_311 = names[-2:] == [("BUILD_LIST", 0), ("LOAD_FAST", ".0")]
        listcomp_312 = names[-2:] == [("BUILD_LIST", 0), ("SWAP", 2)]
        if not (listcomp_311 or listcomp_312) or len(self.stack) < 2:
            return
        lst = self.stack[-2]
        if type(lst) is not list or lst:
            return
        start = it.index.attrs["value"] if is_traced(it.index) else it.index
        n = len(range(start, it.stop, it.step))
        self.stack[-2] = gathered.ListView(self.tracer, None, n, gathered.Buffer(n), b.const(0), built=True)
        self.tracer.gathered_lists = True

    def op_END_FOR(self, instr):
        # reached only by falling through, which CPython's loops never do; keep the stack honest
        self.pop()
        if not PY313:
            self.pop()

    # -- generators (generator expressions run eagerly: their values are all known at trace time)
    def op_RETURN_GENERATOR(self, instr):
        self.push(None)

    def op_YIELD_VALUE(self, instr):
        if self.sink is not None:              # consumed by sum(): fold the value in, go on
            self.locals[SUM_LOCAL] = self.sink(self.locals[SUM_LOCAL], self.tracer, self.pop())
            self.push(None)
            return
        self.yielded.append(self.pop())
        self.push(None)

    def op_CALL_INTRINSIC_1(self, instr):
        # `bytecode` gives an Intrinsic1Op IntEnum, whose str() is just its number: use its name
        name = getattr(instr.arg, "name", None) or str(instr.arg).rsplit(".", 1)[-1].split(":")[0].strip("<> ")
        value = self.pop()
        if "LIST_TO_TUPLE" in name:
            self.push(tuple(value))
        elif "UNARY_POSITIVE" in name:
            self.push(self.unary_positive(value))
        else:
            raise self.tracer.error(f"the intrinsic {name} is not supported")

    # -- assert (raise, try and with: tracer.frontend.opcodes.exceptions)
    def op_LOAD_ASSERTION_ERROR(self, instr):
        self.push(AssertionError)

    def next_instruction(self, pc: int) -> int:
        """The index of the first instruction at or after `pc` (past labels and markers)."""
        return next_instruction(self.instrs, pc)
