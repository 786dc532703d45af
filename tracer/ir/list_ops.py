"""The ops on lists whose length changes at run time (type `list[item]`, tracer.ir.types.ListType).

A list is made empty by `list_new` and changed in place by the others, so the handle `list_new`
gives is the same list for the whole function: a branch that appends and one that does not
meet with the same handle, and a loop carries nothing for it. Every list op touches memory
(`effect`): none is folded, merged, moved or dropped, and they run in the order they were traced.

Indices are checked by the front end before an op runs (an `IndexError` raised as CPython's):
`list_get`, `list_set` and `list_delete` take an index in [0, len), `list_insert` one in
[0, len], `list_pop` a list that is not empty. An item is one operand per field (a list of
tuples of numbers holds each tuple's numbers); `list_get` and `list_pop` give the item (a tuple
for a list of tuples). The evaluators hold a list as a Python list of items.
"""
from __future__ import annotations

from tracer.errors import Status
from tracer.ir.registry import define
from tracer.ir.types import BOOL, F64, I64, ArrayType, ListType, TupleType

NOTHING = TupleType(())
ITEM_FIELDS = (F64, I64, BOOL)       # the scalar types a list's items (or their fields) may have


def _check_item(item) -> None:
    fields = item.elements if isinstance(item, TupleType) else (item,)
    if not fields or any(f not in ITEM_FIELDS for f in fields):
        raise TypeError(f"a list holds f64, i64 or bool items or tuples of them, not {item}")


def _new_type(t, a):
    _check_item(a["item"])
    return ListType(a["item"])


def _takes(n_index: int, item_operands: bool, result):
    """A type rule: a list, then `n_index` i64 operands, then (with `item_operands`) one operand
    per field of an item; the result type `result(list_type)`."""
    def rule(t, a):
        if not t or not isinstance(t[0], ListType):
            raise TypeError("takes a list first")
        rest = t[1:]
        if tuple(rest[:n_index]) != (I64,) * n_index:
            raise TypeError("takes an i64 index")
        if item_operands and tuple(rest[n_index:]) != t[0].fields:
            raise TypeError(f"takes one operand per field of an item ({t[0].item})")
        if not item_operands and len(rest) != n_index:
            raise TypeError("takes no item")
        return result(t[0])
    return rule


def _item(fields: tuple):
    return fields[0] if len(fields) == 1 else tuple(fields)


def _append(lst, *fields):
    lst.append(_item(fields))
    return ()


def _set(lst, i, *fields):
    lst[i] = _item(fields)
    return ()


def _insert(lst, i, *fields):
    lst.insert(i, _item(fields))
    return ()


def _delete(lst, i):
    del lst[i]
    return ()


def _array_type(t, a):
    if len(t) != 1 or not isinstance(t[0], ListType):
        raise TypeError("list_array takes one list")
    return ArrayType(t[0].fields[a["field"]], (None,))


def _array(lst, field):
    import numpy
    values = [x[field] if isinstance(x, tuple) else x for x in lst]
    dtype = {bool: numpy.bool_, int: numpy.int64}.get(type(values[0]), numpy.float64) if values else numpy.float64
    return numpy.array(values, dtype=dtype)


define("list_new", "a new, empty list of attrs['item'] items", _new_type, lambda item: [], attrs=("item",),
       effect=True)
define("list_append", "append an item (the operands after the list) to the list", _takes(0, True, lambda t: NOTHING),
       _append, [Status.NO_MEMORY], effect=True)
define("list_get", "the item at index i (0 <= i < len)", _takes(1, False, lambda t: t.item),
       lambda lst, i: lst[i], effect=True)
define("list_set", "replace the item at index i (0 <= i < len)", _takes(1, True, lambda t: NOTHING), _set,
       effect=True)
define("list_len", "the number of items in the list", _takes(0, False, lambda t: I64), len, effect=True)
define("list_pop", "remove the last item (the list is not empty) and give it", _takes(0, False, lambda t: t.item),
       lambda lst: lst.pop(), effect=True)
define("list_insert", "insert an item before index i (0 <= i <= len)", _takes(1, True, lambda t: NOTHING), _insert,
       [Status.NO_MEMORY], effect=True)
define("list_delete", "remove the item at index i (0 <= i < len)", _takes(1, False, lambda t: NOTHING), _delete,
       effect=True)
def _find(lst, *fields):
    key = _item(fields)
    return next((i for i, x in enumerate(lst) if x == key), -1)


define("list_find", "the index of the first item equal to the key (the operands after the list; == of "
       "numbers: -0.0 equals 0.0, a NaN nothing), or -1", _takes(0, True, lambda t: I64), _find,
       [Status.NO_MEMORY], effect=True)
define("list_array", "a new 1-d array of field attrs['field'] of every item (the items for a list of numbers)",
       _array_type, _array, [Status.NO_MEMORY], attrs=("field",), effect=True)
