"""`cmath` inside a trace: CPython's Modules/cmathmodule.c, step for step, on the float pairs of
tracer.frontend.complexes (a real argument is complex(x, 0.0) first, as CPython converts it).

    exp, log (and log(z, base)), log10, sqrt, sin, cos, tan, sinh, cosh, tanh, atan, atanh
    phase, polar, rect, isfinite, isinf, isnan, isclose
    asin, acos, asinh, acosh      on trace-time constants only (C's asinh is not an op yet)

Trace-time constants call the real function. Traced values emit IR: every branch of the C code
is computed and `select` picks one, so an op that can raise (exp, cosh, sinh overflow; log of
zero) only ever sees the inputs of its own branch (the others are replaced by harmless ones).
A part that is an infinity or a NaN picks its entry of the function's special-value table (7 x 7
kinds of the two parts: -inf, negative, -0.0, +0.0, positive, +inf, NaN), read from the running
cmath at import, with the C code's formulas where an entry depends on the value (exp(inf + yj)).
Errors are CPython's: ValueError("math domain error") where the C code sets EDOM,
OverflowError("math range error") where it sets ERANGE; cmath.log(z, base) keeps only the
base's error and the division's, as CPython does (cmath.log(0, 2) is (-inf+nanj)); phase is
OverflowError where glibc's atan2 underflows to 0 (it sets ERANGE; found out at import).
Results are CPython's bits with `@trace(fuse_fma=False)`, as for complex arithmetic.

cmath calls the C library's hypot, not math.hypot's algorithm (they differ in the last bit of
about 1 result in 300): the `c_hypot` op, a call of the C library's.
"""
from __future__ import annotations

import cmath
import math
import sys

from tracer.frontend.builder import is_traced
from tracer.frontend.complexes import TracedComplex, quotient
from tracer.frontend.math_more import as_float, check
from tracer.frontend.numpy_scalars import made_by_numpy
from tracer.frontend.opcodes.containers import proxy, type_name
from tracer.ir import BOOL, F64, I64, NARROW
from tracer.ir.numpy_math_ops import c_hypot
from tracer.ir.scalar_ops import ieee_div

FUNCTIONS: dict = {}

E, PI, INF, NAN = math.e, math.pi, math.inf, math.nan
LN2, LN10 = 0.6931471805599453094, 2.302585092994045684          # M_LN2, M_LN10
DBL_MIN, LARGE = sys.float_info.min, sys.float_info.max / 4.0   # DBL_MIN, CM_LARGE_DOUBLE
LOG_LARGE = math.log(sys.float_info.max / 4.0)                     # CM_LOG_LARGE_DOUBLE
SQRT_LARGE = math.sqrt(sys.float_info.max / 4.0)                   # CM_SQRT_LARGE_DOUBLE
SQRT_DBL_MIN = math.sqrt(DBL_MIN)                                  # CM_SQRT_DBL_MIN
DOMAIN, RANGE = "math domain error", "math range error"


FOLD_MORE = {"c_hypot": c_hypot}


class Floats:
    """IEEE double arithmetic on traced f64 values and Python floats alike: arithmetic and tests of
    constants fold in Python; with no builder, everything is Python."""

    FOLD = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
            "fdiv": ieee_div, "neg": lambda a: -a, "fabs": math.fabs, "copysign": math.copysign,
            "lt": lambda a, b: a < b, "le": lambda a, b: a <= b, "gt": lambda a, b: a > b,
            "ge": lambda a, b: a >= b, "eq": lambda a, b: a == b, "ne": lambda a, b: a != b,
            "isinf": math.isinf, "isnan": math.isnan, "isfinite": math.isfinite, "not": lambda a: not a}

    def __init__(self, builder=None):
        self.b = builder

    def __call__(self, op: str, *args):
        if self.b is None or (op in self.FOLD and not any(is_traced(a) for a in args)):
            return self.FOLD[op](*args) if op in self.FOLD else FOLD_MORE.get(op, getattr(math, op, None))(*args)
        return self.b.emit(op, tuple(self.b.value(a) for a in args))

    def select(self, cond, a, b):
        if not is_traced(cond):
            return a if cond else b
        if a is True and b is False:
            return cond
        return self.b.emit("select", (cond, self.b.value(a), self.b.value(b)))

    def both(self, *conds):
        out = True
        for c in conds:
            out = self.select(out, c, False) if is_traced(out) else (c if out else False)
        return out

    def either(self, *conds):
        out = False
        for c in conds:
            out = self.select(out, True, c) if is_traced(out) else (True if out else c)
        return out

    def negated(self, cond):
        return self("not", cond)


