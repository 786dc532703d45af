"""NumPy arrays in traced code: what the interpreter does with a `TracedArray`.

Operators and methods follow NumPy: dtype promotion (bool < int64 < float64, float32 by NEP 50
with Python numbers weak; `/` gives a float), basic indexing and slicing as views,
broadcasting (shapes aligned on the right, size-1 axes repeat; a mismatch of sizes the trace
knows is NumPy's ValueError at trace time, one of run-time sizes makes the call run the Python
function, which raises it), views for `x.T` and `W[j]`, and in-place updates of argument arrays
(`W -= lr * g`, `x[i] = v`: written back into the caller's array when the function returns).

An array argument's sizes are run-time values (a new size does not recompile), except a size of
1, which the trace knows (broadcasting depends on it: the entry checks it). Elements read from
arrays are NumPy scalars; their arithmetic is Python's float and int arithmetic wherever both
succeed with the same value; where they differ (1.0 / 0.0, an int past 64 bits), Python's
raises and NumPy's gives inf, nan or a wrapped int. So a compiled function that uses NumPy runs
the Python function for any call where an op fails (codegen.entry): that call gets NumPy's
exact result, warnings included; so does a call that passes a read-only array
(flags.writeable False) for an argument the function may write: NumPy refuses it. A 0-d array
(`np.array(2.0)`) is an array of rank 0: as in NumPy, ufuncs and reductions of it give scalars
(`x * 2.0`, `x.sum()`), `x[...]`, `x.copy()` and `x.astype(...)` stay 0-d arrays, and float(x),
int(x), bool(x) and `x.item()` give its number. Not yet exact: elements and reductions come back
as Python floats and ints (np.float64 and np.int64 are subclasses, equal in value), and np.int64
compared with a float compares exactly where NumPy rounds the int first.
"""
from __future__ import annotations

import math

from tracer.frontend.builder import is_number, is_traced
from tracer.frontend.dtypes import CAST_NARROW, cast, check_weak_int, is_strong, kind, narrow, promote_narrow, widen
from tracer.frontend.iteration import RangeIter
from tracer.frontend.numpy_scalars import checked_scalar_arithmetic, made_by_numpy
from tracer.frontend.objects import ArrayMethod, TracedArray, array_unsupported
from tracer.ir import (
    ARRAY_DTYPE_NAMES,
    BOOL,
    F32,
    F64,
    FLOATS,
    I8,
    I64,
    INTEGERS,
    NUMPY_DTYPE_NAMES,
    SIGNED,
    ArrayType,
    ScalarType,
    Value,
)

READABLE_DTYPES = tuple(ARRAY_DTYPE_NAMES)   # a bool element read is a Python bool (not np.bool_ yet)


def is_ndarray(obj) -> bool:
    """Whether `obj` is exactly a numpy.ndarray (without importing numpy for programs that never
    use it)."""
    return type(obj).__name__ == "ndarray" and type(obj).__module__ == "numpy"


def readable_dtype(array):
    """The IR dtype of a NumPy array traced code can read (builtin descriptor, native byte
    order), or None."""
    import numpy
    for t in READABLE_DTYPES:
        if array.dtype is numpy.dtype(ARRAY_DTYPE_NAMES[t]):
            return t
    return None


def param_shape(array) -> tuple:
    """The shape a parameter's type records: 1 where the size is 1, else None (run time)."""
    return tuple(1 if n == 1 else None for n in array.shape)


def wrap(tracer, v):
    """The symbolic value of an op's result: arrays as TracedArray, scalars as they are."""
    return TracedArray(tracer, v) if is_traced(v) and isinstance(v.type, ArrayType) else v


def unwrap_0d(tracer, x):
    """The one element of a 0-d array (x[()], a NumPy scalar); anything else as it is. NumPy's
    ufuncs and reductions give scalars where their result would be 0-d."""
    v = x.value if isinstance(x, TracedArray) else x
    if is_traced(v) and isinstance(v.type, ArrayType) and v.type.rank == 0:
        return tracer.builder.emit("load", (v,))
    return x


