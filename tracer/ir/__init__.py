"""The IR: the contract between the front end and the back end (`codegen` reads nothing else).

    types.py          f64, f32, i64, bool, tuples, arrays, tapes, lists; EntryArg (how an entry takes an argument)
    graph.py          Value, Block, Function: typed SSA with structured regions, and its printed table
    registry.py       OpDef and `define`: what an op is (type rule, evaluator, failures, derivative)
    scalar_ops.py     the ops on numbers              ┐
    structure_ops.py  tuples, control flow, tapes,    ├ declared into registry.OPS
                      calls into CPython              │
    array_ops.py      the ops on NumPy arrays         │
    scan_ops.py       running sums and products       │
    list_ops.py       lists of run-time length        ┘
    ops.py            OPS complete; `evaluate` and `run`, the IR's meaning as a Python program
    verify.py         the verifier run after every pass in tests

The names most code needs are importable from here: `from tracer import ir; ir.F64, ir.Value`.
"""
from tracer.ir.graph import (
                             REGION_NAMES,
                             Block,
                             Function,
                             Value,
                             clone,
                             copy_block,
                             defined_in,
                             format_function,
                             free_values,
                             make_param,
                             used_in,
                             value_names,
                             zero,
)
from tracer.ir.ops import OPS, evaluate, run
from tracer.ir.types import (
                             ARRAY_DTYPE_NAMES,
                             BITS,
                             BOOL,
                             C64,
                             C128,
                             COMPLEX,
                             DTYPES_BY_NAME,
                             F16,
                             F32,
                             F64,
                             FLOATS,
                             I8,
                             I16,
                             I32,
                             I64,
                             I64_MAX,
                             I64_MIN,
                             INTEGERS,
                             NARROW,
                             NUMPY_DTYPE_NAMES,
                             PART_TYPE,
                             SIGNED,
                             U8,
                             U16,
                             U32,
                             U64,
                             UNSIGNED,
                             ArrayType,
                             EntryArg,
                             ListArg,
                             ListType,
                             PinnedStr,
                             ScalarType,
                             TapeType,
                             TupleType,
                             Type,
                             compute_type,
                             int_range,
                             leaf_types,
                             type_of_constant,
)
from tracer.ir.verify import REGION_CHECKS, VerificationError, verify

__all__ = [
    "ARRAY_DTYPE_NAMES", "BITS", "BOOL", "C64", "C128", "COMPLEX", "DTYPES_BY_NAME", "F16", "F32", "F64", "FLOATS", "I8", "I16", "I32", "I64", "I64_MAX", "I64_MIN",
    "INTEGERS", "NARROW", "NUMPY_DTYPE_NAMES", "PART_TYPE", "SIGNED", "U8", "U16", "U32", "U64", "UNSIGNED", "OPS", "REGION_CHECKS", "REGION_NAMES",
    "ArrayType", "Block", "EntryArg", "Function", "ListArg", "ListType", "PinnedStr", "ScalarType", "TapeType", "TupleType", "Type", "Value",
    "VerificationError", "clone", "copy_block", "defined_in", "evaluate", "format_function", "free_values",
    "compute_type", "int_range", "leaf_types", "make_param", "run", "type_of_constant", "used_in", "value_names", "verify", "zero",
]
