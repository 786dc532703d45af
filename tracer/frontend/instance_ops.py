"""Operators, Python's protocols and builtins on instances of user classes made in the trace
(tracer.frontend.instances): the class's special methods, inlined, with CPython's dispatch rules
(the reflected method first when the right operand's class is a subclass that overrides it; a
dunder returning `NotImplemented` passes the turn; `a += b` tries `__iadd__` then `__add__`; `==`
falls back to identity; `bool()` tries `__bool__` then `__len__`).

The interpreter's opcode handlers call in here where an operand is a TracedInstance (BINARY_OP,
COMPARE_OP, BINARY_SUBSCR, STORE_SUBSCR, CONTAINS_OP, IS_OP, truth tests, CALL); where it hands
an instance to Python itself (abs(), -x, iteration, sum()), the Python special methods installed
on TracedInstance below do the same.
"""
from __future__ import annotations

import types

from tracer.frontend.builder import is_traced
from tracer.frontend.instances import (
    MISSING,
    OBJECT_SLOTS,
    InstanceIterator,
    TracedInstance,
    call_method,
    class_attribute,
    get_attribute,
    has_dict,
    instantiate,
    is_user_class,
    make_super,
    own_attribute,
    python_type,
    set_attribute,
    special_method,
)
from tracer.frontend.objects import NULL, BoundMethod, ExternalList, ExternalObject
from tracer.frontend.sources import ABSENT
from tracer.ir import BOOL, I64

NOT_HANDLED = object()
BINARY_DUNDERS = {"add": "add", "sub": "sub", "mul": "mul", "div": "truediv", "floordiv": "floordiv",
                  "mod": "mod", "pow": "pow", "matmul": "matmul", "bit_and": "and", "bit_or": "or",
                  "bit_xor": "xor", "lshift": "lshift", "rshift": "rshift"}
BINARY_SYMBOLS = {"add": "+", "sub": "-", "mul": "*", "div": "/", "floordiv": "//", "mod": "%", "pow": "**",
                  "matmul": "@", "bit_and": "&", "bit_or": "|", "bit_xor": "^", "lshift": "<<", "rshift": ">>"}
# BinaryOp names (bytecode) -> the names above
BINARY_OP_NAMES = {"ADD": "add", "SUBTRACT": "sub", "MULTIPLY": "mul", "TRUE_DIVIDE": "div",
                   "FLOOR_DIVIDE": "floordiv", "REMAINDER": "mod", "POWER": "pow", "MATRIX_MULTIPLY": "matmul",
                   "AND": "bit_and", "OR": "bit_or", "XOR": "bit_xor", "LSHIFT": "lshift", "RSHIFT": "rshift"}
REFLECTED_COMPARISON = {"lt": "gt", "gt": "lt", "le": "ge", "ge": "le", "eq": "eq", "ne": "ne"}
COMPARE_SYMBOLS = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}


# ------------------------------------------------------------------------------ operators
def _call_special(tracer, method, self_obj, *args):
    if method is MISSING:
        return NotImplemented
    return call_method(tracer, method, self_obj, list(args))


def _check_operand(tracer, x):
    if isinstance(x, (ExternalObject, BoundMethod)):
        raise tracer.error(f"an operator between {x!r} and an object made in the trace is not supported")


def involved(*operands) -> bool:
    return any(isinstance(x, TracedInstance) for x in operands)


def binary(tracer, op: str, a, b, inplace: bool = False):
    """`a <op> b` (or `a <op>= b`) where an operand is a TracedInstance (CPython's dispatch)."""
    _check_operand(tracer, a)
    _check_operand(tracer, b)
    name = BINARY_DUNDERS[op]
    if inplace:
        result = _call_special(tracer, special_method(a, f"__i{name}__"), a, b)
        if result is not NotImplemented:
            return result
    ta, tb = python_type(a), python_type(b)
    left = special_method(a, f"__{name}__")
    right = special_method(b, f"__r{name}__") if tb is not ta else MISSING
    if right is not MISSING and issubclass(tb, ta) and right is not own_attribute(ta, f"__r{name}__"):
        result = _call_special(tracer, right, b, a)      # a subclass's reflected method goes first
        if result is not NotImplemented:
            return result
        right = MISSING
    for method, x, y in ((left, a, b), (right, b, a)):
        result = _call_special(tracer, method, x, y)
        if result is not NotImplemented:
            return result
    symbol = BINARY_SYMBOLS[op] + ("=" if inplace else "")
    raise TypeError(f"unsupported operand type(s) for {symbol}: '{ta.__name__}' and '{tb.__name__}'")


