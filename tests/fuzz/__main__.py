"""python -m tests.fuzz --minutes N [--seed S] [--kinds scalar,arrays,classic] [--jobs J] ...

Generates random programs (tests/support/fuzz_cases.py), compiles each with `trace` and compares
every call with CPython in worker subprocesses, with a time limit per program. A failure (an
internal error, a crash, a hang, a result, exception, argument write or warning that differs from
CPython's) is reduced to a small program that fails the same way and printed with its seed and
arguments; `--kinds K --seed S --count 1` replays it. Programs the tracer rejects with a clear
UnsupportedError are counted as skipped. Exit status 1 when anything failed.
"""
from __future__ import annotations

import argparse
import itertools
import os
import sys
import time

SUPPORT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "support")
sys.path.insert(0, SUPPORT)

from array_program_gen import KNOWN_BUGS, OPEN_BUGS  # noqa: E402
from fuzz_cases import KINDS  # noqa: E402
from fuzz_runner import fuzz  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__.split("\n\n")[1],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=None, help="stop starting programs after this long")
    parser.add_argument("--count", type=int, default=None, help="programs per kind (default: until --minutes)")
    parser.add_argument("--seed", type=int, default=0, help="the first seed (each seed: one program per kind)")
    parser.add_argument("--kinds", default="scalar,arrays", help=f"comma-separated, of: {', '.join(KINDS)}")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes run in parallel")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per program before it is a hang")
    parser.add_argument("--no-reduce", action="store_true", help="print failures as found, unreduced")
    parser.add_argument("--reduce-seconds", type=float, default=180.0, help="time to shrink each failure")
    parser.add_argument("--no-warnings", action="store_true", help="do not compare warnings")
    parser.add_argument("--avoid", default=",".join(sorted(OPEN_BUGS)),
                        help="known bugs whose constructs programs leave out, or 'none' "
                             f"({'; '.join(f'{k}: {v}' for k, v in KNOWN_BUGS.items())})".replace("%", "%%"))
    args = parser.parse_args(argv)
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        parser.error(f"unknown kinds {unknown}; kinds: {', '.join(KINDS)}")
    avoid = frozenset() if args.avoid == "none" else frozenset(a.strip() for a in args.avoid.split(",") if a.strip())
    if avoid - set(KNOWN_BUGS):
        parser.error(f"unknown known bugs {sorted(avoid - set(KNOWN_BUGS))}")
    if args.minutes is None and args.count is None:
        parser.error("give --minutes or --count")
    seeds = range(args.seed, args.seed + args.count) if args.count is not None else itertools.count(args.seed)
    deadline = time.monotonic() + 60 * args.minutes if args.minutes is not None else None
    started = time.monotonic()
    print(f"fuzzing kinds {', '.join(kinds)} from seed {args.seed}"
          f"{f' for {args.minutes} minutes' if args.minutes else ''}; avoiding: {', '.join(sorted(avoid)) or 'nothing'}",
          flush=True)
    report = fuzz(seeds, kinds, timeout=args.timeout, jobs=args.jobs, deadline=deadline, avoid=avoid,
                  reduce=not args.no_reduce, reduce_seconds=args.reduce_seconds,
                  check_warnings=not args.no_warnings)
    print(report.summary())
    print(f"({time.monotonic() - started:.0f} s)")
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
