"""Opcode handlers: jumps, loops over trace-time iterables, generators, raise and assert.

Branches are followed concretely: a condition must be known at trace time (`concretize`), so a
loop over `range(3)` unrolls and an `if` on a constant takes one side. A condition on a traced
float is data-dependent control flow, reported as such.
"""
from __future__ import annotations

import sys

from bytecode import Instr

from ..builder import is_traced
from ..objects import BoundMethod, ExternalList, ExternalObject, SymbolicFunction
from .containers import type_name

PY313 = sys.version_info >= (3, 13)


class ControlFlowOps:
    def condition(self, value) -> bool:
        return bool(self.builder.concretize(self.truth_of(value), "this branch condition"))

    def _pop_jump(self, instr, when: bool):
        if self.condition(self.pop()) == when:
            self.jump(instr.arg)

    def _pop_jump_none(self, instr, when: bool):
        if (self.pop() is None) == when:
            self.jump(instr.arg)

    def op_POP_JUMP_IF_TRUE(self, instr): self._pop_jump(instr, True)
    def op_POP_JUMP_IF_FALSE(self, instr): self._pop_jump(instr, False)
    def op_POP_JUMP_IF_NONE(self, instr): self._pop_jump_none(instr, True)
    def op_POP_JUMP_IF_NOT_NONE(self, instr): self._pop_jump_none(instr, False)
    op_POP_JUMP_FORWARD_IF_TRUE = op_POP_JUMP_BACKWARD_IF_TRUE = op_POP_JUMP_IF_TRUE
    op_POP_JUMP_FORWARD_IF_FALSE = op_POP_JUMP_BACKWARD_IF_FALSE = op_POP_JUMP_IF_FALSE
    op_POP_JUMP_FORWARD_IF_NONE = op_POP_JUMP_BACKWARD_IF_NONE = op_POP_JUMP_IF_NONE
    op_POP_JUMP_FORWARD_IF_NOT_NONE = op_POP_JUMP_BACKWARD_IF_NOT_NONE = op_POP_JUMP_IF_NOT_NONE

    def op_JUMP_IF_TRUE_OR_POP(self, instr):    # 3.11 `or`
        if self.condition(self.stack[-1]):
            self.jump(instr.arg)
        else:
            self.pop()

    def op_JUMP_IF_FALSE_OR_POP(self, instr):   # 3.11 `and`
        if not self.condition(self.stack[-1]):
            self.jump(instr.arg)
        else:
            self.pop()

    def op_JUMP_FORWARD(self, instr):
        self.jump(instr.arg)

    op_JUMP_BACKWARD = op_JUMP_BACKWARD_NO_INTERRUPT = op_JUMP = op_JUMP_NO_INTERRUPT = op_JUMP_FORWARD

    # -- loops
    def op_GET_ITER(self, instr):
        iterable = self.pop()
        if is_traced(iterable):
            raise TypeError(f"'{type_name(iterable)}' object is not iterable")
        if isinstance(iterable, (ExternalList, ExternalObject, BoundMethod, SymbolicFunction)):
            self.push(iter(self.materialize(iterable)))   # an input list's items, loaded per call
        else:
            # Python's own iterator: a list built in the trace is iterated live (items appended
            # in the loop are seen), an iterator (zip, a generator) is its own, a range is lazy
            self.push(iter(iterable))

    def op_FOR_ITER(self, instr):
        iterator = self.stack[-1]
        try:
            self.push(next(iterator))
        except StopIteration:
            # CPython pops the iterator and continues after the loop's END_FOR (3.12),
            # or after END_FOR and POP_TOP (3.13); on 3.11 the label is already past the loop.
            self.pop()
            self.jump(instr.arg)
            self._skip("END_FOR")
            if PY313:
                self._skip("POP_TOP")

    def _skip(self, name):
        pc = self.pc
        while not isinstance(self.instrs[pc], Instr):
            pc += 1
        if self.instrs[pc].name == name:
            self.pc = pc + 1

    def op_END_FOR(self, instr):
        # reached only by falling through, which CPython's loops never do; keep the stack honest
        self.pop()
        if not PY313:
            self.pop()

    # -- generators (generator expressions run eagerly: their values are all known at trace time)
    def op_RETURN_GENERATOR(self, instr):
        self.push(None)

    def op_YIELD_VALUE(self, instr):
        self.yielded.append(self.pop())
        self.push(None)

    def op_CALL_INTRINSIC_1(self, instr):
        # `bytecode` gives an Intrinsic1Op IntEnum, whose str() is just its number: use its name
        name = getattr(instr.arg, "name", None) or str(instr.arg).rsplit(".", 1)[-1].split(":")[0].strip("<> ")
        value = self.pop()
        if "LIST_TO_TUPLE" in name:
            self.push(tuple(value))
        elif "UNARY_POSITIVE" in name:
            self.push(self.builder.positive(value))
        else:
            raise self.tracer.error(f"the intrinsic {name} is not supported")

    # -- raise and assert: the exception is raised for real, at trace time, as CPython would
    def op_LOAD_ASSERTION_ERROR(self, instr):
        self.push(AssertionError)

    def op_RAISE_VARARGS(self, instr):
        if instr.arg != 1:
            raise self.tracer.error("re-raising or 'raise ... from' is not supported")
        exc = self.pop()
        raise exc
