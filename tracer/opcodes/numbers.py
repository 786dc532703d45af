"""Opcode handlers: arithmetic, comparisons, truth tests."""
from __future__ import annotations

from bytecode import BinaryOp

from ..builder import BINARY_OPS, is_traced

# Compare enum names; 3.13 adds *_CAST variants (the same comparison, result cast to bool)
COMPARE_OPS = {"LT": "lt", "LE": "le", "GT": "gt", "GE": "ge", "EQ": "eq", "NE": "ne"}


class NumberOps:
    def op_BINARY_OP(self, instr):
        b = self.pop()
        a = self.pop()
        op = BINARY_OPS.get(instr.arg)
        if op is None:
            if isinstance(instr.arg, BinaryOp) and not is_traced(a) and not is_traced(b) and not _symbolic(a, b):
                self.push(_python_binary(instr.arg, a, b))
                return
            raise self.tracer.error(f"the operator {instr.arg.name.lower()} on traced values is not supported")
        if _symbolic(a, b) or not (_numberish(a) and _numberish(b)):
            self.push(self.container_binary(op, a, b))
            return
        self.push(self.builder.binary(op, a, b))

    def op_COMPARE_OP(self, instr):
        b = self.pop()
        a = self.pop()
        op = COMPARE_OPS[instr.arg.name.split("_")[0]]
        if not (_numberish(a) and _numberish(b)):
            if is_traced(a) or is_traced(b):
                raise self.tracer.error(f"comparing {type(a).__name__} with {type(b).__name__} is not supported")
            self.push(_compare(op, a, b))
            return
        self.push(self.builder.compare(op, a, b))

    def op_UNARY_NEGATIVE(self, instr):
        self.push(self.builder.negate(self.pop()))

    def op_UNARY_POSITIVE(self, instr):
        self.push(self.builder.positive(self.pop()))

    def op_UNARY_NOT(self, instr):
        self.push(self.builder.logical_not(self.truth_of(self.pop())))

    def op_UNARY_INVERT(self, instr):
        a = self.pop()
        if is_traced(a):
            raise self.tracer.error("the operator ~ on traced values is not supported")
        self.push(~a)

    def op_TO_BOOL(self, instr):
        self.push(self.truth_of(self.pop()))

    def truth_of(self, x):
        """bool(x) for anything on the stack (containers by their length)."""
        if _numberish(x):
            return self.builder.truth(x)
        from ..objects import ExternalList
        if isinstance(x, ExternalList):
            return len(x) > 0
        return bool(x)

    def op_IS_OP(self, instr):
        b = self.pop()
        a = self.pop()
        if is_traced(a) or is_traced(b):
            result = False if (a is None or b is None) else None
            if result is None:
                raise self.tracer.error("'is' between traced values is not supported")
        else:
            result = a is b
        self.push(result != bool(instr.arg))

    def op_CONTAINS_OP(self, instr):
        container = self.pop()
        item = self.pop()
        items = self.materialize(container)
        found = False
        for x in items:
            eq = self.builder.compare("eq", item, x) if _numberish(item) and _numberish(x) else item == x
            if self.builder.concretize(eq, "'in' test"):
                found = True
                break
        self.push(found != bool(instr.arg))


def _numberish(x) -> bool:
    return is_traced(x) or type(x) in (bool, int, float)


def _symbolic(a, b) -> bool:
    from ..objects import ExternalList
    return isinstance(a, (list, tuple, ExternalList)) or isinstance(b, (list, tuple, ExternalList))


def _python_binary(op: BinaryOp, a, b):
    import operator
    table = {"AND": operator.and_, "OR": operator.or_, "XOR": operator.xor, "LSHIFT": operator.lshift,
             "RSHIFT": operator.rshift, "MATRIX_MULTIPLY": operator.matmul}
    name = op.name.replace("INPLACE_", "")
    return table[name](a, b)


def _compare(op, a, b):
    import operator
    return getattr(operator, op)(a, b)
