"""NumPy's bool scalars in a trace: an element of a bool array (`mask[i]`), or a bool a NumPy
function gave, is an `np.bool_`, whose arithmetic is NumPy's, not Python's:

    np.True_ + np.True_   is np.True_   (logical or; Python's True + True is 2)
    np.True_ * np.False_  is np.False_  (logical and)
    np.True_ - np.True_   TypeError     (numpy boolean subtract)
    np.True_ // np.True_  np.int8(1)    (and % and **: NumPy's int8 loops)
    -np.True_             TypeError     (numpy boolean negative)
    ~np.True_             np.False_     (logical not; Python's ~True is -2)
    abs(np.True_)         np.True_

(With an int or a float on the other side, the bool counts as 0 or 1 and the values are
Python's.) tracer.frontend.opcodes.numbers and the builtin abs ask `involved` first.
"""
from __future__ import annotations

from bytecode import BinaryOp

from tracer.frontend import arrays
from tracer.frontend.builder import is_traced
from tracer.frontend.dtypes import cast
from tracer.frontend.numpy_scalars import made_by_numpy
from tracer.ir import BOOL, I8

SUBTRACT = ("numpy boolean subtract, the `-` operator, is not supported, use the bitwise_xor, the `^` "
            "operator, or the logical_xor function instead.")
NEGATIVE = ("The numpy boolean negative, the `-` operator, is not supported, use the `~` operator or the "
            "logical_not function instead.")
# the operators whose result on two bools differs between NumPy and Python
OPERATORS = {BinaryOp.ADD: "bit_or", BinaryOp.INPLACE_ADD: "bit_or", BinaryOp.MULTIPLY: "bit_and",
             BinaryOp.INPLACE_MULTIPLY: "bit_and", BinaryOp.SUBTRACT: None, BinaryOp.INPLACE_SUBTRACT: None}
# ... and those NumPy computes in int8 (np.True_ // np.True_ is np.int8(1))
INT8_OPERATORS = {BinaryOp.FLOOR_DIVIDE: "floordiv", BinaryOp.INPLACE_FLOOR_DIVIDE: "floordiv",
                  BinaryOp.REMAINDER: "mod", BinaryOp.INPLACE_REMAINDER: "mod", BinaryOp.POWER: "pow",
                  BinaryOp.INPLACE_POWER: "pow"}


def is_numpy_bool(tracer, x) -> bool:
    return is_traced(x) and x.type == BOOL and made_by_numpy(tracer, x)


def involved(tracer, op, *operands) -> bool:
    """Whether `op` (a BinaryOp, or "neg", "invert", "abs") on these operands is NumPy's bool
    arithmetic: a NumPy bool, and (for a binary operator) a bool on the other side."""
    if not any(is_numpy_bool(tracer, x) for x in operands):
        return False
    if op in ("neg", "invert", "abs"):
        return True
    return (op in OPERATORS or op in INT8_OPERATORS) and all(type(x) is bool or (is_traced(x) and x.type == BOOL)
                                                             for x in operands)


def binary(tracer, op: BinaryOp, a, b):
    if op in INT8_OPERATORS:
        return arrays.binary(tracer, INT8_OPERATORS[op], cast(tracer, a, I8), cast(tracer, b, I8))
    if OPERATORS[op] is None:
        raise TypeError(SUBTRACT)
    bld = tracer.builder
    result = bld.emit(OPERATORS[op], (bld.value(a), bld.value(b)))
    tracer.numpy_scalars.add(result)
    return result


def unary(tracer, op: str, x):
    if op == "neg":
        raise TypeError(NEGATIVE)
    if op == "abs":
        return x
    result = tracer.builder.logical_not(x)
    tracer.numpy_scalars.add(result)
    return result