def binary_operator(tracer, arg, a, b):
    """BINARY_OP with its bytecode argument (a BinaryOp), for operators without a numeric op."""
    name = arg.name
    return binary(tracer, BINARY_OP_NAMES[name.replace("INPLACE_", "")], a, b, inplace=name.startswith("INPLACE_"))


def unary(inst: TracedInstance, name: str, what: str):
    method = special_method(inst, name)
    if method is MISSING:
        raise TypeError(f"bad operand type for {what}: '{inst.cls.__name__}'")
    return call_method(inst.tracer, method, inst, [])


def identical(tracer, a, b) -> bool:
    """`a is b` with a TracedInstance."""
    if a is b:
        return True
    if any(isinstance(x, TracedInstance) and x.frozen for x in (a, b)):
        raise tracer.error("'is' with an object that depends on a traced condition or loop is not supported")
    return False


def _rich_compare(tracer, method, x, y, op: str):
    """One side's comparison method; object's defaults as CPython's."""
    if method is MISSING:
        return NotImplemented
    if method is OBJECT_SLOTS["__eq__"]:
        return True if identical(tracer, x, y) else NotImplemented
    if method is OBJECT_SLOTS["__ne__"]:
        result = _rich_compare(tracer, special_method(x, "__eq__"), x, y, "eq")
        return result if result is NotImplemented else tracer.builder.logical_not(truth_value(tracer, result))
    if method in OBJECT_SLOTS.values():
        return NotImplemented
    return call_method(tracer, method, x, [y])


def compare(tracer, op: str, a, b):
    """`a <op> b` where an operand is a TracedInstance (CPython's rich comparison)."""
    _check_operand(tracer, a)
    _check_operand(tracer, b)
    ta, tb = python_type(a), python_type(b)
    reflected = REFLECTED_COMPARISON[op]
    left = special_method(a, f"__{op}__")
    right = special_method(b, f"__{reflected}__")
    order = [(left, a, b, op), (right, b, a, reflected)]
    if tb is not ta and issubclass(tb, ta) and right is not MISSING:
        order.reverse()
    for method, x, y, which in order:
        result = _rich_compare(tracer, method, x, y, which)
        if result is not NotImplemented:
            return result
    if op in ("eq", "ne"):
        same = identical(tracer, a, b)
        return same if op == "eq" else not same
    raise TypeError(f"'{COMPARE_SYMBOLS[op]}' not supported between instances of '{ta.__name__}' and "
                    f"'{tb.__name__}'")


def truth_value(tracer, x):
    """bool(x) for a comparison's or special method's result: a Python or traced bool."""
    if isinstance(x, TracedInstance):
        return truth(tracer, x)
    if is_traced(x):
        return tracer.builder.truth(x)
    if isinstance(x, (ExternalList, ExternalObject, BoundMethod)):
        raise tracer.error(f"the truth value of {x!r} here is not supported")
    return bool(x)


def truth(tracer, inst: TracedInstance):
    """bool(inst): __bool__, else __len__, else True (CPython's order)."""
    method = special_method(inst, "__bool__")
    if method is not MISSING:
        result = call_method(tracer, method, inst, [])
        if not (type(result) is bool or (is_traced(result) and result.type == BOOL)):
            raise TypeError(f"__bool__ should return bool, returned {python_type(result).__name__}")
        return result
    if special_method(inst, "__len__") is not MISSING:
        n = length(tracer, inst)
        return tracer.builder.compare("ne", n, 0) if is_traced(n) else n != 0
    for klass in inst.cls.__mro__[:-1]:      # adding __bool__ or __len__ later recompiles
        for name in ("__bool__", "__len__"):
            tracer.guard_binding(klass.__dict__, name, ABSENT, f"{name!r} not in vars({klass.__name__})")
    return True


