"""The compile cache (tracer.cache): a specialization compiled in one process is loaded by the next
without tracing or LLVM, and never serves stale or damaged code. Each test runs fresh Python
processes on a private cache folder (the suite itself runs with the cache off: tests/conftest.py)."""
import os
import platform
import stat
import subprocess
import sys
import textwrap

import pytest

from tracer.cache.store import Store, encode

pytestmark = pytest.mark.skipif(not (sys.platform.startswith("linux") and platform.machine() == "x86_64"),
                                reason="cached code is linked by tracer.native.load_object: Linux x86-64")

PROGRAM = '''
import math, sys
import numpy as np
from tracer import trace, value_and_grad, vectorize
import helper

SCALE = {scale}

@trace
def fma(x, y, z):
    return x * y + z

@trace
def loop(n):
    s = 0.0
    for i in range(n):
        s += math.sqrt(i) * SCALE
    return s

@trace
def uses_helper(x):
    return helper.twice(x) + 1.0

def make_closure(k):
    @trace
    def scaled(x):
        return x * k
    return scaled

@trace
def norms(a):
    return np.sqrt(np.sum(a * a, axis=1))

@trace
def scale_rows(rows, k):
    """Lists of lists of floats: the loaded path, written back into the caller's lists."""
    total = 0.0
    for r in rows:
        for j in range(len(r)):
            r[j] *= k
            total += r[j]
    return total

def d(a, b):
    return math.sin(a) * b + SCALE * a * a

vec = vectorize(value_and_grad(d, argnums=(0, 1)))
value, (da, db) = vec(np.linspace(0.0, 1.0, 5), np.linspace(1.0, 2.0, 5))
print("vectorize", value.tolist(), da.tolist(), db.tolist())

rows = [[1.0, 2.0], [3.0, 4.5]]
print("rows", scale_rows(rows, 2.0), rows)
print("fma", fma(3.0, -1.0, 2.0))
print("loop", loop(1000))
print("helper", uses_helper(2.5))
print("closure", make_closure(4.0)(1.5))
print("norms", norms(np.arange(6.0).reshape(3, 2)).tolist())
FUNCTIONS = (fma, loop, uses_helper, norms, scale_rows)
print("specializations", sum(len(f.specializations) for f in FUNCTIONS))
print("cached", sum(getattr(s, "from_cache", False) for f in FUNCTIONS for s in f.specializations))
'''

HELPER = "def twice(x):\n    return x * {factor}\n"


def _write(folder, scale="2.0", factor="2.0"):
    (folder / "main.py").write_text(PROGRAM.format(scale=scale))
    (folder / "helper.py").write_text(HELPER.format(factor=factor))


def _run(folder, cache, *, extra_env=None, check=True):
    env = {**os.environ, "TRACER_CACHE": "1", "TRACER_CACHE_DIR": str(cache), "TRACER_LOG": "cache",
           "PYTHONDONTWRITEBYTECODE": "1", **(extra_env or {})}
    done = subprocess.run([sys.executable, "main.py"], cwd=folder, env=env, capture_output=True, text=True,
                          timeout=300)
    if check:
        assert done.returncode == 0, done.stderr
    return done


def _results(done) -> dict:
    return dict(line.split(" ", 1) for line in done.stdout.splitlines())


def _cache_files(cache):
    return sorted(p for p in cache.rglob("*.tco"))


def test_second_process_loads_what_the_first_compiled(tmp_path):
    _write(tmp_path)
    cache = tmp_path / "cache"
    first = _run(tmp_path, cache)
    assert _results(first)["cached"] == "0"
    assert "stored in the cache" in first.stderr
    assert stat.S_IMODE(os.stat(cache).st_mode) & 0o077 == 0          # private
    second = _run(tmp_path, cache)
    got = _results(second)
    assert got == {**_results(first), "cached": got["cached"]}
    assert got["cached"] == got["specializations"]                    # every one loaded, none compiled
    assert "value_and_grad(d, argnums=(0, 1)): loaded from the cache" in second.stderr   # vectorize's loop