# ------------------------------------------------------------------------- the C library's hypot
def c_abs(tracer, f: Floats, re, im):
    """hypot(re, im) as cmath computes it: the C library's (the `c_hypot` op)."""
    return f("c_hypot", re, im)


# ------------------------------------------------------------------------- special values
REPRESENTATIVES = (-INF, -2.0, -0.0, 0.0, 2.0, INF, NAN)        # one of each of C's special_type kinds
BY_VALUE = frozenset((i, j) for i in (0, 5) for j in (1, 4))     # (+-inf, finite nonzero): a formula


def special_values(function, formula: bool = False):
    """The C code's special-value table of `function` (parts -> complex): {(i, j): (re, im)} for
    the kinds with an infinity or a NaN, and the set of those that raise ValueError."""
    cells, fails = {}, set()
    for i, x in enumerate(REPRESENTATIVES):
        for j, y in enumerate(REPRESENTATIVES):
            if (math.isfinite(x) and math.isfinite(y)) or (formula and (i, j) in BY_VALUE):
                continue
            try:
                r = function(x, y)
            except ValueError:
                fails.add((i, j))
                continue
            cells[i, j] = (r.real, r.imag)
    return cells, fails


def _of_parts(function):
    return lambda x, y: function(complex(x, y))


TABLES = {name: special_values(_of_parts(getattr(cmath, name)), name in ("exp", "cosh", "sinh", "tanh"))
          for name in ("exp", "cosh", "sinh", "tanh", "log", "sqrt", "atanh")}
TABLES["rect"] = special_values(cmath.rect, formula=True)


def kinds(f: Floats, x) -> list:
    """C's special_type(x) as seven truth values."""
    negative = f("lt", f("copysign", 1.0, x), 0.0)
    positive = f.negated(negative)
    zero, infinite = f("eq", x, 0.0), f("isinf", x)
    nonzero = f.both(f("isfinite", x), f.negated(zero))
    return [f.both(infinite, negative), f.both(nonzero, negative), f.both(zero, negative), f.both(zero, positive),
            f.both(nonzero, positive), f.both(infinite, positive), f("isnan", x)]


def _key(v):
    return repr(v) if not is_traced(v) else id(v)


def _choose(f: Floats, options: list):
    """The value whose condition holds, of [(condition, value)] (at most one holds where the
    result is used); equal values share one test, the most frequent is the default."""
    groups: dict = {}
    for cond, v in options:
        groups.setdefault(_key(v), (v, []))[1].append(cond)
    ordered = sorted(groups.values(), key=lambda g: len(g[1]))
    result = ordered[-1][0]
    for v, conds in ordered[:-1]:
        result = f.select(f.either(*conds), v, result)
    return result


def table_entry(f: Floats, kr: list, ki: list, cells: dict):
    """cells[kind of re, kind of im] (kinds absent from cells: any value)."""
    rows: dict = {}
    for i in range(7):
        row = tuple((j, cells[i, j]) for j in range(7) if (i, j) in cells)
        if row:
            rows.setdefault(tuple((j, _key(v)) for j, v in row), (row, []))[1].append(kr[i])
    options = [(f.either(*conds), _choose(f, [(ki[j], v) for j, v in row])) for row, conds in rows.values()]
    return _choose(f, options) if options else NAN


