"""Instances of user classes created inside traced code (tracer.frontend.instances, instance_ops):
creating them, their attributes, operators and protocols. The oracle is CPython;
`trace(fn, fullgraph=True)` proves the code compiled. (Merging and escaping:
test_traced_instance_flow.py.)"""
from __future__ import annotations

import pytest
from traced_classes import (
    LCG,
    Account,
    Bag,
    Counter,
    Feet,
    Grid,
    Meters,
    Plain,
    Point,
    ScaledSquare,
    Shape,
    Square,
    Vec,
    Walk,
    compiled,
    same,
)

from tracer import trace
from tracer.errors import TracerError


# ------------------------------------------------------------------------------ creating, attributes
def test_vec_operators():
    def f(a, b):
        v = Vec(a, b)
        w = v + Vec(1.0, 2.0) * 3.0
        u = 2.0 * -w
        return u.x, u.y, abs(u), v.dot(w), v @ w, (+v).x, (w / 2.0).y
    same(f, 1.5, 2.5)
    same(f, -3.0, 0.25)


def test_comparisons_and_equality():
    def f(a, b):
        v, w = Vec(a, b), Vec(b, a)
        return v == w, v != w, v < w, w > v, v == Vec(a, b), v == 3.0, v != None  # noqa: E711
    same(f, 1.0, 2.0)
    same(f, 2.0, 2.0)


def test_ordering_without_method_is_python_type_error():
    def f(a):
        p = Plain()
        return p < a
    with pytest.raises(TypeError, match="'<' not supported between instances of 'Plain' and 'float'"):
        compiled(f)(1.0)


def test_unsupported_operand_type_error():
    def f(a):
        return Vec(a, a) + 1.0
    with pytest.raises(TypeError) as exc:
        f(1.0)
    with pytest.raises(TypeError) as got:
        compiled(f)(1.0)
    assert str(got.value) == str(exc.value)


def test_iteration_and_tuple():
    def f(a, b):
        x, y = Vec(a, b) * 2.0
        return tuple(Vec(a, b)), x + y, tuple(list(Vec(b, a)))
    same(f, 1.0, 2.0)


def test_isinstance_and_type_fold():
    def f(a):
        v = Vec(a, a)
        return isinstance(v, Vec), isinstance(v, Account), type(v) is Vec, isinstance(v, object)
    same(f, 1.0)


def test_slots_attribute_errors_match_cpython():
    def set_missing(a):
        v = Vec(a, a)
        v.z = a
        return v.x

    def read_unset(a):
        p = Plain()
        return p.nothing

    for fn in (set_missing, read_unset):
        with pytest.raises(AttributeError) as expected:
            fn(1.0)
        with pytest.raises(AttributeError) as got:
            compiled(fn)(1.0)
        assert str(got.value) == str(expected.value)


def test_property_classmethod_staticmethod_class_attribute():
    def f(x):
        acct = Account(x)
        acct.balance = acct.balance + 10.0
        other = Account.empty()
        other.balance = Account.fee(x) + acct.interest
        return acct.balance, other.balance, acct.rate, Account.rate
    same(f, 100.0)


def test_property_setter_raises():
    def f(x):
        acct = Account(1.0)
        acct.balance = x
        return acct.balance
    assert compiled(f)(5.0) == 5.0
    with pytest.raises(ValueError, match="negative balance"):
        compiled(f)(-1.0)


def test_inplace_falls_back_and_iadd():
    def f(a, b):
        v = Vec(a, b)
        v += Vec(1.0, 1.0)            # no __iadd__: v = v + ...
        acct = Account(a)
        acct += b                     # __iadd__ mutates and returns self
        return v.x, v.y, acct.balance
    same(f, 1.0, 2.0)


def test_bool_in_condition():
    def f(x):
        acct = Account(x)
        if acct:
            return 1.0
        return -1.0
    same(f, 3.0)
    same(f, -3.0)


def test_len_call_and_truth_by_len():
    def f(k):
        c = Counter()
        c(k)
        c(2)
        return len(c), c.n, bool(c), c(0)
    same(f, 3)


def test_getitem_setitem_with_tuple_keys():
    def f(n, omega):
        g = Grid(n, n, 1.0)
        for y in range(1, n - 1):
            for x in range(1, n - 1):
                g[x, y] = omega * (g[x - 1, y] + g[x + 1, y]) / 4.0
        return sum(g.cells), len(g), g[1, 1]
    same(f, 5, 1.5)


def test_reflected_operators_and_subclass_first():
    def f(a, b):
        total = sum([Meters(a), Meters(b)])          # 0 + Meters: __radd__
        mixed = Meters(a) + Feet(b)                  # Feet.__radd__ goes first
        return total.v, type(mixed) is Feet, mixed.v
    same(f, 1.0, 2.0)


def test_inheritance_and_super():
    def f(a):
        s, t = Square(a, 2.0), ScaledSquare(a)
        return s.describe(), t.describe(), isinstance(t, Shape), Shape(a).area()
    same(f, 3.0)


def test_contains_iteration_and_attribute_builtins():
    def f(a, b):
        bag = Bag(a, b, 3.0)
        total = 0.0
        for x in Walk(4):
            total += x
        v = Vec(a, b)
        setattr(v, "x", b)  # noqa: B010 (the builtin is what is tested)
        return (a in bag, 7.0 in bag, 3.0 in list(bag), total, getattr(v, "x"), getattr(v, "z", -1.0),  # noqa: B009
                hasattr(v, "y"), hasattr(v, "z"))
    same(f, 1.0, 2.0)


def test_identity_of_merged_instances_is_not_guessed():
    def f(c):
        a, b = Vec(1.0, c), Vec(2.0, c)
        v = a if c > 0 else b
        return v is a
    with pytest.raises(TracerError):
        compiled(f)(1.0)
    assert trace(f)(1.0) is True and trace(f)(-1.0) is False


def test_dataclass():
    def f(a):
        p = Point(a)
        q = Point(a, 2.0)
        return p.norm2() + q.norm2(), p == Point(a, 0.0), q.y
    same(f, 3.0)


def test_mutation_through_methods_in_a_loop():
    def f(seed, n):
        rng = LCG(seed)
        hits = 0
        for _ in range(n):
            x, y = rng.random(), rng.random()
            if x * x + y * y <= 1.0:
                hits += 1
        return hits, rng.state
    same(f, 12345, 1000)
    same(f, 7, 5)
