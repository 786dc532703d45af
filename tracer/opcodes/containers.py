"""Opcode handlers: tuples and lists whose length is known at trace time."""
from __future__ import annotations

from ..builder import is_traced
from ..ir import F64
from ..objects import ExternalList


class ContainerOps:
    def materialize(self, x) -> list:
        """The items of a trace-time iterable (an external list's items are loaded per call)."""
        if isinstance(x, ExternalList):
            return x.items()
        if is_traced(x):
            raise self.tracer.error("iterating over a traced number is not possible")
        try:
            return list(x)
        except TypeError:
            raise self.tracer.error(f"iterating over a {type(x).__name__} is not supported") from None

    def subscript(self, container, index):
        if isinstance(index, slice):
            return self.materialize(container)[index] if not isinstance(container, tuple) else container[index]
        index = self.builder.concretize(index, "this index")
        if isinstance(container, ExternalList):
            n = len(container)
            if type(index) not in (int, bool):
                raise TypeError(f"{type(container.obj).__name__} indices must be integers or slices, not {type(index).__name__}")
            if not -n <= index < n:
                raise IndexError(f"{type(container.obj).__name__} index out of range")
            return container.item(index % n if n else index)
        if is_traced(container):
            raise self.tracer.error("subscripting a traced number is not possible")
        return container[index]

    def op_BINARY_SUBSCR(self, instr):
        index = self.pop()
        self.push(self.subscript(self.pop(), index))

    def op_BUILD_SLICE(self, instr):
        parts = [self.builder.concretize(p, "a slice bound") for p in self.popn(instr.arg)]
        self.push(slice(*parts))

    def op_BINARY_SLICE(self, instr):   # 3.12+
        stop = self.builder.concretize(self.pop(), "a slice bound")
        start = self.builder.concretize(self.pop(), "a slice bound")
        self.push(self.subscript(self.pop(), slice(start, stop)))

    def op_STORE_SUBSCR(self, instr):
        index = self.pop()
        container = self.pop()
        value = self.pop()
        if not isinstance(container, list):
            raise self.tracer.error("item assignment is supported only on lists built inside the traced function")
        container[self.builder.concretize(index, "this index")] = value

    def op_BUILD_TUPLE(self, instr):
        self.push(tuple(self.popn(instr.arg)))

    def op_BUILD_LIST(self, instr):
        self.push(list(self.popn(instr.arg)))

    def op_LIST_APPEND(self, instr):
        value = self.pop()
        self.stack[-instr.arg].append(value)

    def op_LIST_EXTEND(self, instr):
        items = self.materialize(self.pop())
        self.stack[-instr.arg].extend(items)

    def op_LIST_TO_TUPLE(self, instr):
        self.push(tuple(self.pop()))

    def op_UNPACK_SEQUENCE(self, instr):
        items = self.materialize(self.pop())
        if len(items) != instr.arg:
            if len(items) > instr.arg:
                raise ValueError(f"too many values to unpack (expected {instr.arg})")
            raise ValueError(f"not enough values to unpack (expected {instr.arg}, got {len(items)})")
        self.push(*reversed(items))

    def op_UNPACK_EX(self, instr):
        before, after = instr.arg & 0xFF, instr.arg >> 8
        items = self.materialize(self.pop())
        middle = list(items[before:len(items) - after])
        self.push(*reversed(items[len(items) - after:]), middle, *reversed(items[:before]))

    def container_binary(self, op, a, b):
        """`+` and `*` on trace-time sequences (concatenation, repetition)."""
        if op == "add":
            if isinstance(a, ExternalList) or isinstance(b, ExternalList):
                return type(a.obj if isinstance(a, ExternalList) else a)(self.materialize(a) + self.materialize(b))
            return a + b
        if op == "mul":
            seq, n = (a, b) if not isinstance(a, (int, float)) and not is_traced(a) else (b, a)
            if is_traced(n) and n.type == F64:   # as Python: a float count is a TypeError, whatever its value
                raise TypeError("can't multiply sequence by non-int of type 'float'")
            n = self.builder.concretize(n, "a repetition count")
            return (self.materialize(seq) if isinstance(seq, ExternalList) else seq) * n
        raise self.tracer.error(f"the operator {op} on sequences is not supported")
