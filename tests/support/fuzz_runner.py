"""The fuzzer's driver: generate cases (fuzz_cases), run each in a worker subprocess (fuzz_worker)
with a time limit, tally the verdicts, and shrink each new kind of failure (fuzz_reduce).

A worker that dies is a `crash:SIGNAL` (its stderr's last lines, with the Python stack that
faulthandler printed, go in the report); one that does not answer within the time limit is killed
and the case is a `hang` (or, when CPython itself was running, `python-hang`: a generator bug,
counted with the skips). Workers are restarted every `RECYCLE` cases to bound their memory.

    python -m tests.fuzz --minutes 10 --seed 0 --kinds scalar,arrays
"""
from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field

from array_program_gen import OPEN_BUGS
from fuzz_cases import Case, make_case

SUPPORT = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(SUPPORT))
RECYCLE = 150
SHOWN_PER_KEY = 3              # failures of one key printed in full (the rest: one line each)
START_TIMEOUT = 120.0


class Worker:
    """One worker subprocess; `run` gives a verdict for a case, restarting the worker as needed."""

    def __init__(self):
        self.process = None
        self.directory = tempfile.mkdtemp(prefix="tracer_fuzz_")
        self.log_path = os.path.join(self.directory, "worker.log")
        self.cases = 0

    def start(self):
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, SUPPORT, os.environ.get("PYTHONPATH", "")]),
                   TRACER_PROGRAM_DIR=self.directory, PYTHONFAULTHANDLER="1")
        self.log = open(self.log_path, "w")
        self.process = subprocess.Popen([sys.executable, os.path.join(SUPPORT, "fuzz_worker.py")], cwd=ROOT,
                                        env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log,
                                        bufsize=0)
        self.cases, self.pending = 0, b""
        message = self._read(START_TIMEOUT)
        if message is None or message.get("event") != "ready":
            raise RuntimeError(f"the fuzz worker did not start: {self.log_tail()}")

    def _read(self, timeout: float):
        """The worker's next message; None when none comes within `timeout` seconds."""
        end = time.monotonic() + timeout
        while b"\n" not in self.pending:
            ready, _, _ = select.select([self.process.stdout], [], [], max(end - time.monotonic(), 0.0))
            if not ready:
                return None
            chunk = os.read(self.process.stdout.fileno(), 1 << 16)
            if not chunk:
                return {"event": "eof"}
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        return json.loads(line)

    def log_tail(self, lines: int = 40) -> str:
        self.log.flush()
        with open(self.log_path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])

    def stop(self):
        if self.process is not None:
            if self.process.poll() is None:
                self.process.kill()
            self.process.wait()
            self.process = None
            self.log.close()

    def close(self):
        self.stop()
        shutil.rmtree(self.directory, ignore_errors=True)

    def run(self, source: str, calls: list, timeout: float, check_warnings: bool = True) -> dict:
        if self.process is None or self.cases >= RECYCLE:
            self.stop()
            self.start()
        self.cases += 1
        request = json.dumps({"source": source, "calls": calls, "warnings": check_warnings}) + "\n"
        try:
            self.process.stdin.write(request.encode())
        except BrokenPipeError:           # it died after its last answer: a fresh one
            self.stop()
            self.start()
            self.process.stdin.write(request.encode())
        deadline = time.monotonic() + timeout
        call, phase = 0, "loading"
        while True:
            message = self._read(deadline - time.monotonic())
            if message is None:
                self.stop()
                key = "python-hang" if phase == "python" else "hang"
                return {"status": "skip" if key == "python-hang" else "fail", "key": key, "reason": key,
                        "call": call, "args": calls[call] if call < len(calls) else None,
                        "detail": f"no answer within {timeout:.0f} s ({phase} run of call {call})"}
            if message["event"] == "progress":
                call, phase = message["call"], message["phase"]
            elif message["event"] == "done":
                message.pop("event")
                return message
            else:                      # the worker died
                code = self.process.wait()
                name = signal.Signals(-code).name if code < 0 else f"exit{code}"
                tail = self.log_tail()
                self.stop()
                return {"status": "fail", "key": f"crash:{name}", "call": call,
                        "args": calls[call] if call < len(calls) else None, "detail": tail}


