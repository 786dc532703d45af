"""The random-program fuzzer's command line: `python -m tests.fuzz --help` (from the repository root).

The fuzzer itself lives with the other test support modules in tests/support: fuzz_cases (what a
case is, the kinds of programs), fuzz_worker and fuzz_oracle (running a case against CPython in a
subprocess), fuzz_runner (workers, time limits, crashes, the report) and fuzz_reduce (shrinking a
failing program). tests/test_fuzz.py runs a fixed range of seeds in CI.
"""
