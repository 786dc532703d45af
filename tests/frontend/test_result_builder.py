"""The loaded path's result made by generated code (tracer.frontend.results): the same Python
value as `instances.materialize` walking the shape (the oracle here), and, end to end, as CPython."""
import copy

from tracer import trace
from tracer.frontend.instances import materialize
from tracer.frontend.results import build_result, result_builder


class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y
        self.kind = "point"


def show(x) -> str:
    """repr, with objects shown by their class and attributes."""
    if isinstance(x, (list, tuple)):
        return type(x).__name__ + "[" + ", ".join(map(show, x)) + "]"
    if hasattr(x, "__dict__"):
        return f"{type(x).__name__}({show(list(vars(x).items()))})"
    return repr(x)


def same(shape, result):
    built, walked = result_builder(shape)(result), materialize(shape, result)
    assert show(built) == show(walked)
    assert type(built) is type(walked)
    return built


def test_tuples_and_lists_of_numbers():
    shape = ("tuple", [("list", 0, [None, None, None]), None, ("list", 1, [("tuple", [None, ("constant", "a")])])])
    built = same(shape, ((1.0, 2.0, 3.0), 7, ((4, ()),)))
    assert built == ([1.0, 2.0, 3.0], 7, [(4, "a")])
    assert same(("list", 0, []), ()) == []
    assert same(("tuple", [("constant", None)]), (None,)) == (None,)


def test_instances_with_constant_fields():
    shape = ("list", 0, [("instance", 1, Point, [("x", None), ("y", None), ("kind", ("constant", "point"))]),
                         ("instance", 2, Point, [("x", None), ("y", None), ("kind", ("constant", "point"))])])
    a, b = same(shape, ((1.0, 2.0), (3.0, 4.0)))
    assert type(a) is Point and (a.x, a.y, a.kind, b.x, b.y) == (1.0, 2.0, "point", 3.0, 4.0)
    assert a is not b


def test_the_same_list_twice_stays_one_list():
    inner = ("list", 1, [None, None])
    shape = ("tuple", [inner, inner])
    first, second = same(shape, ((1, 2), (1, 2)))
    assert first is second                       # made by materialize: one list, as CPython returned
    first, second = build_result(shape, ((1, 2), (1, 2)))
    assert first is second


def test_rare_kinds_inside_are_walked():
    shape = ("tuple", [("set constant", (1, 2)), ("optional", None), ("optional", None), None])
    assert same(shape, ((), (True, 2.5), (False, 0.0), 3)) == ({1, 2}, 2.5, None, 3)


def test_lists_of_run_time_length_and_array_arrays():
    import numpy as np

    from tracer.frontend.run_time_strings import StrField
    from tracer.ir import F64, I64, TupleType

    ints, floats = np.array([3, -1, 7]), np.array([0.5, -2.0, 1e300])
    pair, nested = TupleType((I64, F64)), TupleType((I64, TupleType((StrField(), F64))))
    shape = ("tuple", [("records", I64, ()), ("records", pair, ()), ("records", None, ()),
                       ("records", nested, ("a", "b")), ("array.array", 0, "d", ("list", 1, [None, None]))])
    result = ((ints,), (ints, floats), (), (ints, np.array([1, 0, 1]), floats), (2.5, -1.0))
    built = same(shape, result)
    assert built[:4] == ([3, -1, 7], [(3, 0.5), (-1, -2.0), (7, 1e300)], [],
                         [(3, ("b", 0.5)), (-1, ("a", -2.0)), (7, ("b", 1e300))])
    assert [type(x) for x in built[1][0]] == [int, float] and repr(built[4]) == "array('d', [2.5, -1.0])"


def test_strings_of_the_run_time_table_and_dicts_of_run_time_size():
    import numpy as np

    from tracer.frontend.run_time_strings import StrField
    from tracer.ir import I64

    table = ("ada", "grace", "alan")
    shape = ("tuple", [("string", None, table, (False,)), ("dict", ("records", StrField(), table), ("records", I64, table)),
                       ("records", StrField(), table), ("string", "-", table, (False, True))])
    result = ((2,), ((np.array([1, 0]),), (np.array([36, 45]),)), (np.array([0, 0, 2]),), (1, np.array([2, 0])))
    assert same(shape, result) == ("alan", {"grace": 36, "ada": 45}, ["ada", "ada", "alan"], "grace-alan-ada")


def test_a_deep_or_long_shape_is_walked():
    deep = None
    for k in range(60):
        deep = ("list", k, [deep])
    result = 1.0
    for _ in range(60):
        result = (result,)
    assert same(deep, result) == materialize(deep, result)
    long = ("list", 0, [("tuple", [None, ("constant", "x")])] * 5000)
    same(long, ((1, ()),) * 5000)


def table(coeffs, xs):
    out = []
    for x in xs:
        p = 0.0
        for c in coeffs:
            p = p * x + c
        out.append((x, p, [p, -p]))
    return out, Point(xs[0], xs[-1])


def test_end_to_end_as_cpython():
    traced = trace(table)
    args = ([2.0, -6.0, 2.0, -1.0], [-2.0, -0.5, 0.0, 0.25, 1.0, 3.0])
    for _ in range(3):
        got, want = traced(*copy.deepcopy(args)), table(*copy.deepcopy(args))
        assert repr(got[0]) == repr(want[0])
        assert vars(got[1]) == vars(want[1])


# ------------------------------------------------------------------ the loader's aliasing check
def running_sums(ys, dx, out):
    total = 0.0
    out[0] = total
    for i in range(1, len(out)):
        total += (ys[i - 1] + ys[i]) * dx / 2
        out[i] = total
    return total


def two_outputs(a, b, c, d, out1, out2):
    for i in range(len(out1)):
        out1[i] = a[i] + b[i] + c[0] * d[1]
        out2[i] = out1[i] * 2.0
    return out1[0]


def test_lists_written_and_read_alias_as_in_cpython():
    ys = [0.0, 0.5, 1.5, 2.0, 1.0, -0.5, -1.0, 0.25]
    traced = trace(running_sums)
    for args in ((ys, 0.1, [0.0] * 8), (ys, 0.1, ys)):      # the second: out is ys
        mine, theirs = copy.deepcopy(args), copy.deepcopy(args)
        assert repr(traced(*mine)) == repr(running_sums(*theirs))
        assert repr(mine) == repr(theirs)
    shared = list(ys)
    want = list(ys)
    assert traced(shared, 0.1, shared) == running_sums(want, 0.1, want) and shared == want


def test_many_lists_written_and_read_alias_as_in_cpython():
    traced = trace(two_outputs)
    xs = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]
    fresh = lambda: [list(xs), list(xs), list(xs), list(xs), [0.0] * 9, [0.0] * 9]
    for which in (None, (4, 5), (0, 4), (2, 5), (3, 4)):
        mine, theirs = fresh(), fresh()
        if which:
            i, j = which
            mine[j], theirs[j] = mine[i], theirs[i]
        assert repr(traced(*mine)) == repr(two_outputs(*theirs))
        assert repr(mine) == repr(theirs)