def with_special_values(f: Floats, name: str, re, im, finite_path, formula=None):
    """C's `SPECIAL_VALUE(z, table)` around `finite_path(f, re, im) -> (re, im, errors)` (run on
    zeros in place of parts that are not finite, and on zero for re where im is not finite);
    `formula(f, re, y)` gives the entries of an infinite real part and a finite nonzero
    imaginary one. Returns (re, im, [(condition, exception)])."""
    finite = f.both(f("isfinite", re), f("isfinite", im))
    y = f.select(f("isfinite", im), im, 0.0)       # (an op on y alone never fails for a finite y)
    nr, ni, errors = finite_path(f, f.select(finite, re, 0.0), y)
    errors = [(f.both(finite, cond), exc) for cond, exc in errors]
    cells, fails = TABLES[name]
    kr, ki = kinds(f, re), kinds(f, im)
    sr = table_entry(f, kr, ki, {c: v[0] for c, v in cells.items()})
    si = table_entry(f, kr, ki, {c: v[1] for c, v in cells.items()})
    by_value = False
    if formula is not None:
        by_value = f.both(f("isinf", re), f("isfinite", im), f("ne", im, 0.0))
        fr, fi = formula(f, re, y)
        sr, si = f.select(by_value, fr, sr), f.select(by_value, fi, si)
    if fails:      # (the table's other entries, finite parts and formulas, are any value)
        fails = table_entry(f, kr, ki, {c: c in fails for c in cells.keys() | fails})
        errors.append((f.both(f.negated(f.either(finite, by_value)), fails), ValueError(DOMAIN)))
    return f.select(finite, nr, sr), f.select(finite, ni, si), errors


# ------------------------------------------------------------------------- the C functions
def _overflowed(f: Floats, re, im):
    return [(f.either(f("isinf", re), f("isinf", im)), OverflowError(RANGE))]


def exp_finite(f: Floats, x, y):
    large = f("gt", x, LOG_LARGE)
    scale = f("exp", f.select(large, f("sub", x, 1.0), x))
    re, im = f("mul", scale, f("cos", y)), f("mul", scale, f("sin", y))
    re, im = f.select(large, f("mul", re, E), re), f.select(large, f("mul", im, E), im)
    return re, im, _overflowed(f, re, im)


def _infinities(real_sign, imag_sign):
    """(+-inf, finite y != 0) entries: copysign(inf, cos y) and copysign(inf, sin y), signed."""
    def formula(f: Floats, x, y):
        c, s = f("copysign", INF, f("cos", y)), f("copysign", INF, f("sin", y))
        positive = f("gt", x, 0.0)
        return (f.select(positive, c, c if real_sign > 0 else f("neg", c)),
                f.select(positive, s, s if imag_sign > 0 else f("neg", s)))
    return formula


def exp_formula(f: Floats, x, y):
    positive = f("gt", x, 0.0)
    c, s = f("cos", y), f("sin", y)
    return (f.select(positive, f("copysign", INF, c), f("copysign", 0.0, c)),
            f.select(positive, f("copysign", INF, s), f("copysign", 0.0, s)))


def _hyperbolic(first: str, second: str):
    """cosh (cosh, sinh) and sinh (sinh, cosh): cos(y) * first(x) + i sin(y) * second(x), with
    x - copysign(1, x) and a factor e where first(x) alone would overflow."""
    def finite(f: Floats, x, y):
        large = f("gt", f("fabs", x), LOG_LARGE)
        xm = f.select(large, f("sub", x, f("copysign", 1.0, x)), x)
        re, im = f("mul", f("cos", y), f(first, xm)), f("mul", f("sin", y), f(second, xm))
        re, im = f.select(large, f("mul", re, E), re), f.select(large, f("mul", im, E), im)
        return re, im, _overflowed(f, re, im)
    return finite