def number_of(tracer, x: TracedArray, what: str):
    """The number in a 0-d array, for float(x), int(x), bool(x) and x.item(): a float32 widened to
    float64 (exactly: each of them gives the same answer for both)."""
    if x.rank != 0:
        raise tracer.error(f"{what} of an array that is not 0-d is not supported yet")
    number = unwrap_0d(tracer, x)
    return convert(tracer, number, F64) if number.type == F32 else number


def shape_text(t) -> str:
    if not isinstance(t, ArrayType):
        return "()"
    return "(" + ",".join("?" if n is None else str(n) for n in t.shape) + ("," if t.rank == 1 else "") + ")"


# ------------------------------------------------------------------------------- operands
def operand(tracer, x, what: str = "this operation"):
    """An IR value or Python number for an array op's operand."""
    if isinstance(x, TracedArray):
        return x.value
    if is_traced(x) or is_number(x):
        return x
    if type(x) in (list, tuple):
        return array_from(tracer, x)
    raise tracer.error(f"{what} with a {type(x).__name__} is not supported")


def convert(tracer, x, to: ScalarType):
    """An operand with elements of type `to` (NumPy's casts: float64 to int64 truncates, to
    float32 rounds to nearest; the other narrow dtypes: tracer.frontend.dtypes)."""
    b = tracer.builder
    if kind(x) in CAST_NARROW or to in CAST_NARROW:
        return cast(tracer, x, to)
    if to == F32:
        if is_traced(x) and kind(x) == F32:
            return x
        f32 = b.emit("to_f32", (b.value(x),))
        if isinstance(x, float) or is_traced(x) and x.type == F64:      # NumPy: "overflow encountered in cast"
            return b.emit("numpy_scalar_check", (f32, b.value(x), b.value(x)))
        return f32
    if not is_traced(x):
        return b.const({F64: float, I64: int, BOOL: bool}[to](x))
    if kind(x) == to:
        return x
    if kind(x) == F32 and to != F64:              # float32 to int or bool: through f64 (exact)
        x = b.emit("to_f64", (x,))
    if isinstance(x.type, ArrayType):
        op = {F64: "to_f64", I64: "to_i64", BOOL: "to_bool"}[to]
        return b.emit(op, (x,))
    return b.convert(x, to) if to != BOOL else b.truth(x)


def sizes_of(tracer, v: Value) -> list:
    """The sizes of array value `v`: Python ints where the type knows them, else `dim` ops."""
    return [n if n is not None else tracer.builder.emit("dim", (v,), axis=a) for a, n in enumerate(v.type.shape)]


def broadcast(tracer, values: list) -> list:
    """NumPy's broadcasting: the array operands made one shape (scalars stay scalars)."""
    b = tracer.builder
    arrays = [v for v in values if is_traced(v) and isinstance(v.type, ArrayType)]
    if not arrays:
        return values
    common = broadcast_shape(tracer, [(v, v.type.shape) for v in arrays])
    if common is None:
        raise ValueError("operands could not be broadcast together with shapes "
                         + " ".join(shape_text(v.type) for v in arrays) + " ")
    shape, sizes = common
    rank = len(shape)
    out = []
    for v in values:
        if is_traced(v) and isinstance(v.type, ArrayType) and v.type.shape != tuple(shape):
            dims = tuple(range(rank - v.type.rank, rank))
            v = b.emit("broadcast_in_dim", (v, *(b.value(s) for s in sizes)), shape=tuple(shape), dims=dims)
        out.append(v)
    return out