def length(tracer, inst: TracedInstance):
    method = special_method(inst, "__len__")
    if method is MISSING:
        raise TypeError(f"object of type '{inst.cls.__name__}' has no len()")
    n = call_method(tracer, method, inst, [])
    if is_traced(n) and n.type in (I64, BOOL):
        tracer.builder.raise_if(tracer.builder.compare("lt", n, 0), ValueError("__len__() should return >= 0"))
        return n
    if type(n) not in (int, bool):
        raise TypeError(f"'{python_type(n).__name__}' object cannot be interpreted as an integer")
    if n < 0:
        raise ValueError("__len__() should return >= 0")
    return int(n)


def get_item(tracer, inst: TracedInstance, index):
    method = special_method(inst, "__getitem__")
    if method is MISSING:
        raise TypeError(f"'{inst.cls.__name__}' object is not subscriptable")
    return call_method(tracer, method, inst, [index])


def set_item(tracer, inst: TracedInstance, index, value) -> None:
    method = special_method(inst, "__setitem__")
    if method is MISSING:
        raise TypeError(f"'{inst.cls.__name__}' object does not support item assignment")
    call_method(tracer, method, inst, [index, value])


def contains(tracer, inst: TracedInstance, item, items_equal):
    """`item in inst`: __contains__, else comparing with each item __iter__ gives (CPython's order;
    `items_equal` is the interpreter's item comparison, identity first)."""
    method = special_method(inst, "__contains__")
    if method is not MISSING:
        return truth_value(tracer, call_method(tracer, method, inst, [item]))
    found = False
    for x in iter(inst):
        found = tracer.builder.concretize(items_equal(tracer, x, item), "an 'in' test")
        if found:
            break
    return found


# ------------------------------------------------------------------------------ calls
def _attribute_name(tracer, name) -> str:
    if type(name) is not str:
        raise tracer.error("getattr()/setattr()/hasattr() with a name that is not a constant string is not supported")
    return name


def call(tracer, fn, args: list, kwargs: dict):
    """A call the interpreter makes that involves instances made in the trace: a user class (a
    new instance), an instance (__call__), or a builtin applied to an instance. NOT_HANDLED
    for every other call."""
    if is_user_class(fn):
        tracer.result_dropped = False
        return instantiate(tracer, fn, args, kwargs)
    if isinstance(fn, TracedInstance):
        tracer.result_dropped = False
        method = special_method(fn, "__call__")
        if method is MISSING:
            raise TypeError(f"'{fn.cls.__name__}' object is not callable")
        return call_method(tracer, method, fn, list(args), kwargs)
    if fn is type and len(args) == 1 and not kwargs:
        return type_of(tracer, args[0])
    if fn is super and len(args) == 2 and not kwargs and isinstance(args[1], TracedInstance):
        tracer.result_dropped = False
        return make_super(tracer, args[0], args[1])
    if not args or not isinstance(args[0], TracedInstance) or kwargs:
        return NOT_HANDLED
    inst, rest = args[0], args[1:]
    handled = _BUILTINS.get(_key(fn))
    if handled is None:
        return NOT_HANDLED
    tracer.result_dropped = False
    return handled(tracer, inst, *rest)


def type_of(tracer, x) -> type:
    """`type(x)`: the class of what `x` stands for (an instance made in the trace, a traced
    number, an object from outside), never one of the tracer's own classes."""
    cls = python_type(x)
    if cls.__module__.split(".")[0] == "tracer" or (cls is object and is_traced(x)):
        raise tracer.error(f"type() of this value ({type(x).__name__}) is not supported")
    return cls


def _key(fn):
    try:
        return fn if hash(fn) is not None else None
    except TypeError:
        return None


def _getattr(tracer, inst, name, default=NULL):
    name = _attribute_name(tracer, name)
    try:
        return get_attribute(tracer, inst, name)
    except AttributeError:
        if default is NULL:
            raise
        return default


def _hasattr(tracer, inst, name):
    try:
        _getattr(tracer, inst, name)
    except AttributeError:
        return False
    return True


def _setattr(tracer, inst, name, value):
    set_attribute(tracer, inst, _attribute_name(tracer, name), value)


def _object_setattr(tracer, inst, name, value):     # object.__setattr__(self, ...): a frozen dataclass
    name = _attribute_name(tracer, name)
    raw = class_attribute(tracer, inst.cls, name)
    if isinstance(raw, property) or (not isinstance(raw, types.MemberDescriptorType) and not has_dict(inst.cls)):
        raise tracer.error(f"object.__setattr__ of .{name} of a {inst.cls.__name__} object is not supported")
    if inst.frozen:
        raise tracer.error(f"assigning .{name} of a {inst.cls.__name__} object that depends on a traced "
                           f"condition or loop is not supported")
    inst.store(name, value)