def tanh_finite(f: Floats, x, y):
    large = f("gt", f("fabs", x), LOG_LARGE)
    far_re = f("copysign", 1.0, x)
    far_im = f("mul", f("mul", f("mul", 4.0, f("sin", y)), f("cos", y)),
               f("exp", f.select(large, f("mul", -2.0, f("fabs", x)), 0.0)))
    xs = f.select(large, 0.0, x)
    tx, ty, cx = f("tanh", xs), f("tan", y), f("fdiv", 1.0, f("cosh", xs))
    txty = f("mul", tx, ty)
    denom = f("add", 1.0, f("mul", txty, txty))
    re = f("fdiv", f("mul", tx, f("add", 1.0, f("mul", ty, ty))), denom)
    im = f("mul", f("mul", f("fdiv", ty, denom), cx), cx)
    return f.select(large, far_re, re), f.select(large, far_im, im), []


def tanh_formula(f: Floats, x, y):
    return (f.select(f("gt", x, 0.0), 1.0, -1.0),
            f("copysign", 0.0, f("mul", f("mul", 2.0, f("sin", y)), f("cos", y))))


def log_finite(tracer, f: Floats, x, y):
    """c_log: log(hypot) rescaled for huge and subnormal parts, log1p near |z| == 1."""
    ax, ay = f("fabs", x), f("fabs", y)
    large = f.either(f("gt", ax, LARGE), f("gt", ay, LARGE))
    tiny = f.both(f("lt", ax, DBL_MIN), f("lt", ay, DBL_MIN))
    zero = f.both(tiny, f("eq", ax, 0.0), f("eq", ay, 0.0))
    factor = f.select(large, 0.5, f.select(tiny, 2.0 ** 53, 1.0))
    h = c_abs(tracer, f, f("mul", ax, factor), f("mul", ay, factor))
    log_h = f("log", f.select(zero, 1.0, h))
    near_one = f.both(f.negated(large), f.negated(tiny), f("le", 0.71, h), f("le", h, 1.73))
    bigger = f("gt", ax, ay)
    am, an = f.select(bigger, ax, ay), f.select(bigger, ay, ax)
    near = f("fdiv", f("log1p", f.select(near_one, f("add", f("mul", f("sub", am, 1.0), f("add", am, 1.0)),
                                                            f("mul", an, an)), 0.0)), 2.0)
    re = f.select(large, f("add", log_h, LN2),
                  f.select(zero, -INF, f.select(tiny, f("sub", log_h, 53 * LN2), f.select(near_one, near, log_h))))
    return re, f("atan2", y, x), [(zero, ValueError(DOMAIN))]


def sqrt_finite(tracer, f: Floats, x, y):
    """cmath_sqrt_impl: s = 2 sqrt(|x|/8 + hypot(|x|/8, |y|/8)), subnormal parts scaled first."""
    ax, ay = f("fabs", x), f("fabs", y)
    tiny = f.both(f("lt", ax, DBL_MIN), f("lt", ay, DBL_MIN))
    sx = f.select(tiny, f("mul", ax, 2.0 ** 53), f("fdiv", ax, 8.0))
    sy = f.select(tiny, f("mul", ay, 2.0 ** 53), f("fdiv", ay, 8.0))
    q = f("sqrt", f("add", sx, c_abs(tracer, f, sx, sy)))
    s = f.select(tiny, f("mul", q, 2.0 ** -27), f("mul", 2.0, q))
    d = f("fdiv", ay, f("mul", 2.0, s))
    upper = f("ge", x, 0.0)
    re = f.select(upper, s, d)
    im = f.select(upper, f("copysign", d, y), f("copysign", s, y))
    zero = f.both(f("eq", x, 0.0), f("eq", y, 0.0))
    return f.select(zero, 0.0, re), f.select(zero, y, im), []