def broadcast_shape(tracer, operands: list):
    """NumPy's broadcast of the shapes of `operands`, pairs (array value, the shape of its axes to
    broadcast: all of them, or the leading ones): the common (shape, sizes), a size an int where
    the trace knows it, else a `dim` value; None where sizes the trace knows do not fit."""
    b = tracer.builder
    rank = max(len(s) for _, s in operands)
    shape, sizes = [], []
    for axis in range(rank):
        static, runtime = set(), None
        for v, s in operands:
            d = axis - (rank - len(s))
            if d < 0:
                continue
            if s[d] is None:
                runtime = runtime or b.emit("dim", (v,), axis=d)
            elif s[d] != 1:
                static.add(s[d])
        if len(static) > 1:
            return None
        n = static.pop() if static else None if runtime is not None else 1
        shape.append(n)
        sizes.append(runtime if n is None else n)
    return shape, sizes


def emit_elementwise(tracer, op: str, operands: list, dtype: ScalarType | None = None):
    """`op` on operands converted to `dtype` (default: NumPy's promotion) and broadcast.

    float32: the operands are rounded to float32 (a Python float too, as NumPy does), the op
    runs in float64 and its result is rounded to float32. For + - * / and sqrt that is exactly
    float32 arithmetic (a double holds the exact result closely enough to round it once); math
    functions come out correctly rounded, where NumPy's own float32 routines may be an ulp off."""
    b = tracer.builder
    if dtype is None:
        dtype = promote(tracer, *operands)
    operands = [unwrap_0d(tracer, x) for x in operands]
    if dtype in CAST_NARROW:                     # computed in i64 or f64, then back (dtypes.narrow)
        values = []
        for x in operands:
            if op in COMPARISONS and dtype in INTEGERS and kind(x) in (I64, BOOL) and not is_strong(tracer, x):
                values.append(x)                 # uint8_array > 300: a Python int compares exactly
                continue
            check_weak_int(x, dtype)
            weak_int = is_traced(x) and not is_strong(tracer, x) and dtype in INTEGERS
            values.append(widen(tracer, cast(tracer, x, dtype, checked=weak_int)))
        values = broadcast(tracer, [b.value(v) for v in values])
        # (the lowest signed value // -1 does not fit: NumPy warns, so that one is checked)
        return narrow(tracer, b.emit(op, tuple(values)), dtype, checked=op == "floordiv" and dtype in SIGNED)
    values = [convert(tracer, x, dtype) for x in operands]
    if dtype == F32:
        values = [convert(tracer, x, F64) for x in values]
    values = broadcast(tracer, [b.value(v) for v in values])
    result = b.emit(op, tuple(values))
    return convert(tracer, result, F32) if dtype == F32 and kind(result) == F64 else result


def promote(tracer, *operands) -> ScalarType:
    """NumPy's result type (NEP 50) for bool, int64, float32 and float64 operands.

    Python numbers are "weak": they take the arrays' type (float32 array * 0.1 is float32).
    A traced scalar is weak when it comes from Python numbers; one NumPy made (an element, a
    reduction, np.exp(x)) is an np.float64 or np.int64, which makes float32 into float64. Only
    float32 tells the two apart, and there a traced scalar must be known to be one or the other."""
    kinds = {kind(x) for x in operands}
    if kinds & set(CAST_NARROW):
        return promote_narrow(tracer, operands)
    if F32 not in kinds:
        return F64 if F64 in kinds else I64 if I64 in kinds else BOOL
    strong = {kind(x) for x in operands if is_traced(x) and (isinstance(x.type, ArrayType) or x.type == F32)}
    for x in operands:
        if is_traced(x) and not isinstance(x.type, ArrayType) and x.type != F32 and made_by_numpy(tracer, x):
            raise tracer.error("a float32 array with a float64 or int64 scalar NumPy computed: NumPy's result "
                               "dtype depends on that scalar's type; convert one explicitly (np.float32(s), "
                               "float(s) or x.astype(np.float64))")
    return F64 if strong & {F64, I64} else F32


# ------------------------------------------------------------------------------- operators
ARITHMETIC = {"add", "sub", "mul", "div", "floordiv", "mod", "pow"}
COMPARISONS = {"lt", "le", "gt", "ge", "eq", "ne"}