# ------------------------------------------------------------------------------ fuzzing
@dataclass
class Report:
    cases: int = 0
    passed: int = 0
    rounding: int = 0
    skipped: Counter = field(default_factory=Counter)      # reason -> count
    failures: list = field(default_factory=list)           # (case, verdict, reduced or None)
    by_kind: Counter = field(default_factory=Counter)

    def summary(self) -> str:
        lines = [f"{self.cases} programs: {self.passed} passed ({self.rounding} equal up to a sum's rounding), "
                 f"{sum(self.skipped.values())} skipped, {len(self.failures)} failed",
                 "by kind: " + ", ".join(f"{k} {n}" for k, n in sorted(self.by_kind.items()))]
        if self.skipped:
            lines.append("most common reasons to skip:")
            lines += [f"  {n:5d}  {reason[:150]}" for reason, n in self.skipped.most_common(12)]
        if self.failures:
            lines.append("failures:")
            lines += [f"  {case.kind} seed {case.seed}: {verdict['key']}" for case, verdict, _ in self.failures]
        return "\n".join(lines)


def describe_failure(case: Case, verdict: dict, reduced: Case | None = None) -> str:
    call = verdict.get("call")
    lines = [f"=== FAILURE {verdict['key']}: kind {case.kind}, seed {case.seed}"
             f" (replay: python -m tests.fuzz --kinds {case.kind} --seed {case.seed} --count 1)"]
    for name in ("expected", "got", "detail", "traceback"):
        if verdict.get(name):
            lines.append(f"{name}: {str(verdict[name]).rstrip()}")
    shown = reduced or case
    if reduced is not None:
        lines.append("reduced program:")
    else:
        lines.append("program:")
    lines.append(shown.source.rstrip())
    if call is not None and reduced is None:
        lines.append(f"failing call: f({', '.join(case.calls[call])})")
    lines.append("calls: " + "; ".join(f"f({', '.join(c)})" for c in shown.calls))
    return "\n".join(lines) + "\n"


def fuzz(seeds, kinds, timeout: float = 60.0, jobs: int = 1, deadline: float | None = None,
         avoid=OPEN_BUGS, reduce: bool = True, reduce_seconds: float = 180.0,
         check_warnings: bool = True, out=sys.stdout, reductions_per_key: int = 1) -> Report:
    """Run the cases of `seeds` (an iterable of ints), each seed once per kind in `kinds`, until
    `deadline` (time.monotonic()) if given; print each failure (reduced) to `out`."""
    from fuzz_reduce import reduce_case

    report = Report()
    todo = ((seed, kind) for seed in seeds for kind in kinds)
    lock = threading.Lock()
    reduced_keys: Counter = Counter()

    def next_case():
        with lock:
            if deadline is not None and time.monotonic() > deadline:
                return None
            item = next(todo, None)
        return None if item is None else make_case(item[1], item[0], avoid)

    def work():
        worker = Worker()
        try:
            while (case := next_case()) is not None:
                verdict = worker.run(case.source, case.calls, timeout, check_warnings)
                reduced = None
                with lock:
                    report.cases += 1
                    report.by_kind[case.kind] += 1
                    if verdict["status"] == "pass":
                        report.passed += 1
                        report.rounding += bool(verdict.get("rounding"))
                        continue
                    if verdict["status"] == "skip":
                        report.skipped[verdict.get("reason", "?")] += 1
                        continue
                    shrink = reduce and reduced_keys[verdict["key"]] < reductions_per_key
                    reduced_keys[verdict["key"]] += 1
                if shrink:
                    reduced = reduce_case(case, verdict, worker, timeout, reduce_seconds, check_warnings)
                with lock:
                    report.failures.append((case, verdict, reduced))
                    if reduced is not None or reduced_keys[verdict["key"]] <= SHOWN_PER_KEY:
                        out.write(describe_failure(case, verdict, reduced))
                    else:                  # one more of a kind already shown
                        out.write(f"=== FAILURE {verdict['key']}: kind {case.kind}, seed {case.seed}\n")
                    out.flush()
        finally:
            worker.close()

    threads = [threading.Thread(target=work) for _ in range(max(1, jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return report
