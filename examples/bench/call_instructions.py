"""Benchmark B1 counted in instructions: per-call instructions of plain `fma` vs the traced one.

Timings on a shared machine swing by tens of percent; valgrind's instruction counts do not. Each
figure is (instructions for 1,000,000 calls - instructions for none) / 1,000,000, with the cost of an
empty loop subtracted, on whichever interpreters are given (default: this one).

    python examples/bench/call_instructions.py [python3.12 ...]
"""
import os
import shutil
import subprocess
import sys
import tempfile

CALLS = 1_000_000
ENV = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}, "TRACER_CACHE": "0", "PYTHONHASHSEED": "0"}

PROGRAM = """
import sys
from tracer import trace
def fma(x, y, z):
    return x * y + z
traced = trace(fma)
traced(3.0, -1.0, 2.0)
def loop(f, n):
    for _ in range(n):
        f(3.0, -1.0, 2.0)
def empty(f, n):
    for _ in range(n):
        pass
which, n = sys.argv[1], int(sys.argv[2])
(empty if which == "none" else loop)({"python": fma, "traced": traced, "none": None}[which], n)
"""


def instructions(python: str, script: str, which: str, n: int) -> int:
    # the compile cache off: every run compiles alike (a run that loaded would count other work);
    # one hash seed and the .pyc files used: otherwise runs differ by millions of instructions
    out = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", python, script, which, str(n)],
                         env=ENV,
                         capture_output=True, text=True, check=True).stderr
    return int(out.split("Collected :")[1].split()[0])


def main():
    if shutil.which("valgrind") is None:
        print("valgrind is not installed: nothing to count")
        return
    pythons = sys.argv[1:] or [sys.executable]
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(PROGRAM)
    for python in pythons:
        # a first run writes the .pyc files of what the program imports (unless the environment
        # forbids it): otherwise the first counted run compiles them and the second does not
        subprocess.run([python, f.name, "traced", "0"], env=ENV, check=True)
        per_call = {}
        for which in ("none", "python", "traced"):
            per_call[which] = (instructions(python, f.name, which, CALLS) - instructions(python, f.name, which, 0)) / CALLS
        version = subprocess.run([python, "-c", "import sys; print(sys.version.split()[0])"],
                                 capture_output=True, text=True).stdout.strip()
        py, tr = per_call["python"] - per_call["none"], per_call["traced"] - per_call["none"]
        print(f"Python {version}: plain fma {py:.0f} instructions/call, traced {tr:.0f} -> {tr / py:.2f}x plain Python")


if __name__ == "__main__":
    main()