def binary(tracer, op: str, a, b):
    """a <op> b with at least one array: arithmetic, comparisons, `@`, and & | ^ on bools."""
    if op == "matmul":
        return matmul(tracer, a, b)
    x, y = operand(tracer, a, f"the operator {op}"), operand(tracer, b, f"the operator {op}")
    if op in COMPARISONS:
        dtype = promote(tracer, x, y)
        if dtype == F64 and kind(x) in INTEGERS and kind(y) in INTEGERS:   # int64 with uint64: exactly
            x, y, dtype = widen(tracer, x), widen(tracer, y), I64            # (past int64: NumPy runs)
        return wrap(tracer, emit_elementwise(tracer, op, [x, y], dtype))
    if op in ("and", "or", "xor", "lshift", "rshift"):
        dtype = promote(tracer, x, y)
        if dtype in FLOATS:
            name = {"and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor"}.get(op, f"{op[0]}eft_shift"
                                                                                     if op == "lshift" else "right_shift")
            raise TypeError(f"ufunc '{name}' not supported for the input types, and the inputs could not be safely "
                            f"coerced to any supported types according to the casting rule ''safe''")
        if dtype != BOOL or op in ("lshift", "rshift"):     # integers: bit by bit (bools shift as int8)
            return wrap(tracer, emit_elementwise(tracer, op if "shift" in op else "bit_" + op, [x, y],
                                                 I8 if dtype == BOOL else dtype))
        x, y = broadcast(tracer, [tracer.builder.value(unwrap_0d(tracer, v)) for v in (x, y)])
        bld = tracer.builder
        if op == "and":
            return wrap(tracer, bld.emit("select", (x, y, bld.const(False))))
        if op == "or":
            return wrap(tracer, bld.emit("select", (x, bld.const(True), y)))
        return wrap(tracer, bld.emit("ne", (x, y)))
    dtype = promote(tracer, x, y)
    if op == "div" and dtype not in FLOATS:
        dtype = F64
    if op == "pow" and dtype == I64 and kind(x) == BOOL and type(y) is int and y == 2:
        dtype = I8                  # bool ** 2 is np.square's int8 loop
    if dtype == BOOL:               # NumPy's bool loops: + is or, * is and; // % ** are int8's
        if op in ("add", "mul"):
            return binary(tracer, "or" if op == "add" else "and", x, y)
        if op == "sub":
            raise TypeError("numpy boolean subtract, the `-` operator, is not supported, use the bitwise_xor, "
                            "the `^` operator, or the logical_xor function instead.")
        dtype = I8
    if op == "pow" and dtype in INTEGERS and not is_traced(y) and y < 0:
        raise ValueError("Integers to negative integer powers are not allowed.")
    operands = [x, y]
    if op == "pow" and not is_traced(y) and isinstance(x.type if is_traced(x) else None, ArrayType):
        # NumPy's fast paths (bit for bit what np.power gives): squares, square roots, reciprocals
        if y == 2:
            op, operands = "mul", [x, x]
        elif y == 3 and (dtype in (F64, F32) or (type(y) is int and dtype in INTEGERS and dtype != I8)):
            # (x * x) * x: an int's wrapped power exactly, a float's within NumPy's 1 ulp (SIMD pow)
            op, operands = "mul", [emit_elementwise(tracer, "mul", [x, x], dtype), x]
        elif dtype in (F64, F32) and y == -2:
            op, operands = "div", [1.0, emit_elementwise(tracer, "mul", [x, x], dtype)]   # within 1 ulp too
        elif dtype in FLOATS and y == 0.5:
            op, operands = "sqrt", [x]          # (-0.0) ** 0.5 is -0.0
        elif dtype in FLOATS and y == -1:
            op, operands = "div", [1.0, x]
    if op == "pow" and dtype == F64 and any(isinstance(v.type if is_traced(v) else None, ArrayType) for v in operands):
        op = "np_pow"                   # NumPy's kind of kernel, not the C library's pow per element
    result = emit_elementwise(tracer, op, operands, dtype)
    if not isinstance(result.type, ArrayType):
        result = checked_scalar_arithmetic(tracer, result)
    return wrap(tracer, result)