def _next(tracer, inst, *default):
    if default:
        raise tracer.error("next() with a default on an object made in the trace is not supported")
    method = special_method(inst, "__next__")
    if method is MISSING:
        raise TypeError(f"'{inst.cls.__name__}' object is not an iterator")
    return call_method(tracer, method, inst, [])


def _type(tracer, inst, *rest):
    if rest:
        return NOT_HANDLED
    return inst.cls


_BUILTINS = {
    len: lambda tracer, inst: length(tracer, inst),
    bool: lambda tracer, inst: truth(tracer, inst),
    type: _type,
    getattr: _getattr,
    hasattr: _hasattr,
    setattr: _setattr,
    object.__setattr__: _object_setattr,
    next: _next,
    abs: lambda tracer, inst: unary(inst, "__abs__", "abs()"),
}


# ------------------------------------------------------------------------------ Python's protocols
    # iteration, len()): the class's special method, inlined
def _neg(self):
    return unary(self, "__neg__", "unary -")

def _pos(self):
    return unary(self, "__pos__", "unary +")

def _invert(self):
    return unary(self, "__invert__", "unary ~")

def _abs(self):
    return unary(self, "__abs__", "abs()")

def _iter(self):
    method = special_method(self, "__iter__")
    if method is MISSING:
        raise TypeError(f"'{self.cls.__name__}' object is not iterable")
    it = call_method(self.tracer, method, self, [])
    if isinstance(it, TracedInstance):
        if special_method(it, "__next__") is MISSING:
            raise TypeError(f"iter() returned non-iterator of type '{it.cls.__name__}'")
        return InstanceIterator(it)
    return it

def _bool(self):
    t = truth(self.tracer, self)
    if is_traced(t):
        raise self.tracer.error(f"the truth value of a {self.cls.__name__} object that is known only at run "
                                f"time is not supported here")
    return t

def _len(self):
    n = length(self.tracer, self)
    if is_traced(n):
        raise self.tracer.error(f"len() of a {self.cls.__name__} object that is known only at run time is "
                                f"not supported here")
    return n


def _python_operator(op: str, reflected: bool = False, inplace: bool = False):
    """A Python operator on a TracedInstance (where the interpreter hands one to Python: sum(),
    a builtin's arithmetic): the class's special methods with CPython's dispatch (`binary`)."""
    if reflected:
        return lambda self, other: binary(self.tracer, op, other, self)
    return lambda self, other: binary(self.tracer, op, self, other, inplace)


for _op, _name in BINARY_DUNDERS.items():
    setattr(TracedInstance, f"__{_name}__", _python_operator(_op))
    setattr(TracedInstance, f"__r{_name}__", _python_operator(_op, reflected=True))
    setattr(TracedInstance, f"__i{_name}__", _python_operator(_op, inplace=True))


for _name, _method in [("__neg__", _neg), ("__pos__", _pos), ("__invert__", _invert), ("__abs__", _abs),
                       ("__iter__", _iter), ("__bool__", _bool), ("__len__", _len)]:
    setattr(TracedInstance, _name, _method)


# ------------------------------------------------------------------------------------ class statements
def build_class(tracer, body, name, *bases, **kwargs):
    """A `class` statement inside the traced function (builtins.__build_class__): the class is
    made by CPython at trace time, its body run on constants, and is a constant of the trace.
    A body that reads the function's variables (a closure) is not supported."""
    if type(body).__name__ != "SymbolicFunction" or not isinstance(name, str) \
            or not all(isinstance(b, type) for b in bases) or kwargs \
            or any(c.contents is not NULL for c in body.closure):
        raise tracer.error(f"a class statement ({name}) whose body reads the function's variables, or with "
                           f"bases or keywords known only at run time, is not supported")
    import builtins
    for cell in body.closure:            # the class's own name, which its methods read once it is made
        cell.real = types.CellType()
    closure = tuple(cell.real for cell in body.closure)
    return builtins.__build_class__(types.FunctionType(body.code, body.globals, name, None, closure), name, *bases)
