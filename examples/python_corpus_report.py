"""What `@trace` makes of each program of the plain-Python corpus (`tests/support/py_programs.py`),
from `tracer.explain` on the program's example arguments.

One line per program: its name and one of
  - "compiled whole": `@trace(fullgraph=True)` compiles it, with no break and no call into CPython;
  - "compiled with breaks (N)": the default mode compiles it, with N calls into CPython or graph
    breaks;
  - "runs as Python": the default mode runs it as plain Python for these arguments;
  - "TypeError at the call": the default-mode call refuses an argument's type (a str, dict, set or
    `array.array`) with a TypeError instead of running as Python (the one thing here that is run);
and, for all but the first, why: the message of the first error `@trace(fullgraph=True)` raises
(the first construct that stops a whole compile), shortened, and its file:line. Then the counts,
and the reasons grouped, most common first (names of variables, arguments, attributes and
functions folded, so that one missing feature is one group).

    python examples/python_corpus_report.py [NAME ...]      (only the programs named)
"""
from __future__ import annotations

import collections
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "support"))
sys.path.insert(0, str(ROOT))

from py_programs import PROGRAMS  # noqa: E402  (after the path set-up above)

import tracer  # noqa: E402

WHOLE, BREAKS, PYTHON, REFUSED = "compiled whole", "compiled with breaks", "runs as Python", "TypeError at the call"
STATUSES = (WHOLE, BREAKS, PYTHON, REFUSED)
WIDTH = 110


def where(loc) -> str:
    """file:line, relative to the repository when the file is in it."""
    if loc is None:
        return "?"
    path = pathlib.Path(loc.filename)
    try:
        path = path.relative_to(ROOT)
    except ValueError:
        pass
    return f"{path}:{loc.lineno}"


def shorten(message: str) -> str:
    """The first line of an error's message, without its location and hints, at most WIDTH characters."""
    text = message.strip().splitlines()[0] if message.strip() else message
    found = re.search(r"\(because (.*)\)(; the code after it.*)?$", text)
    if found:
        text = found.group(1)
    text = re.sub(r",? at \S+:\d+", "", text)
    text = re.sub(r"^\S+\.py:\d+: ", "", text)
    return text if len(text) <= WIDTH else text[:WIDTH - 3] + "..."


def group_of(reason: str) -> str:
    """The reason with the names of the user's classes, functions, variables and arguments folded, so
    that one missing feature is one group."""
    reason = re.sub(r"calling class ([A-Z]\w*) is not supported", "calling a class of the program (making an "
                    "instance) is not supported", reason)
    reason = re.sub(r"recursive call to \S+\(\)", "recursive call to <function>()", reason)
    reason = re.sub(r"a dict display \(\w+\)", "a dict display (BUILD_MAP, BUILD_CONST_KEY_MAP)", reason)
    reason = re.sub(r"(variable|argument|attribute|global) '[^']*'", r"\1 <name>", reason)
    reason = re.sub(r"^\w+\[\d+\] is a", "<list>[<i>] is a", reason)
    return re.sub(r"value\[\d+\]", "value[<i>]", reason)


def first_error(fn, args):
    """(message, loc) of the first error `@trace(fullgraph=True)` gives, or None when it compiles whole."""
    explanation = tracer.explain(tracer.trace(fn, fullgraph=True), *args)
    if explanation.compiled and not explanation.breaks:
        return None
    first = explanation.breaks[0]
    return first.what, first.loc


def argument_refused(fn, args):
    """The TypeError message when the default-mode call refuses an argument's type, else None."""
    try:
        tracer.trace(fn)(*args)
    except TypeError as exc:
        if "traced functions take" in str(exc):
            return str(exc)
    except Exception:       # the program's own exception: not about the arguments
        pass
    return None


def explain_program(fn, make_args):
    """(status, number of breaks, reason or '', where or '')."""
    try:
        error = first_error(fn, make_args())
        if error is None:
            return WHOLE, 0, "", ""
        message, loc = error
        refused = argument_refused(fn, make_args())
        if refused is not None:
            found = re.search(r"argument '(\w+)' is a (\w+)", refused)
            what = f"argument '{found.group(1)}' is a {found.group(2)}" if found else shorten(refused)
            return REFUSED, 0, f"the call raises TypeError: {what} (not run as Python)", where(loc)
        explanation = tracer.explain(fn, *make_args())
    except Exception as exc:        # a crash of explain is itself worth a line
        return "explain failed", 0, shorten(f"{type(exc).__name__}: {exc}"), ""
    status = BREAKS if explanation.compiled else PYTHON
    return status, len(explanation.breaks), shorten(message), where(loc)


def main() -> None:
    chosen = [p for p in PROGRAMS if not sys.argv[1:] or p[0] in sys.argv[1:]]
    width = max(len(name) for name, _, _ in chosen)
    statuses = collections.Counter()
    groups: dict[str, list[str]] = collections.defaultdict(list)
    for name, fn, make_args in chosen:
        status, n, reason, loc = explain_program(fn, make_args)
        statuses[status] += 1
        label = f"{status} ({n})" if status == BREAKS else status
        line = f"{name:<{width}}  {label:<26}"
        if reason:
            line += f"  {reason}  [{loc}]"
            groups[group_of(reason)].append(name)
        print(line.rstrip(), flush=True)

    print()
    print(f"{len(chosen)} programs: " + ", ".join(
        f"{statuses[s]} {s}" for s in STATUSES + tuple(s for s in statuses if s not in STATUSES)))
    print()
    print("reasons (the first error with fullgraph=True of each program), most common first:")
    for reason, names in sorted(groups.items(), key=lambda item: (-len(item[1]), item[0])):
        print(f"  {len(names):>3}  {reason}")
        print(f"       {', '.join(names)}")


if __name__ == "__main__":
    main()