def unary(tracer, op: str, a):
    x = operand(tracer, a)
    if op == "pos":
        return unwrap_0d(tracer, a)
    if op == "invert":
        if kind(x) in FLOATS:
            raise TypeError("ufunc 'invert' not supported for the input types, and the inputs could not be safely "
                            "coerced to any supported types according to the casting rule ''safe''")
        if kind(x) != BOOL:
            return wrap(tracer, emit_elementwise(tracer, "invert", [x], kind(x)))
        return wrap(tracer, tracer.builder.emit("not", (unwrap_0d(tracer, x),)))
    if kind(x) == BOOL:
        raise TypeError("The numpy boolean negative, the `-` operator, is not supported, use the `~` "
                        "operator or the logical_not function instead." if op == "neg" else
                        f"{op} of a bool array is not supported yet")
    return wrap(tracer, emit_elementwise(tracer, op, [x], kind(x)))


def inplace(tracer, op: str, array: TracedArray, other):
    """`array <op>= other`: NumPy computes into the array itself (same shape, same dtype)."""
    result = binary(tracer, op, array, other)
    value = result.value if isinstance(result, TracedArray) else result
    if array.rank == 0:                          # 0-d: the ufunc gave a scalar; back into an array
        value = tracer.builder.emit("full", (tracer.builder.value(value),), shape=())
    if value.type.dtype != array.type.dtype:
        import numpy
        if not numpy.can_cast(NUMPY_DTYPE_NAMES[value.type.dtype], NUMPY_DTYPE_NAMES[array.type.dtype], "same_kind"):
            raise TypeError(f"Cannot cast ufunc '{op}' output from dtype('{NUMPY_DTYPE_NAMES[value.type.dtype]}') "
                            f"to dtype('{NUMPY_DTYPE_NAMES[array.type.dtype]}') with casting rule 'same_kind'")
        value = convert(tracer, value, array.type.dtype)
    if value.type.shape != array.type.shape:
        if value.type.rank != array.type.rank or any(
                m is not None and n is not None and m != n for m, n in zip(value.type.shape, array.type.shape)):
            raise ValueError(f"non-broadcastable output operand with shape {shape_text(array.type)} doesn't "
                             f"match the broadcast shape {shape_text(value.type)}")
    assign(tracer, array, value)
    return array


def _refuse_merged(tracer, array: TracedArray) -> None:
    while array is not None:
        if array.merged:
            raise array_unsupported(tracer, "writing into an array that a data-dependent branch or loop chose "
                                            "(it may be another variable's array); write `x = x + ...` instead")
        array = array.base


def assign(tracer, array: TracedArray, value: Value) -> None:
    """Give `array` the contents `value` (an in-place update)."""
    b = tracer.builder
    _refuse_merged(tracer, array)
    if array.base is not None:                   # a view: write through to its base
        store(tracer, array, (), value)
        return
    if value.type != array.type:
        value = b.emit("broadcast_in_dim", (value, *(b.value(s) for s in sizes_of(tracer, array.value))),
                       shape=array.type.shape, dims=tuple(range(array.rank)))
    if b.enclosing:                              # inside a branch or loop: write into its memory
        store(tracer, array, (), value)
        return
    array.rebind(value)
    if array.param is not None:
        tracer.updated_arrays[array.param] = array


def writable(tracer, array: TracedArray) -> None:
    """Make `array`'s memory one the function owns: an argument is copied once, at the top of
    the function (its final contents are written back when the function returns). An array
    bound to its parameter again (a loop's first trace was cut) is copied again."""
    if array.param is None or array.param in tracer.updated_arrays and array.value is not array.param:
        return
    body = tracer.builder.enclosing[0] if tracer.builder.enclosing else tracer.builder.block
    copied = Value("copy", (array.param,), array.param.type, loc=tracer.builder.loc)
    body.values.insert(0, copied)
    tracer.builder.examples[copied] = tracer.builder.examples.get(array.param)
    array.rebind(copied)
    tracer.updated_arrays[array.param] = array


