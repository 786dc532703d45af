"""Numbers whose type is known only at run time: an item read at a run-time index from a list whose
items differ in type (`fewest = [0] + [inf] * n`, ints where a count is known, inf elsewhere).

Such a list is a list of `dynlists.Mixed` items (a tag, an int and a float per item). An item read
where the index, and so the tag, is known only at run time is a `MixedNumber`: the three fields,
the float field 0.0 for an int or bool and the int field 0 for a float. Where the item is not a
number (None, a string) the call runs the Python function. What compiled code does with one
follows CPython for each type the tag may say, and selects by the tag:

- `+ - *` with numbers or MixedNumbers: an int result where both are ints (or bools), else the
  float one (the int converted as CPython converts it); an int past 64 bits only where both are
  ints (a float's int field is 0), and then it is the int ops' own overflow (Python runs it);
- comparisons: int with int, float with float, int with float exactly (`GraphBuilder`'s rule);
- truth, `int()`, `float()`, storing it in a list of Mixed items (its fields as they are),
  returning it (made from its fields, `python_value`);
- a variable that holds one on some paths of a data-dependent branch or loop and an int or a
  float on others (`total = 0`, then `total = total + fewest[k]` in a loop) merges as one: its
  three fields are carried (`carried`, tracer.frontend.states), a plain number given its tag.

Anything else (other operators, formatting...) is refused: the call runs as Python.
"""
from __future__ import annotations

from tracer.errors import UnsupportedError
from tracer.frontend.builder import NeedsPython, is_number, is_traced
from tracer.frontend.numpy_scalars import made_by_numpy
from tracer.ir import BOOL, F64, I64, ArrayType

NONE_TAG, BOOL_TAG, INT_TAG, FLOAT_TAG, STR_TAG = 0, 1, 2, 3, 4      # dynlists.MIXED_TAGS
ARITHMETIC = ("add", "sub", "mul")


class MixedNumber:
    """An int, bool or float chosen at run time: `tag` (BOOL_TAG, INT_TAG, FLOAT_TAG), `number`
    (its value as an i64, 0 for a float) and `real` (its value as an f64, 0.0 for an int)."""
    carried = True          # a branch or loop that changes one carries its fields (states.layout_of)

    def __init__(self, tracer, tag, number, real):
        self.tracer, self.tag, self.number, self.real = tracer, tag, number, real

    def fields(self) -> tuple:
        return (self.tracer, self.tag, self.number, self.real)

    def __repr__(self):
        return "<a number whose type is known only at run time>"


def _refuse(self, *args):
    raise UnsupportedError("a number whose type (int or float) is known only at run time (an item of a list "
                           "whose items differ in type) can be added, subtracted, multiplied, compared, "
                           "converted and stored; not this", self.tracer.builder.loc)


# (no Python-level ==, hash or truth: the tracer's own code must never answer for one)
# (nor any other operation: CPython's TypeError for a missing one would be taken for the program's)
for _name in ("len iter getitem contains eq ne hash lt le gt ge bool str format int float index complex neg pos abs "
              "invert round trunc floor ceil add radd sub rsub mul rmul truediv rtruediv floordiv rfloordiv mod rmod "
              "divmod rdivmod pow rpow lshift rlshift rshift rrshift and rand or ror xor rxor matmul rmatmul").split():
    setattr(MixedNumber, f"__{_name}__", _refuse)


def involved(a, b=None) -> bool:
    return isinstance(a, MixedNumber) or isinstance(b, MixedNumber)


def read(tracer, tag, number, real) -> MixedNumber:
    """The item whose fields are these (a tag known only at run time): a MixedNumber, checked to
    be a number (else the call runs the Python function)."""
    b = tracer.builder
    not_number = b.emit("select", (b.compare("eq", tag, NONE_TAG), b.const(True), b.compare("eq", tag, STR_TAG)))
    b.raise_if(not_number, NeedsPython("an item of a list whose items differ in type is not a number"))
    return MixedNumber(tracer, tag, number, real)


def _plain(tracer, x) -> bool:
    """A number of Python's arithmetic: an int, float or bool, traced or not (not NumPy's)."""
    if is_traced(x):
        return not isinstance(x.type, ArrayType) and x.type in (F64, I64, BOOL) and not made_by_numpy(tracer, x)
    return type(x) in (int, float, bool)


def merges(values: list, tracer=None):
    """The tracer, where `values` (one per path of a branch or loop) are MixedNumbers and plain
    numbers, some of each, or (given the tracer) plain numbers: they merge as a MixedNumber
    (states.mixed_layout); else None."""
    tracer = tracer or next((v.tracer for v in values if isinstance(v, MixedNumber)), None)
    if tracer is None or all(isinstance(v, MixedNumber) for v in values) \
            or not all(isinstance(v, MixedNumber) or _plain(tracer, v) for v in values):
        return None
    return tracer


