"""The fuzzer's worker process: runs cases it reads from stdin, one JSON object a line, and answers
on the stdout it was started with, one JSON object a line: `{"event": "progress", "call": i,
"phase": "python"|"traced"}` while it runs, then `{"event": "done", ...verdict}` (fuzz_oracle).
What the programs or the tracer print goes to stderr, never into the answers. A signal that kills
it (a crash in compiled code) or a case that never ends is noticed by the parent (fuzz_runner),
which starts a new worker. Run as a script: `python tests/support/fuzz_worker.py`.
"""
from __future__ import annotations

import faulthandler
import json
import os
import sys
import traceback


def main() -> int:
    answers = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)                         # print() of the programs and the tracer: to stderr
    sys.stdout = sys.stderr
    faulthandler.enable()                 # a crash leaves its Python stack in the log
    from fuzz_oracle import run_case  # (imports tracer, numpy, llvmlite once)

    def send(message: dict):
        answers.write(json.dumps(message) + "\n")
        answers.flush()

    send({"event": "ready"})
    for line in sys.stdin:
        request = json.loads(line)
        try:
            verdict = run_case(request["source"], request["calls"], request.get("warnings", True),
                               progress=lambda i, phase: send({"event": "progress", "call": i, "phase": phase}))
        except Exception as exc:          # the case could not be run (loading it, tracing it)
            verdict = {"status": "fail", "key": f"worker:{type(exc).__name__}",
                       "traceback": "".join(traceback.format_exception(exc))[-3000:]}
        send({"event": "done", **verdict})
    return 0


if __name__ == "__main__":
    sys.exit(main())