def writable_root(tracer, array: TracedArray) -> None:
    """Make the memory a write into `array` goes to the function's own (`writable`), or raise
    NumPy's error where it is read-only."""
    _refuse_merged(tracer, array)
    root = array
    while root.base is not None:
        op, extra, attrs = root.view
        if op == "broadcast_in_dim" and _stretches(root.base.type, attrs):
            raise ValueError("assignment destination is read-only")
        root = root.base
    writable(tracer, root)


def cast_stored(tracer, value, dtype: ScalarType) -> Value:
    """A value stored into an array of `dtype`, cast as NumPy's assignment casts it: floats
    truncated into integers, numbers into bools by their truth; a Python int the dtype cannot
    hold is NumPy's OverflowError (a traced one makes the Python function run and raise it)."""
    if kind(value) != dtype:
        check_weak_int(value, dtype)
        scalar = is_traced(value) and not isinstance(value.type, ArrayType)
        weak = scalar and kind(value) == I64 and dtype in INTEGERS and dtype != I64 and not is_strong(tracer, value)
        # NumPy checks an integer scalar stored into a signed array too (np.int64(300) into int8
        # raises OverflowError), where into an unsigned one it wraps
        checked = weak or scalar and dtype in SIGNED and dtype != I64 and kind(value) in INTEGERS
        if checked or dtype == BOOL or dtype in INTEGERS and kind(value) in FLOATS:
            value = cast(tracer, value, dtype, checked=checked)
        else:
            value = convert(tracer, value, dtype)
    return tracer.builder.value(value)


def store(tracer, array: TracedArray, indices: tuple, value) -> None:
    """array[indices] = value, in the array's memory (a view writes into its base's)."""
    b = tracer.builder
    writable_root(tracer, array)
    target = array.value                         # (made again from the base's copy)
    rest = target.type.shape[len(indices):]
    dtype = target.type.dtype
    value = operand(tracer, value, "assignment")
    if not rest:                                 # x[i] = a 0-d array: its number
        value = unwrap_0d(tracer, value)
    value = cast_stored(tracer, value, dtype)
    if rest:
        sizes = sizes_of(tracer, target)[len(indices):]
        if not isinstance(value.type, ArrayType):
            value = b.emit("full", (value, *(b.value(s) for s in sizes)), shape=rest)
        elif value.type.shape != rest:
            if value.type.rank > len(rest):
                raise ValueError(f"could not broadcast input array from shape {shape_text(value.type)} into "
                                 f"shape ({','.join('?' if n is None else str(n) for n in rest)})")
            value = b.emit("broadcast_in_dim", (value, *(b.value(s) for s in sizes)), shape=rest,
                           dims=tuple(range(len(rest) - value.type.rank, len(rest))))
        if _root(value) is _root(target):       # x[1:] = x[:-1]: NumPy reads all before writing
            value = b.emit("copy", (value,))
    b.emit("store", (target, value, *(b.value(i) for i in indices)))


def _stretches(source: ArrayType, attrs) -> bool:
    """Whether a broadcast_in_dim repeats elements (np.broadcast_to: read-only), rather than only
    adding axes of size 1 (x[:, None]: writable)."""
    shape, dims = attrs["shape"], attrs["dims"]
    return any(shape[d] != 1 for d in range(len(shape)) if d not in dims) or \
        any(n == 1 and shape[d] != 1 for n, d in zip(source.shape, dims))


def _root(value: Value) -> Value:
    """The array a view shows (the value itself if it is not a view)."""
    while value.op in ("index", "transpose", "broadcast_in_dim", "slice", "complex_parts"):
        value = value.args[0]
    return value