def atanh_finite(tracer, f: Floats, x, y):
    """cmath_atanh_impl for x >= 0 (atanh(-z) is -atanh(z)): 1/z for huge z, the pole at 1,
    log1p elsewhere."""
    flip = f("lt", x, 0.0)
    x, y = f.select(flip, f("neg", x), x), f.select(flip, f("neg", y), y)
    ay = f("fabs", y)
    large = f.either(f("gt", x, SQRT_LARGE), f("gt", ay, SQRT_LARGE))
    at_one = f.both(f.negated(large), f("eq", x, 1.0), f("lt", ay, SQRT_DBL_MIN))
    pole = f.both(at_one, f("eq", ay, 0.0))
    h = c_abs(tracer, f, f.select(large, f("fdiv", x, 2.0), ay), f.select(large, f("fdiv", y, 2.0), 2.0))
    far_re = f("fdiv", f("fdiv", f("fdiv", x, 4.0), h), h)
    far_im = f("copysign", PI / 2.0, y)
    near_re = f("neg", f("log", f.select(f.both(at_one, f.negated(pole)),
                                         f("fdiv", f("sqrt", ay), f("sqrt", h)), 1.0)))
    near_im = f("copysign", f("fdiv", f("atan2", 2.0, f("neg", ay)), 2.0), y)
    one_minus = f("sub", 1.0, x)
    general = f.negated(f.either(large, at_one))
    ratio = f("fdiv", f("mul", 4.0, x), f("add", f("mul", one_minus, one_minus), f("mul", ay, ay)))
    re = f("fdiv", f("log1p", f.select(general, ratio, 0.0)), 4.0)
    im = f("fdiv", f("neg", f("atan2", f("mul", -2.0, y),
                               f("sub", f("mul", one_minus, f("add", 1.0, x)), f("mul", ay, ay)))), 2.0)
    re = f.select(large, far_re, f.select(at_one, f.select(pole, INF, near_re), re))
    im = f.select(large, far_im, f.select(at_one, f.select(pole, y, near_im), im))
    return f.select(flip, f("neg", re), re), f.select(flip, f("neg", im), im), [(pole, ValueError(DOMAIN))]


def rect_finite(f: Floats, r, phi):
    zero = f("eq", phi, 0.0)
    return (f.select(zero, r, f("mul", r, f("cos", phi))),
            f.select(zero, f("mul", r, phi), f("mul", r, f("sin", phi))), [])


def _with_tracer(path, tracer):
    return lambda f, x, y: path(tracer, f, x, y)


def complex_function(tracer, f: Floats, name: str, re, im):
    """cmath.<name> of the parts: (re, im, errors); sin, cos, tan and atan turn z by i first."""
    turned = {"sin": "sinh", "cos": "cosh", "tan": "tanh", "atan": "atanh"}
    if name in turned:
        rr, ri, errors = complex_function(tracer, f, turned[name], f("neg", im), re)
        return (rr, ri, errors) if name == "cos" else (ri, f("neg", rr), errors)
    paths = {"exp": (exp_finite, exp_formula), "cosh": (_hyperbolic("cosh", "sinh"), _infinities(1, -1)),
             "sinh": (_hyperbolic("sinh", "cosh"), _infinities(-1, 1)), "tanh": (tanh_finite, tanh_formula),
             "log": (_with_tracer(log_finite, tracer), None), "sqrt": (_with_tracer(sqrt_finite, tracer), None),
             "atanh": (_with_tracer(atanh_finite, tracer), None)}
    finite, formula = paths[name]
    return with_special_values(f, name, re, im, finite, formula)


# ------------------------------------------------------------------------- arguments and calls
UNKNOWN = object()


def _known(x):
    """x's value if the trace knows it now (a complex of constant parts is a complex), else UNKNOWN."""
    if isinstance(x, TracedComplex):
        return UNKNOWN if is_traced(x.real) or is_traced(x.imag) else complex(x.real, x.imag)
    return UNKNOWN if is_traced(x) or type(x).__module__.split(".")[0] == "tracer" else x


