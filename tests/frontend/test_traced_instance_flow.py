"""Instances of user classes made inside traced code where paths meet (branches, loops), and
escaping (returned as real objects); the corpus programs that use classes. The oracle is
CPython; `trace(fn, fullgraph=True)` proves the code compiled."""
from __future__ import annotations

import dataclasses
import pathlib
import sys

import pytest
from traced_classes import (
    Body,
    Particle,
    Point,
    Tally,
    Vec,
    compiled,
    same,
)

from tracer import trace
from tracer.errors import TracerError


# ------------------------------------------------------------------------------ merging
def test_instance_assigned_in_both_arms():
    def f(c):
        if c > 0:
            v = Vec(c, 1.0)
        else:
            v = Vec(2.0, c)
        return v.x + v.y, abs(v)
    same(f, 1.5)
    same(f, -1.5)


def test_instance_mutated_in_one_arm_keeps_identity():
    def f(c):
        v = Vec(1.0, 2.0)
        alias = v
        if c > 0:
            v.x = c
        return alias.x, v.y, alias is v
    same(f, 3.0)
    same(f, -3.0)


def test_nbody_like_loop():
    def f(n, dt):
        pos, vel = Vec(0.0, 1.0), Vec(1.0, 0.0)
        for _ in range(n):
            r = abs(pos)
            acc = pos * (-1.0 / (r * r * r))
            vel = vel + acc * dt
            pos = pos + vel * dt
        return pos.x, pos.y, vel.x, vel.y
    same(f, 100, 0.01)
    same(f, 0, 0.01)


def test_loop_with_branch_replacing_instance():
    def f(n, dt):
        pos, vel = Vec(0.0, 0.0), Vec(1.0, 0.5)
        for _ in range(n):
            pos = pos + vel * dt
            if pos.x > 3.0:
                vel = Vec(-vel.x, vel.y)
        return pos.x, pos.y
    same(f, 10, 0.5)
    same(f, 3, 0.5)


def test_particles_in_a_box():
    """The corpus's particles_in_a_box with its class at module level: objects holding objects,
    mutated in place under traced conditions inside a traced loop."""
    def f(steps, dt):
        ps = [Particle(Vec(0.1 * k, 0.05 * k), Vec(0.7 - 0.1 * k, 0.3 + 0.2 * k)) for k in range(4)]
        bounces = 0
        for _ in range(steps):
            for p in ps:
                before = p.vel
                p.step(dt)
                if p.vel != before:
                    bounces += 1
        momentum = Vec(0.0, 0.0)
        for p in ps:
            momentum = momentum + p.vel
        return bounces, tuple(momentum), tuple(ps[0].pos)
    same(f, 40, 0.05)
    same(f, 2, 0.05)


def test_object_held_by_the_caller_mutated_in_a_method_loop():
    def f(x, n):
        t = Tally()
        t.run(x, n)
        t.run(x, 2)
        return t.total, t.count
    same(f, 1.5, 10)
    same(f, 1.5, 0)


def test_different_classes_on_two_paths_is_a_clear_error():
    def f(c):
        v = Vec(c, c) if c > 0 else Point(c)
        return v.x
    try:        # (3.12+ may run the rest of the function once per path: nothing to merge then)
        assert compiled(f)(1.0) == 1.0
    except TracerError as exc:
        assert "Vec object on one path and a Point object" in str(exc)
    assert trace(f)(1.0) == 1.0 and trace(f)(-1.0) == -1.0


def test_mutating_a_merged_instance_is_a_graph_break():
    def f(c):
        v = Vec(c, 1.0) if c > 0 else Vec(2.0, c)
        v.x = 5.0
        return v.x + v.y
    with pytest.raises(TracerError):
        compiled(f)(1.0)
    assert trace(f)(1.0) == f(1.0) and trace(f)(-1.0) == f(-1.0)


# ------------------------------------------------------------------------------ escaping
def state(obj):
    """An object's class and attribute values (slots included), recursively."""
    if isinstance(obj, tuple):
        return tuple(state(x) for x in obj)
    if type(obj).__module__ in (__name__, "traced_classes") or dataclasses.is_dataclass(obj):
        names = getattr(type(obj), "__slots__", None) or list(vars(obj))
        return type(obj), tuple((n, state(getattr(obj, n))) for n in names)
    return obj


def test_escaping_instances_are_real_objects():
    def f(a, b, n):
        v = Vec(a, b) * 2.0
        body = Body(Vec(a, a), v, "probe")
        for _ in range(n):
            body.pos = body.pos + body.vel * 0.5
        return v, a + b, v, Point(a), body
    fn = compiled(f)
    for args in [(1.0, 2.0, 3), (3.0, -1.0, 0)]:
        got, expected = fn(*args), f(*args)
        assert state(got) == state(expected)
        assert got[0] is got[2] and got[4].vel is got[0]        # one object per instance of the trace
        assert list(vars(got[4])) == list(vars(expected[4]))    # attributes in CPython's order


def test_escaping_into_an_argument_runs_as_python():
    class Box:
        pass

    def f(box, a):
        box.content = Vec(a, a)
        return a

    box, plain = Box(), Box()
    with pytest.raises(TracerError):
        compiled(f)(Box(), 1.0)
    assert trace(f)(box, 2.0) == f(plain, 2.0)
    assert state(box.content) == state(plain.content)


def test_unsupported_class_is_a_clear_error():
    class WithNew:
        def __new__(cls, *args):
            return object.__new__(cls)

    def f(a):
        return WithNew(a) is not None
    with pytest.raises(TracerError, match="defines __new__"):
        compiled(f)(1.0)


# ------------------------------------------------------------------------------ the corpus
@pytest.mark.parametrize("name", ["polygon_centroid", "monte_carlo_pi", "random_walk_histogram",
                                  "reservoir_and_moments", "xorshift_shuffle", "xorshift_zero_seed"])
def test_corpus_programs_with_classes(name):
    sys.path.insert(0, str(pathlib.Path(__file__).parent.parent / "support"))
    import py_programs_a
    import py_programs_b
    programs = {n: (fn, make) for part in (py_programs_a, py_programs_b) for n, fn, make in part.PROGRAMS}
    fn, make_args = programs[name]

    def outcome(f):
        try:
            return f(*make_args())
        except Exception as exc:
            return type(exc), str(exc)
    assert outcome(trace(fn)) == outcome(fn)
