"""What `@trace` makes of each kernel of the NumPy corpus (`tests/support/numpy_kernels.py`), from
`tracer.explain` on the kernel's example arguments (nothing is run).

One line per kernel: its name, "compiled whole", "compiled with breaks (N)" or "runs as Python",
and for the last two the first break's reason and file:line. Then the counts, and the reasons
grouped, most common first (variable and argument names folded, so that one missing feature is
one group).

    python examples/numpy_corpus_report.py
"""
from __future__ import annotations

import collections
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "support"))
sys.path.insert(0, str(ROOT))

from numpy_kernels import KERNELS  # noqa: E402  (after the path set-up above)

import tracer  # noqa: E402

WHOLE, BREAKS, PYTHON = "compiled whole", "compiled with breaks", "runs as Python"


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


def reason_of(brk) -> str:
    """The construct a break is about, without the boilerplate of a graph break's message."""
    what = brk.what
    if brk.kind == "python call":
        return f"call made in CPython: {what}"
    found = re.search(r"\(because (.*)\)(; the code after it.*)?$", what)
    if brk.kind == "graph break" and found:
        what = "graph break: " + re.sub(r", at \S+:\d+$", "", found.group(1))
    return what


def group_of(reason: str) -> str:
    """The reason with the names of the user's variables and arguments folded."""
    reason = re.sub(r"variable '\w+'", "variable <name>", reason)
    return re.sub(r"^\w+ is an array of dtype", "<argument> is an array of dtype", reason)


def explain_kernel(fn, make_args):
    """(status, number of breaks, reason or '', where or '')."""
    try:
        explanation = tracer.explain(fn, *make_args())
    except Exception as exc:        # a crash of explain is itself worth a line
        return "explain failed", 0, f"{type(exc).__name__}: {exc}", ""
    breaks = explanation.breaks
    if not explanation.compiled:
        status = PYTHON
    elif breaks:
        status = BREAKS
    else:
        return WHOLE, 0, "", ""
    first = breaks[0]
    return status, len(breaks), reason_of(first), where(first.loc)


def main() -> None:
    width = max(len(fn.__name__) for fn, _ in KERNELS)
    statuses = collections.Counter()
    groups: dict[str, list[str]] = collections.defaultdict(list)
    for fn, make_args in KERNELS:
        status, n, reason, loc = explain_kernel(fn, make_args)
        statuses[status] += 1
        label = f"{status} ({n})" if status == BREAKS else status
        line = f"{fn.__name__:<{width}}  {label:<26}"
        if reason:
            line += f"  {reason}  [{loc}]"
            groups[group_of(reason)].append(fn.__name__)
        print(line.rstrip())

    print()
    print(f"{len(KERNELS)} kernels: " + ", ".join(f"{statuses[s]} {s}" for s in (WHOLE, BREAKS, PYTHON)
                                                  + tuple(s for s in statuses if s not in (WHOLE, BREAKS, PYTHON))))
    print()
    print("reasons (first break of each kernel), most common first:")
    for reason, names in sorted(groups.items(), key=lambda item: (-len(item[1]), item[0])):
        print(f"  {len(names):>3}  {reason}")
        print(f"       {', '.join(names)}")


if __name__ == "__main__":
    main()