def plain_fields(b, x) -> tuple:
    """The fields (no tracer, tag, number, real) of a plain number as a MixedNumber."""
    kind = b.kind(x)
    if kind == F64:
        return None, FLOAT_TAG, 0, x
    return None, BOOL_TAG if kind == BOOL else INT_TAG, b.convert(x, I64) if is_traced(x) else int(x), 0.0


def _parts(b, x, what: str):
    """(is it a float, its int field, its float field) of an operand: traced or Python bools
    and numbers."""
    if isinstance(x, MixedNumber):
        return b.compare("eq", x.tag, FLOAT_TAG), x.number, x.real
    if not (is_traced(x) or is_number(x)) or b.kind(x) not in (F64, I64, BOOL):
        raise UnsupportedError(f"{what} of a number whose type is known only at run time and "
                               f"{type(x).__name__} is not supported", b.loc)
    if b.kind(x) == F64:
        return True, 0, x
    return False, b.convert(x, I64) if is_traced(x) else int(x), 0.0


def _select(b, cond, a, c):
    if not is_traced(cond):
        return a if cond else c
    return b.emit("select", (cond, b.value(a), b.value(c)))


def _either(b, p, q):
    """p or q, each a Python bool or a traced one."""
    if p is True or q is True:
        return True
    if p is False or q is False:
        return q if p is False else p
    return b.emit("select", (p, b.const(True), q))


def binary(tracer, op: str, x, y):
    """x <op> y for op in add, sub, mul, where either is a MixedNumber."""
    b = tracer.builder
    if op not in ARITHMETIC:
        raise UnsupportedError(f"the operator {op} on a number whose type (int or float) is known only at run "
                               f"time is not supported", b.loc)
    x_float, xi, xf = _parts(b, x, op)
    y_float, yi, yf = _parts(b, y, op)
    is_float = _either(b, x_float, y_float)
    as_float = b.binary(op, _select(b, x_float, xf, b.convert(b.value(xi), F64)),
                        _select(b, y_float, yf, b.convert(b.value(yi), F64)))
    as_int = b.binary(op, xi, yi)          # (a float's int field is 0: past 64 bits only for two ints)
    return MixedNumber(tracer, _select(b, is_float, FLOAT_TAG, INT_TAG), _select(b, is_float, 0, as_int),
                       _select(b, is_float, as_float, 0.0))


def compare(tracer, op: str, x, y):
    """x <op> y (eq ne lt le gt ge), either a MixedNumber: CPython's comparison for the types
    the tags say."""
    b = tracer.builder
    if op not in ("eq", "ne", "lt", "le", "gt", "ge"):
        raise UnsupportedError(f"'{op}' with a number whose type is known only at run time is not supported", b.loc)
    x_float, xi, xf = _parts(b, x, "a comparison")
    y_float, yi, yf = _parts(b, y, "a comparison")
    int_int = b.compare(op, b.value(xi), b.value(yi))
    float_float = b.compare(op, b.value(xf), b.value(yf))
    int_float = b.compare(op, b.value(xi), b.value(yf))
    float_int = b.compare(op, b.value(xf), b.value(yi))
    return _select(b, x_float, _select(b, y_float, float_float, float_int), _select(b, y_float, int_float, int_int))


def truth(tracer, x: MixedNumber):
    b = tracer.builder
    return _select(b, b.compare("eq", x.tag, FLOAT_TAG), b.compare("ne", x.real, 0.0), b.compare("ne", x.number, 0))


def to_float(tracer, x: MixedNumber):
    b = tracer.builder
    return _select(b, b.compare("eq", x.tag, FLOAT_TAG), x.real, b.convert(x.number, F64))


def to_int(tracer, x: MixedNumber):
    """int(x): a float's int() (OverflowError for inf, ValueError for nan: an int's float field
    is 0.0, which never fails) or the int."""
    b = tracer.builder
    return _select(b, b.compare("eq", x.tag, FLOAT_TAG), b.emit("to_i64", (b.value(x.real),)), x.number)


def converted(tracer, x: MixedNumber, what: str):
    """int(x), float(x) or bool(x) (`what`, as tracer.frontend.library names them); a math
    function of one is refused (its int and float forms may differ in more than the type)."""
    make = {"int()": to_int, "float()": to_float, "bool()": truth}.get(what)
    if make is None:
        raise UnsupportedError(f"{what} of a number whose type (int or float) is known only at run time is not "
                               f"supported", tracer.builder.loc)
    return tracer.builder.value(make(tracer, x))


def python_value(tag: int, number: int, real: float):
    """The Python number a returned one stands for."""
    return real if tag == FLOAT_TAG else bool(number) if tag == BOOL_TAG else number
