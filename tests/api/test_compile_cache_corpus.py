"""The compile cache against code it was not written for: a slice of the NumPy kernel corpus and of
the plain-Python program corpus runs in a process that compiles and stores everything, then in one
that loads it; every result and every argument the call changed must be the same, bit for bit."""
import os
import platform
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(not (sys.platform.startswith("linux") and platform.machine() == "x86_64"),
                                reason="cached code is linked by tracer.native.load_object: Linux x86-64")

SUPPORT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "support")
EVERY = 3          # one kernel and one program in EVERY (the whole corpora are tested without the cache)

CHILD = textwrap.dedent('''
    import hashlib, sys
    sys.path.insert(0, {support!r})
    import numpy as np
    from tracer import trace
    from numpy_kernels import KERNELS
    from py_programs import PROGRAMS

    def text(x):
        if isinstance(x, np.ndarray):
            return f"array({{x.dtype}}, {{x.shape}}, {{hashlib.sha256(np.ascontiguousarray(x).tobytes()).hexdigest()[:16]}})"
        if isinstance(x, (list, tuple)):
            return type(x).__name__ + "(" + ", ".join(map(text, x)) + ")"
        if isinstance(x, dict):
            return "{{" + ", ".join(f"{{text(k)}}: {{text(v)}}" for k, v in x.items()) + "}}"
        if isinstance(x, float):
            return x.hex()
        return repr(x)

    cases = [(fn.__name__, fn, make) for fn, make in KERNELS[::{every}]] + list(PROGRAMS[::{every}])
    loaded = 0
    for name, fn, make in cases:
        f = trace(fn)
        args = make()
        try:
            result = text(f(*args))
        except Exception as exc:
            result = f"{{type(exc).__name__}}: {{exc}}"
        print(name, result, text(list(args)))
        loaded += sum(getattr(s, "from_cache", False) for s in f.specializations)
    print("loaded", loaded, "of", len(cases))
''')


def test_corpus_results_are_the_same_from_the_cache(tmp_path):
    script = tmp_path / "corpus_child.py"
    script.write_text(CHILD.format(support=SUPPORT, every=EVERY))
    env = {**os.environ, "TRACER_CACHE": "1", "TRACER_CACHE_DIR": str(tmp_path / "cache"),
           "PYTHONHASHSEED": "0"}
    runs = []
    for _ in range(2):
        done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=1200)
        assert done.returncode == 0, done.stderr[-3000:]
        runs.append(done.stdout.splitlines())
    cold, warm = runs
    assert cold[:-1] == warm[:-1]
    loaded, total = int(warm[-1].split()[1]), int(warm[-1].split()[3])
    assert loaded >= total // 2, warm[-1]          # most specializations came from the cache