def make_view(tracer, array: TracedArray, op: str, extra: tuple, **attrs) -> TracedArray:
    v = tracer.builder.emit(op, (array.value, *extra), **attrs)
    return TracedArray(tracer, v, base=array, view=(op, extra, attrs))


def length(tracer, array: TracedArray):
    if array.rank == 0:
        raise TypeError("len() of unsized object")
    return sizes_of(tracer, array.value)[0]


def iterate(tracer, array: TracedArray):
    """`for v in x`: a loop over the first axis (elements, or rows as views)."""
    if array.rank == 0:
        raise TypeError("iteration over a 0-d array")
    b = tracer.builder
    return RangeIter(0, length(tracer, array), 1, b.const(0), array)


# ------------------------------------------------------------------------------- attributes
METHODS = {"sum", "mean", "max", "min", "prod", "argmax", "argmin", "reshape", "transpose", "copy",
           "astype", "dot", "clip", "ravel", "flatten", "item"}


def attribute(tracer, array: TracedArray, name: str):
    b = tracer.builder
    if name == "shape":
        return tuple(sizes_of(tracer, array.value))
    if name == "ndim":
        return array.rank
    if name == "size":
        size = 1
        for n in sizes_of(tracer, array.value):
            size = b.binary("mul", size, n)
        return size
    if name == "dtype":
        import numpy
        return numpy.dtype(NUMPY_DTYPE_NAMES[array.type.dtype])
    if name == "T":
        return transpose(tracer, array)
    if name in METHODS:
        return ArrayMethod(array, name)
    raise array_unsupported(tracer, f"the attribute .{name}")


# ------------------------------------------------------------------------------- shape ops
def transpose(tracer, array: TracedArray, axes=None):
    rank = array.rank
    perm = tuple(reversed(range(rank))) if axes is None else tuple(tracer.builder.concretize(a, "axes") for a in axes)
    if sorted(p % rank if rank else p for p in perm) != list(range(rank)):
        raise ValueError("axes don't match array")
    perm = tuple(p % rank for p in perm)
    if perm == tuple(range(rank)):
        return array
    view = ("transpose", (), {"perm": perm})
    return TracedArray(tracer, tracer.builder.emit("transpose", (array.value,), perm=perm), base=array, view=view)


def reshape(tracer, array: TracedArray, shape, order="C"):
    """x.reshape(shape): one size may be -1 (worked out from the others)."""
    b = tracer.builder
    if order != "C":
        raise array_unsupported(tracer, f"reshape with order={order!r}")
    shape = tuple(shape) if type(shape) in (tuple, list) else (shape,)
    total = array.type.shape
    known = None not in total
    count = math.prod(total) if known else None
    sizes, static = [], []
    for n in shape:
        if is_traced(n):
            sizes.append(n)
            static.append(None)
        elif type(n) is int and n >= -1:
            sizes.append(n)
            static.append(n if n != -1 else None)
        else:
            raise ValueError("negative dimensions not allowed")
    if sum(1 for n in shape if type(n) is int and n == -1) > 1:
        raise ValueError("can only specify one unknown dimension")
    if -1 in [n for n in shape if type(n) is int]:
        i = [n if type(n) is int else None for n in shape].index(-1)
        others = 1
        for j, n in enumerate(sizes):
            if j != i:
                others = b.binary("mul", others, n)
        size = 1
        for n in sizes_of(tracer, array.value):
            size = b.binary("mul", size, n)
        if not is_traced(others) and not is_traced(size):
            if others == 0 or size % others:
                raise ValueError(f"cannot reshape array of size {size} into shape {tuple(shape)}")
            sizes[i] = size // others
            static[i] = sizes[i]
        else:   # a size of 0 among the others: NumPy raises; reshape's own check falls back
            nonzero = b.emit("select", (b.value(b.compare("eq", others, 0)), b.const(1), b.value(others)))
            sizes[i] = b.binary("floordiv", size, nonzero)
    if known and all(type(n) is int for n in sizes) and math.prod(sizes) != count:
        raise ValueError(f"cannot reshape array of size {count} into shape {tuple(shape)}")
    return wrap(tracer, b.emit("reshape", (array.value, *(b.value(n) for n in sizes)), shape=tuple(static)))


