"""Opcode handlers: arithmetic, comparisons, truth tests, identity and membership."""
from __future__ import annotations

import operator

from bytecode import BinaryOp

from tracer.frontend import (
    arrays,
    complex_arrays,
    complexes,
    dicts,
    dynlists,
    instance_ops,
    mixed_numbers,
    numpy_bools,
    pybuiltins,
)
from tracer.frontend.builder import BINARY_OPS, is_traced
from tracer.frontend.numpy_scalars import checked_scalar_arithmetic
from tracer.frontend.objects import BoundMethod, ExternalList, ExternalObject, MaybeNone, TracedArray, array_unsupported
from tracer.frontend.opcodes.containers import (
    both_true,
    either_true,
    holds_object,
    is_symbolic,
    items_equal,
    proxy,
    type_name,
)
from tracer.frontend.sources import ABSENT
from tracer.ir import BOOL, F64, I64, I64_MAX, I64_MIN, NARROW

# Compare enum names; 3.13 adds *_CAST variants (the same comparison, result cast to bool)
COMPARE_OPS = {"LT": "lt", "LE": "le", "GT": "gt", "GE": "ge", "EQ": "eq", "NE": "ne"}
OPERATOR_SYMBOLS = {
    "ADD": "+", "SUBTRACT": "-", "MULTIPLY": "*", "TRUE_DIVIDE": "/", "FLOOR_DIVIDE": "//",
    "REMAINDER": "%", "POWER": "**", "MATRIX_MULTIPLY": "@", "AND": "&", "OR": "|", "XOR": "^",
    "LSHIFT": "<<", "RSHIFT": ">>",
}
_WRAPPERS = (ExternalList, ExternalObject, BoundMethod)
# BinaryOp names -> the i64 op (& | ^ of two bools: the same op on bools, a bool)
BIT_OPS = {"AND": "bit_and", "OR": "bit_or", "XOR": "bit_xor", "LSHIFT": "lshift", "RSHIFT": "rshift"}
# BinaryOp names -> the array operator (tracer.frontend.arrays.binary)
ARRAY_OPERATORS = {"ADD": "add", "SUBTRACT": "sub", "MULTIPLY": "mul", "TRUE_DIVIDE": "div",
                   "FLOOR_DIVIDE": "floordiv", "REMAINDER": "mod", "POWER": "pow", "MATRIX_MULTIPLY": "matmul",
                   "AND": "and", "OR": "or", "XOR": "xor", "LSHIFT": "lshift", "RSHIFT": "rshift"}


def operator_symbol(op) -> str:
    name = getattr(op, "name", str(op))
    inplace = name.startswith("INPLACE_")
    symbol = OPERATOR_SYMBOLS.get(name.replace("INPLACE_", ""), name.lower())
    return symbol + "=" if inplace else symbol


def _numpy_typed(x) -> bool:
    """An array, or a float32 scalar: NumPy's arithmetic (tracer.frontend.arrays), not Python's."""
    return isinstance(x, TracedArray) or (is_traced(x) and x.type in NARROW)