def _plain(tracer, x, what: str):
    """x as CPython's argument parsing sees it (a traced number: a zero of its type)."""
    if isinstance(x, TracedComplex):
        return 0j
    if is_traced(x) and (x.type in (F64, I64, BOOL) or x.type in NARROW) or type(x).__name__ == "ExternalList":
        return proxy(x)
    if is_traced(x) or type(x).__module__.split(".")[0] == "tracer":
        raise tracer.error(f"{what} of a {type_name(x)} is not supported")
    return x


def called_now(tracer, real, args, kwargs):
    """(True, the real function's result) if every argument is known now; else (False, None),
    after raising the TypeError CPython raises for arguments of these types."""
    known, named = [_known(a) for a in args], {k: _known(v) for k, v in kwargs.items()}
    if all(a is not UNKNOWN for a in [*known, *named.values()]):
        result = real(*known, **named)
        return True, TracedComplex(result.real, result.imag) if type(result) is complex else result
    what = f"cmath.{real.__name__}()"
    try:
        real(*(_plain(tracer, a, what) for a in args), **{k: _plain(tracer, v, what) for k, v in kwargs.items()})
    except TypeError:
        raise
    except Exception:   # only the types are checked here; the values are checked at run time
        pass
    return False, None


def implements(real):
    """Registers body(tracer, f, *args, **kwargs) for `real`'s calls with a traced argument."""
    def register(body):
        def impl(tracer, *args, **kwargs):
            done, result = called_now(tracer, real, args, kwargs)
            return result if done else body(tracer, Floats(tracer.builder), *args, **kwargs)
        FUNCTIONS[real] = impl
        return body
    return register


def as_complex(tracer, x) -> TracedComplex:
    """CPython's Py_complex converter: a number x is complex(float(x), 0.0)."""
    if isinstance(x, TracedComplex):
        return x
    if type(x) is complex:
        return TracedComplex(x.real, x.imag)
    return TracedComplex(as_float(tracer, x, "a cmath function"), 0.0)


def raise_errors(tracer, errors: list) -> None:
    for cond, exc in errors:
        check(tracer, cond, exc)


def python_number(tracer, v):
    """A float or bool result as a Python one (cmath.phase(np.float64(1.0)) is a float): a value
    of its own, in tracer.python_scalars, where v depends on a NumPy scalar."""
    if not is_traced(v) or not made_by_numpy(tracer, v):
        return v
    b = tracer.builder
    copy = b.emit("getitem", (b.emit("tuple", (v,)),), index=0)
    tracer.python_scalars.add(copy)
    return copy


# ------------------------------------------------------------------------- the functions
def _complex_valued(name: str):
    def body(tracer, f: Floats, z):
        z = as_complex(tracer, z)
        re, im, errors = complex_function(tracer, f, name, z.real, z.imag)
        raise_errors(tracer, errors)
        return TracedComplex(re, im)
    return body


for _name in ("exp", "sqrt", "sin", "cos", "tan", "sinh", "cosh", "tanh", "atan", "atanh"):
    implements(getattr(cmath, _name))(_complex_valued(_name))


@implements(cmath.log)
def _log(tracer, f: Floats, z, *base):
    """cmath.log(z[, base]): c_log(z), then divided by c_log(base) (whose error alone counts)."""
    z = as_complex(tracer, z)
    re, im, errors = complex_function(tracer, f, "log", z.real, z.imag)
    if not base:
        raise_errors(tracer, errors)
        return TracedComplex(re, im)
    base = as_complex(tracer, base[0])
    br, bi, errors = complex_function(tracer, f, "log", base.real, base.imag)
    raise_errors(tracer, errors)
    return quotient(tracer, TracedComplex(re, im), TracedComplex(br, bi), ValueError(DOMAIN))


@implements(cmath.log10)
def _log10(tracer, f: Floats, z):
    z = as_complex(tracer, z)
    re, im, errors = complex_function(tracer, f, "log", z.real, z.imag)
    raise_errors(tracer, errors)
    return TracedComplex(f("fdiv", re, LN10), f("fdiv", im, LN10))