def test_an_edited_helper_or_global_is_a_miss(tmp_path):
    _write(tmp_path)
    cache = tmp_path / "cache"
    first = _results(_run(tmp_path, cache))
    _write(tmp_path, scale="3.0", factor="5.0")       # another module's function, and a global constant
    second = _results(_run(tmp_path, cache))
    assert float(second["helper"]) == 2.5 * 5.0 + 1.0
    assert float(second["loop"]) == pytest.approx(float(first["loop"]) * 1.5, rel=1e-12)
    assert second["fma"] == first["fma"]
    assert int(second["cached"]) == 3                  # fma, norms, scale_rows; helper and loop compiled again


@pytest.mark.parametrize("damage", ["flip", "truncate", "foreign", "empty"])
def test_a_damaged_file_is_a_miss_with_a_warning(tmp_path, damage):
    _write(tmp_path)
    cache = tmp_path / "cache"
    first = _results(_run(tmp_path, cache))
    files = _cache_files(cache)
    assert files
    for path in files:
        data = bytearray(path.read_bytes())
        if damage == "flip":
            data[len(data) // 2] ^= 0x40
        elif damage == "truncate":
            data = data[:len(data) * 2 // 3]
        elif damage == "foreign":
            data = bytearray(b"\x7fELF" + bytes(range(256)) * 8)
        else:
            data = bytearray()
        path.write_bytes(bytes(data))
    second = _run(tmp_path, cache)
    assert {k: v for k, v in _results(second).items() if k != "cached"} == \
        {k: v for k, v in first.items() if k != "cached"}
    assert "(a miss)" in second.stderr
    third = _results(_run(tmp_path, cache))           # rewritten by the second process
    assert third["cached"] == third["specializations"]


def test_eight_processes_fill_an_empty_cache_at_once(tmp_path):
    _write(tmp_path)
    cache = tmp_path / "cache"
    env = {**os.environ, "TRACER_CACHE": "1", "TRACER_CACHE_DIR": str(cache), "PYTHONDONTWRITEBYTECODE": "1"}
    procs = [subprocess.Popen([sys.executable, "main.py"], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(8)]
    outputs = [p.communicate(timeout=600) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err for _, err in outputs]
    results = [{k: v for k, v in (line.split(" ", 1) for line in out.splitlines()) if k != "cached"}
               for out, _ in outputs]
    assert all(r == results[0] for r in results), results
    assert not list(cache.rglob("*.tmp"))
    last = _results(_run(tmp_path, cache))
    assert last["cached"] == last["specializations"]


def test_cache_off(tmp_path):
    _write(tmp_path)
    cache = tmp_path / "cache"
    _run(tmp_path, cache, extra_env={"TRACER_CACHE": "0"})
    assert not _cache_files(cache)


def test_cache_info_and_clear(tmp_path):
    _write(tmp_path)
    cache = tmp_path / "cache"
    _run(tmp_path, cache)
    env = {**os.environ, "TRACER_CACHE_DIR": str(cache)}
    info = subprocess.run([sys.executable, "-m", "tracer", "cache", "info"], env=env, capture_output=True,
                          text=True, timeout=120)
    assert info.returncode == 0 and str(cache) in info.stdout and "files: 0" not in info.stdout
    cleared = subprocess.run([sys.executable, "-m", "tracer", "cache", "clear"], env=env, capture_output=True,
                             text=True, timeout=120)
    assert cleared.returncode == 0 and "removed" in cleared.stdout
    assert not _cache_files(cache)


# ---------------------------------------------------------------------- the folder, in process
def test_eviction_keeps_the_most_recently_used(tmp_path):
    store = Store(str(tmp_path / "c"))
    for i in range(6):
        path = store.write("k" * 8, f"entry{i}", {"i": i}, bytes(1000))
        os.utime(path, ns=(i * 10**9, i * 10**9))        # entry0 the least recently used
    assert store.evict(3 * 1100) == 3
    left = sorted(p.name for p in (tmp_path / "c").rglob("*.tco"))
    assert left == ["entry3.tco", "entry4.tco", "entry5.tco"]


def test_read_checks_key_and_checksum(tmp_path):
    store = Store(str(tmp_path / "c"))
    path = store.write("key1", "e", {"a": 1}, b"payload")
    assert store.read(path, "key1") == ({"a": 1}, b"payload")
    assert store.read(path, "key2") is None               # made for another key: removed
    assert not os.path.exists(path)
    path = store.write("key1", "e", {"a": 1}, b"payload")
    assert open(path, "rb").read() == encode("key1", {"a": 1}, b"payload")


def test_a_folder_others_can_write_is_refused(tmp_path, caplog):
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(0o777)
    store = Store(str(folder))
    assert not store.usable()
    assert store.write("k", "e", {}, b"x") is None
    assert "not a private folder" in caplog.text


def test_a_file_others_can_write_is_refused(tmp_path, caplog):
    store = Store(str(tmp_path / "c"))
    path = store.write("k", "e", {"a": 1}, b"x")
    os.chmod(path, 0o666)
    assert store.read(path, "k") is None
    assert "not a private file" in caplog.text


def test_runs_as_a_script_module(tmp_path):
    """A function in __main__ (python script.py) is found again by its module's name."""
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent('''
        from tracer import trace
        C = (1.0, 2.0)
        @trace
        def f(x):
            return x * C[0] + C[1]
        print(f(3.0), sum(getattr(s, "from_cache", False) for s in f.specializations))
    '''))
    env = {**os.environ, "TRACER_CACHE": "1", "TRACER_CACHE_DIR": str(tmp_path / "cache")}
    outs = [subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120)
            for _ in range(2)]
    assert [o.stdout.split() for o in outs] == [["5.0", "0"], ["5.0", "1"]], [o.stderr for o in outs]


def test_pinned_arguments_and_gradients_load_without_llvm(tmp_path):
    """An int the trace used as a constant selects its own stored entry; gradients are stored too;
    a process that loads everything imports neither llvmlite nor the tracer's front end."""
    script = tmp_path / "pins.py"
    script.write_text(textwrap.dedent('''
        import sys
        from tracer import grad, trace

        @trace
        def power(x, n):        # n is pinned (a tuple's length): one specialization per n
            return x ** len((1.0,) * n)

        def f(x, y):
            return x * x * y + y

        ns = [int(a) for a in sys.argv[1:]]
        print([power(1.5, n) for n in ns], grad(f, argnums=(0, 1))(3.0, 2.0),
              sum(getattr(s, "from_cache", False) for s in power.specializations),
              "llvmlite" in sys.modules, "tracer.frontend.interpreter" in sys.modules)
    '''))
    env = {**os.environ, "TRACER_CACHE": "1", "TRACER_CACHE_DIR": str(tmp_path / "cache")}

    def run(*ns):
        done = subprocess.run([sys.executable, str(script), *map(str, ns)], env=env, capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, done.stderr
        return done.stdout.split("] ", 1)[1].split()

    assert run(3, 5)[-3:] == ["0", "True", "True"]
    assert run(5, 3) == ["(12.0,", "10.0)", "2", "False", "False"]     # both pins found, nothing compiled
    assert run(5, 7)[-3:] == ["1", "True", "True"]                       # n=7 compiled


def test_explain_and_dump_timings_say_what_the_cache_does(tmp_path):
    script = tmp_path / "explained.py"
    script.write_text(textwrap.dedent('''
        import tracer

        @tracer.trace
        def f(x, y):
            return x * y + 1.0

        @tracer.trace
        def noisy(x):
            print(x)
            return x

        print(tracer.explain(f, 1.0, 2.0).cache)
        f(1.0, 2.0)
        print(tracer.explain(f, 1.0, 2.0).cache)
        print(tracer.explain(noisy, 1.0).cache)
        print(tracer.explain(tracer.trace(f.py_func, cache=False), 1.0, 2.0).cache)
    '''))
    env = {**os.environ, "TRACER_CACHE": "1", "TRACER_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "not stored yet: the first call stores it"
    assert lines[1] == "stored: a new process loads it without compiling"
    assert lines[2].startswith("not stored: it calls into CPython")
    assert lines[3].startswith("off")
    dump = subprocess.run([sys.executable, "-m", "tracer", "dump", f"{script}:f", "--args", "1.0", "2.0", "--timings"],
                          env=env, capture_output=True, text=True, timeout=300)
    assert dump.returncode == 0, dump.stderr
    assert "stages: trace" in dump.stdout and "llvm-opt" in dump.stdout
    assert "compile cache: stored" in dump.stdout