class NumberOps:
    def op_BINARY_OP(self, instr):
        b = self.pop()
        a = self.pop()
        if complex_arrays.involved(a, b):
            self.push(self.complex_array_binary(instr, a, b))
            return
        if complexes.involved(a, b) and (op := ARRAY_OPERATORS.get(instr.arg.name.replace("INPLACE_", ""))):
            self.push(complexes.binary(self.tracer, op, a, b))      # CPython's complex arithmetic
            return
        if _numpy_typed(a) or _numpy_typed(b):
            name = instr.arg.name
            op = ARRAY_OPERATORS.get(name.replace("INPLACE_", ""))
            if op is None:
                raise array_unsupported(self.tracer, f"the operator {operator_symbol(instr.arg)}")
            if name.startswith("INPLACE_") and isinstance(a, TracedArray):
                self.push(arrays.inplace(self.tracer, op, a, b))
            else:
                self.push(arrays.binary(self.tracer, op, a, b))
            return
        if mixed_numbers.involved(a, b):       # an int or a float by a run-time tag (tracer.frontend.mixed_numbers)
            self.push(mixed_numbers.binary(self.tracer, BINARY_OPS.get(instr.arg) or operator_symbol(instr.arg), a, b))
            return
        for x in (a, b):
            if isinstance(x, (ExternalObject, BoundMethod)):
                what = f"an object of class {type(x.obj).__name__}" if isinstance(x, ExternalObject) else "a method"
                raise self.tracer.error(f"the operator {operator_symbol(instr.arg)} with {what} is not supported "
                                        f"(user-defined operators are not traced)")
        if instr.arg in (BinaryOp.INPLACE_ADD, BinaryOp.INPLACE_MULTIPLY):
            if type(a) is list:       # a list built in the trace: extended / repeated in place
                self.push(self.inplace_list(BINARY_OPS[instr.arg], a, b))
                return
            if isinstance(a, ExternalList) and isinstance(a.obj, list):
                raise self.tracer.error("mutating a list passed in is not supported")
        if type(a) is dicts.InputSet and instr.arg.name.startswith("INPLACE_"):
            raise self.tracer.error(f"the operator {operator_symbol(instr.arg)} on a set from outside the traced "
                                    f"function is not supported (it changes it)")
        if numpy_bools.involved(self.tracer, instr.arg, a, b):      # np.bool_ + np.bool_ is `or`...
            self.push(numpy_bools.binary(self.tracer, instr.arg, a, b))
            return
        bit_op = BIT_OPS.get(instr.arg.name.replace("INPLACE_", "")) if isinstance(instr.arg, BinaryOp) else None
        if bit_op is not None and (is_traced(a) or is_traced(b)) and _numberish(a) and _numberish(b):
            self.push(self.bitwise(instr.arg, bit_op, a, b))
            return
        op = BINARY_OPS.get(instr.arg)
        if op is None:
            if instance_ops.involved(a, b):      # @ & | ^ << >> of a user class (tracer.frontend.instance_ops)
                self.push(instance_ops.binary_operator(self.tracer, instr.arg, a, b))
                return
            if isinstance(instr.arg, BinaryOp) and not is_symbolic(a) and not is_symbolic(b):
                self.push(_python_binary(instr.arg, a, b))
                return
            raise self.tracer.error(f"the operator {operator_symbol(instr.arg)} on traced values is not supported")
        if _numberish(a) and _numberish(b):
            self.push(checked_scalar_arithmetic(self.tracer, self.builder.binary(op, a, b)))
            return
        self.push(self.container_binary(op, a, b, inplace=instr.arg.name.startswith("INPLACE_")))

    def complex_array_binary(self, instr, a, b):
        """An operator with a complex array (tracer.frontend.complex_arrays); `z op= x` in place."""
        name = instr.arg.name
        op = ARRAY_OPERATORS.get(name.replace("INPLACE_", ""))
        if op is None:
            raise self.tracer.error(f"the operator {operator_symbol(instr.arg)} on complex arrays is not supported")
        if name.startswith("INPLACE_") and isinstance(a, (complex_arrays.ComplexArray, TracedArray)):
            return complex_arrays.inplace(self.tracer, op, a, b)
        return complex_arrays.binary(self.tracer, op, a, b)

    def op_COMPARE_OP(self, instr):
        b = self.pop()
        a = self.pop()
        op = COMPARE_OPS[instr.arg.name.split("_")[0]]
        if complex_arrays.involved(a, b):
            self.push(complex_arrays.binary(self.tracer, op, a, b))
            return
        if complexes.involved(a, b):
            self.push(complexes.compare(self.tracer, op, a, b))
            return
        if mixed_numbers.involved(a, b):
            self.push(mixed_numbers.compare(self.tracer, op, a, b))
            return
        if _numpy_typed(a) or _numpy_typed(b):
            self.push(arrays.binary(self.tracer, op, a, b))
            return
        if _numberish(a) and _numberish(b):
            self.push(self.builder.compare(op, a, b))
        else:
            self.push(self.compare_objects(op, a, b))

    def _unary(self, traced_op, python_op, x):
        if _numpy_typed(x):
            return arrays.unary(self.tracer, python_op.__name__, x)
        if _numberish(x):
            return traced_op(x)
        if isinstance(x, (ExternalObject, BoundMethod)):
            raise self.tracer.error(f"a unary operator on {x!r} is not supported")
        if isinstance(x, ExternalList):
            python_op(proxy(x))           # Python's own TypeError: bad operand type for unary -: 'list'
        return python_op(x)

    def op_UNARY_NEGATIVE(self, instr):
        x = self.pop()
        if isinstance(x, complexes.TracedComplex):
            self.push(complexes.negative(self.tracer, x))
            return
        if isinstance(x, complex_arrays.ComplexArray):
            self.push(complex_arrays.negative(self.tracer, x))
            return
        if numpy_bools.involved(self.tracer, "neg", x):
            numpy_bools.unary(self.tracer, "neg", x)          # NumPy's TypeError
        self.push(self._unary(self.builder.negate, operator.neg, x))

    def op_UNARY_POSITIVE(self, instr):
        self.push(self.unary_positive(self.pop()))

    def unary_positive(self, x):
        """`+x` (UNARY_POSITIVE; on 3.12+ the intrinsic of that name)."""
        return self._unary(self.builder.positive, operator.pos, x)

    def op_UNARY_NOT(self, instr):
        self.push(self.builder.logical_not(self.truth_of(self.pop())))

    def op_UNARY_INVERT(self, instr):
        a = self.pop()
        if numpy_bools.involved(self.tracer, "invert", a):     # ~np.True_ is np.False_
            self.push(numpy_bools.unary(self.tracer, "invert", a))
            return
        if isinstance(a, TracedArray):
            self.push(arrays.unary(self.tracer, "invert", a))
            return
        if is_traced(a):
            if a.type == F64:
                ~proxy(a)                 # Python's TypeError: bad operand type for unary ~: 'float'
            self.push(self.builder.emit("invert", (self.builder.convert(a, I64),)))
            return
        if isinstance(a, _WRAPPERS):
            raise self.tracer.error(f"the operator ~ on {_describe(a)} is not supported")
        self.push(~a)

    def bitwise(self, arg: BinaryOp, op: str, a, b):
        """a & b, a | b, a ^ b, a << b, a >> b with a traced int or bool: Python's TypeError for a
        float; & | ^ of two bools is a bool; a negative shift count raises ValueError."""
        bld = self.builder
        if F64 in (bld.kind(a), bld.kind(b)):
            _python_binary(arg, proxy(a), proxy(b))      # Python's own TypeError message
        if op in ("bit_and", "bit_or", "bit_xor") and bld.kind(a) == bld.kind(b) == BOOL:
            return bld.emit(op, (bld.value(a), bld.value(b)))
        a, b = bld.convert(a, I64), bld.convert(b, I64)
        if op in ("lshift", "rshift"):
            if b.op != "const":
                bld.raise_if(bld.emit("lt", (b, bld.const(0))), ValueError("negative shift count"))
            elif b.attrs["value"] < 0:
                raise ValueError("negative shift count")
        return bld.emit(op, (a, b))

    def op_TO_BOOL(self, instr):
        self.push(self.truth_of(self.pop()))

    def truth_of(self, x):
        """bool(x) for anything on the stack (containers by their length)."""
        if isinstance(x, complexes.TracedComplex):
            return complexes.truth(self.tracer, x)
        if isinstance(x, mixed_numbers.MixedNumber):
            return mixed_numbers.truth(self.tracer, x)
        if _numberish(x):
            return self.builder.truth(x)
        if isinstance(x, ExternalList):
            return len(x) > 0
        if isinstance(x, dynlists.DynList):
            return dynlists.truth(self.tracer, x)
        if isinstance(x, (dicts.DynDict, dicts.DynSet)):
            return dynlists.truth(self.tracer, x.keys)
        if isinstance(x, TracedArray) and x.rank == 0:
            return self.builder.truth(arrays.number_of(self.tracer, x, "bool()"))
        if isinstance(x, TracedArray):
            raise self.tracer.error("the truth value of an array (if x:, and, or, not) is not supported; "
                                    "use x.any(), x.all() or np.where")
        if isinstance(x, ExternalObject):
            return self.object_truth(x)
        if isinstance(x, instance_ops.TracedInstance):      # __bool__, __len__ (tracer.frontend.instance_ops)
            return instance_ops.truth(self.tracer, x)
        return bool(x)

    def object_truth(self, obj: ExternalObject) -> bool:
        """A user object is true unless its class defines __bool__ or __len__ (not traced)."""
        cls = type(obj.obj)
        for name in ("__bool__", "__len__"):
            try:
                self.tracer.class_lookup(cls, name)
            except AttributeError:
                continue
            raise self.tracer.error(f"the truth value of {obj!r} is not supported (class {cls.__name__} "
                                    f"defines {name})")
        for klass in cls.__mro__:     # adding __bool__ or __len__ to the class later recompiles
            for name in ("__bool__", "__len__"):
                self.tracer.guard_binding(klass.__dict__, name, ABSENT, f"{name!r} not in vars({klass.__name__})")
        return True

    def op_IS_OP(self, instr):
        b = self.pop()
        a = self.pop()
        same = self.identical(a, b)
        self.push(self.builder.logical_not(same) if instr.arg else same)

    def identical(self, a, b) -> bool:
        """`a is b`. Traced values and input objects are never None (their type is guarded);
        whether two inputs are the same object is not guarded, so that is not supported."""
        if instance_ops.involved(a, b):        # objects made in the trace (tracer.frontend.instance_ops)
            return instance_ops.identical(self.tracer, a, b)
        for x, y in ((a, b), (b, a)):
            if isinstance(x, MaybeNone) and y is None:     # None on some paths
                return self.builder.logical_not(x.present)
        for x, y in ((a, b), (b, a)):
            if is_traced(x):
                if y is None:
                    return False
                if x.type == BOOL and (type(y) is bool or is_traced(y) and y.type == BOOL):
                    return self.builder.compare("eq", x, y)    # True and False are singletons
                raise self.tracer.error(f"'is' between a traced {type_name(x)} and {_describe(y)} is not supported")
        if isinstance(a, _WRAPPERS) and isinstance(b, _WRAPPERS):
            raise self.tracer.error(f"'is' between {a!r} and {b!r} is not supported (aliasing of inputs is not guarded)")
        for x, y in ((a, b), (b, a)):
            if isinstance(x, _WRAPPERS):
                if type(y) is tuple:    # a tuple from a global may be this very input
                    raise self.tracer.error(f"'is' between {x!r} and a tuple is not supported")
                return False            # None, or an object built in the trace, or a constant of another type
        if type(a) is tuple and type(b) is tuple and a is not b and (a or b):
            raise self.tracer.error("'is' between two tuples is not supported")
        return a is b

    def op_CONTAINS_OP(self, instr):
        container = self.pop()
        item = self.pop()
        found = self.contains(container, item)
        self.push(self.builder.logical_not(found) if instr.arg else found)

    def contains(self, container, item):
        """`item in container`: Python's own `in` on trace-time constants, else item by item with
        CPython's comparison (identity first); the result may be a traced bool."""
        if isinstance(container, instance_ops.TracedInstance):    # __contains__, else iteration
            return instance_ops.contains(self.tracer, container, item, items_equal)
        if isinstance(container, dynlists.DynList):
            return self.tracer.call(pybuiltins.list_contains, [container, item], {})
        if isinstance(container, (dicts.DynDict, dicts.DynSet)):
            return dicts.contains(self.tracer, container, item)
        is_iterator = hasattr(container, "__next__")
        if not is_iterator and not is_symbolic(container) and not is_symbolic(item):
            return item in container
        if holds_object(container) or holds_object(item):
            raise self.tracer.error(f"'in' with {_describe(container)} and {_describe(item)} is not supported")
        if is_traced(container):
            raise TypeError(f"argument of type '{type_name(container)}' is not iterable")
        if isinstance(container, _WRAPPERS) and not isinstance(container, ExternalList):
            raise self.tracer.error(f"'in' {_describe(container)} is not supported")
        if type(container) is range and is_traced(item) and item.type != F64:
            return self.int_in_range(item, container)
        if type(container) in (str, bytes):
            proxy(item) in container   # noqa: B015 -- evaluated for Python's TypeError: 'in <string>' requires string as left operand
            raise self.tracer.error(f"'in' {_describe(container)} is not supported")
        if is_iterator:
            # an iterator is consumed up to the first match, as in CPython: each test is concrete
            for x in container:
                if self.builder.concretize(items_equal(self.tracer, x, item), "an 'in' test"):
                    return True
            return False
        found = False
        for x in self.materialize(container):
            found = either_true(self.builder, found, items_equal(self.tracer, x, item))
            if found is True:
                break
        return found

    def int_in_range(self, x, r: range):
        """A traced int or bool in a constant range, by arithmetic (as CPython's range does)."""
        b = self.builder
        if not all(I64_MIN <= v <= I64_MAX for v in (r.start, r.stop, r.step)):
            raise self.tracer.error("'in' a range with bounds beyond 64 bits is not supported")
        if len(r) == 0:
            return False
        first, last = r[0], r[-1]
        inside = both_true(b, b.compare("ge", x, min(first, last)), b.compare("le", x, max(first, last)))
        if abs(r.step) == 1:
            return inside
        x_inside = b.emit("select", (inside, b.convert(x, I64), b.const(first)))
        offset = b.binary("sub", x_inside, first)
        return both_true(b, inside, b.compare("eq", b.binary("mod", offset, abs(r.step)), 0))


def _numberish(x) -> bool:
    return is_traced(x) or type(x) in (bool, int, float)


def _describe(x) -> str:
    if is_traced(x):
        return f"a traced {type_name(x)}"
    if isinstance(x, _WRAPPERS):
        return repr(x)
    return f"a {type(x).__name__}"


def _python_binary(op: BinaryOp, a, b):
    name = op.name.replace("INPLACE_", "").lower()
    name = {"and": "and_", "or": "or_", "matrix_multiply": "matmul"}.get(name, name)
    if op.name.startswith("INPLACE_"):     # a |= b: Python's in-place operator (and its messages)
        name = "i" + name.rstrip("_")
    return getattr(operator, name)(a, b)