def astype(tracer, array: TracedArray, dtype, copy=True):
    to = dtype_of(tracer, dtype)
    value = convert(tracer, array.value, to)
    if value is array.value and copy:
        value = tracer.builder.emit("copy", (value,))
    return wrap(tracer, value)


def dtype_of(tracer, dtype) -> ScalarType:
    """The IR dtype for a NumPy dtype argument (float, int, bool, np.float64, 'float64'...)."""
    import numpy
    try:
        d = numpy.dtype(dtype)
    except TypeError:
        raise tracer.error(f"dtype {dtype!r} is not supported") from None
    for t, name in NUMPY_DTYPE_NAMES.items():
        if d == numpy.dtype(name):
            return t
    raise tracer.error(f"arrays of dtype {d} are not supported yet (bool, int8-int64, uint8-uint64 and "
                       f"float16-float64 are)")


def matmul(tracer, a, b):
    x, y = operand(tracer, a, "@"), operand(tracer, b, "@")
    for v in (x, y):
        if not (is_traced(v) and isinstance(v.type, ArrayType)) or v.type.rank == 0:
            raise ValueError("matmul: Input operand does not have enough dimensions (has 0, gufunc core with "
                             "signature (n?,k),(k,m?)->(n?,m?) requires 1)")
    if x.type.rank > 2 and y.type.rank <= 2:   # a stack of matrices times one: all their rows at once
        sizes = sizes_of(tracer, x)
        rows = matmul(tracer, reshape(tracer, TracedArray(tracer, x), (-1, sizes[-1])), TracedArray(tracer, y))
        return reshape(tracer, rows, (*sizes[:-1], *sizes_of(tracer, y)[1:]))
    for v in (x, y):
        if v.type.rank > 2:
            raise array_unsupported(tracer, "matmul of arrays of rank above 2")
    dtype = promote(tracer, x, y)
    if dtype not in (F64, F32):
        raise array_unsupported(tracer, "matmul of integer arrays")
    x, y = convert(tracer, x, F64), convert(tracer, y, F64)     # float32: summed in float64, rounded once
    k_x, k_y = x.type.shape[-1], y.type.shape[0]
    if None not in (k_x, k_y) and k_x != k_y:
        raise ValueError(f"matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature "
                         f"(n?,k),(k,m?)->(n?,m?) (size {k_y} is different from {k_x})")
    return wrap(tracer, convert(tracer, tracer.builder.emit("matmul", (x, y)), dtype))


def array_from(tracer, items, dtype: ScalarType | None = None):
    """np.array([...]) of numbers (or nested lists of them): a `pack` op (of `dtype`: each
    number cast as an assignment casts it)."""
    b = tracer.builder
    def shape_of(x):
        if type(x) in (list, tuple):
            inner = {shape_of(e) for e in x}
            if len(inner) > 1:
                raise ValueError("setting an array element with a sequence. The requested array has an "
                                 "inhomogeneous shape")
            return (len(x),) + (inner.pop() if inner else ())
        return ()
    def flatten(x):
        return [e for item in x for e in flatten(item)] if type(x) in (list, tuple) else [x]
    shape = shape_of(items)
    flat = flatten(items)
    for x in flat:
        if isinstance(x, TracedArray) or not (is_traced(x) or is_number(x)):
            raise array_unsupported(tracer, "np.array of anything but numbers (and lists of them)")
    if not flat:
        return b.emit("full", (b.const(0.0), *(b.const(n) for n in shape)), shape=shape)
    if dtype is not None:
        return b.emit("pack", tuple(cast_stored(tracer, x, dtype) for x in flat), shape=shape)
    dtype = promote(tracer, *flat)
    return b.emit("pack", tuple(b.value(convert(tracer, x, dtype)) for x in flat), shape=shape)