def _underflow_is_an_error() -> bool:
    try:
        cmath.phase(complex(1e300, 1e-300))
    except OverflowError:
        return True
    return False


UNDERFLOW_IS_AN_ERROR = _underflow_is_an_error()     # (glibc's atan2 sets ERANGE, and phase checks errno)


@implements(cmath.phase)
def _phase(tracer, f: Floats, z):
    """atan2(z.imag, z.real); where it is 0 for z.imag != 0 and a finite z.real, glibc's atan2
    sets ERANGE, an OverflowError."""
    z = as_complex(tracer, z)
    phi = f("atan2", z.imag, z.real)
    if UNDERFLOW_IS_AN_ERROR:
        check(tracer, f.both(f("eq", phi, 0.0), f("ne", z.imag, 0.0), f("isfinite", z.real)), OverflowError(RANGE))
    return python_number(tracer, phi)


@implements(cmath.polar)
def _polar(tracer, f: Floats, z):
    """(abs(z), atan2(z.imag, z.real)), abs by _Py_c_abs: an overflow is OverflowError."""
    z = as_complex(tracer, z)
    phi, r = f("atan2", z.imag, z.real), c_abs(tracer, f, z.real, z.imag)
    check(tracer, f.both(f("isfinite", z.real), f("isfinite", z.imag), f("isinf", r)), OverflowError(RANGE))
    return python_number(tracer, r), python_number(tracer, phi)


@implements(cmath.rect)
def _rect(tracer, f: Floats, r, phi):
    r, phi = as_float(tracer, r, "cmath.rect()"), as_float(tracer, phi, "cmath.rect()")
    re, im, errors = with_special_values(f, "rect", r, phi, rect_finite, _infinities(-1, -1))
    raise_errors(tracer, errors)
    return TracedComplex(re, im)


def _test(name: str, combine: str):
    def body(tracer, f: Floats, z):
        z = as_complex(tracer, z)
        return python_number(tracer, getattr(f, combine)(f(name, z.real), f(name, z.imag)))
    return body


for _name, _combine in (("isfinite", "both"), ("isinf", "either"), ("isnan", "either")):
    implements(getattr(cmath, _name))(_test(_name, _combine))


@implements(cmath.isclose)
def _isclose(tracer, f: Floats, a, b, *, rel_tol=1e-09, abs_tol=0.0):
    """cmath_isclose_impl, comparison by comparison."""
    a, b = as_complex(tracer, a), as_complex(tracer, b)
    rel_tol, abs_tol = as_float(tracer, rel_tol, "cmath.isclose()"), as_float(tracer, abs_tol, "cmath.isclose()")
    check(tracer, f.either(f("lt", rel_tol, 0.0), f("lt", abs_tol, 0.0)), ValueError("tolerances must be non-negative"))
    equal = f.both(f("eq", a.real, b.real), f("eq", a.imag, b.imag))
    infinite = f.either(*(f("isinf", x) for x in (a.real, a.imag, b.real, b.imag)))
    diff = c_abs(tracer, f, f("sub", a.real, b.real), f("sub", a.imag, b.imag))
    close = f.either(f("le", diff, f("mul", rel_tol, c_abs(tracer, f, b.real, b.imag))),
                     f("le", diff, f("mul", rel_tol, c_abs(tracer, f, a.real, a.imag))), f("le", diff, abs_tol))
    return python_number(tracer, f.select(equal, True, f.select(infinite, False, close)))


def _constants_only(name: str):
    def body(tracer, f: Floats, *args, **kwargs):
        raise tracer.error(f"cmath.{name}() of a traced number is not supported yet (it needs C's asinh)")
    return body


for _name in ("asin", "acos", "asinh", "acosh"):
    implements(getattr(cmath, _name))(_constants_only(_name))
