"""The ES module loader of a wasm32 export (`<name>.mjs`), in a real browser and under Node.js.

fma, its gradient and a small MLP forward are exported to wasm32; the output folder is served on
127.0.0.1 (Python's http.server, with .wasm as application/wasm) next to a small page that loads
the module through the .mjs loader in five ways (its default URL, a URL string, a URL object, a
fetch Response, the bytes) and writes what it computed into the page; headless Chromium runs the
page and prints the DOM (`--dump-dom`) once the page says it is done (HOLD). Node.js runs the same
computation with the module given as a path, as bytes and as a Response (and through the CommonJS
loader). Every double travels as the hex digits of its bits: the browser's, Node's and the JIT's
fma and gradients agree bit for bit, the MLP agrees with the JIT as in test_export.py (wasi-libc's
exp is not glibc's), and every way of loading the module gives the same bits.

The tests skip without wasm-ld and wasi-libc (Debian: lld wasi-libc), and the browser tests
without Chromium (Debian: chromium; .ci/run installs it) or where it cannot start.
"""
from __future__ import annotations

import contextlib
import functools
import html
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest
from test_export import EXAMPLES, NODE, POINTS, WASM_READY, fma, mlp, small_mlp_weights  # mlp: examples/mlp_numpy.py

from tracer import export, trace

pytestmark = pytest.mark.skipif(not WASM_READY, reason="no wasm-ld and wasi-libc (Debian: lld wasi-libc)")

CHROMIUM = next(filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None)
needs_node = pytest.mark.skipif(NODE is None, reason="no Node.js")
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="no Chromium (Debian: apt-get install chromium)")

# The computation the page and Node.js both run: CASE (written by the test) through a loaded module.
CASE_JS = '''const view = new DataView(new ArrayBuffer(8));
export function bits(x) {          // a double as the 16 hex digits of its bits
  view.setFloat64(0, x);
  return view.getBigUint64(0).toString(16).padStart(16, "0");
}
const array = (a) => ({ data: Float64Array.from(a.data), shape: a.shape });

export function compute(lib) {
  const out = {
    fma: CASE.points.map((p) => bits(lib.fma(...p))),
    grad: CASE.points.map((p) => { const [v, g] = lib.fma_grad(...p); return [bits(v), g.map(bits)]; }),
  };
  const p = lib.mlp(...CASE.mlp.map(array));
  out.mlp = { shape: p.shape, data: Array.from(p.data, bits) };
  try {
    lib.mlp(...CASE.mlp.slice(0, 4).map(array), array(CASE.bad_x));
    out.error = "no error";
  } catch (e) {
    out.error = [e.code, e.kind, e.message];
  }
  return out;
}
'''

PAGE = '''<!doctype html>
<meta charset="utf-8">
<title>tracer: a wasm32 export in a browser</title>
<body data-status="running">
<pre id="result">running</pre>
<script type="module">
import { load } from "./net.mjs";
import { compute } from "./case.mjs";
const show = (x) => { document.getElementById("result").textContent = JSON.stringify(x); };
const streaming = WebAssembly.instantiateStreaming;
let streamed = 0;           // how many loads compiled the module while it downloaded
WebAssembly.instantiateStreaming = (...args) => { streamed += 1; return streaming(...args); };
try {
  const response = await fetch("net.wasm");
  const out = { wasmType: response.headers.get("Content-Type"), results: {} };
  const bytes = await response.arrayBuffer();
  const ways = { default: () => load(), url: () => load("net.wasm"), absolute: () => load(new URL("net.wasm", location.href)),
                 response: () => load(fetch("net.wasm")), bytes: () => load(bytes) };
  for (const [way, loadIt] of Object.entries(ways)) out.results[way] = compute(await loadIt());
  out.streamed = streamed;
  try { await load("missing.wasm"); out.missing = "loaded"; } catch (e) { out.missing = e.message; }
  show(out);
} catch (e) {
  show({ error: String((e && e.stack) || e) });
}
document.body.dataset.status = "done";
</script>
'''

NODE_SCRIPT = '''import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { load } from "./net.mjs";
import { compute } from "./case.mjs";

const path = fileURLToPath(new URL("./net.wasm", import.meta.url));
const bytes = await readFile(path);
const ways = {
  default: () => load(), path: () => load(path), relative: () => load("net.wasm"),
  uint8array: () => load(new Uint8Array(bytes)),
  arraybuffer: () => load(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)),
  response: () => load(new Response(bytes, { headers: { "Content-Type": "application/wasm" } })),
  commonjs: () => createRequire(import.meta.url)("./net.js").load(),
};
const out = { results: {} };
for (const [way, loadIt] of Object.entries(ways)) out.results[way] = compute(await loadIt());
try { await load(42); } catch (e) { out.refused = [e.name, e.message]; }
console.log(JSON.stringify(out));
'''


def bits(x: float) -> str:
    return struct.pack(">d", x).hex()


@pytest.fixture(scope="module")
def exported_net(tmp_path_factory):
    """The folder holding net.wasm, net.mjs and net.js (fma, fma_grad, mlp), case.mjs, and the
    results Python expects."""
    folder = tmp_path_factory.mktemp("net")
    W1, b1, W2, b2 = small_mlp_weights()
    x = np.random.default_rng(4).random((3, 20))
    result = export([(fma, (3.0, -1.0, 2.0)), (mlp, (W1, b1, W2, b2, x))], out_dir=str(folder), name="net",
                    grad=[fma], target="wasm32")
    assert result.loader.endswith("net.js") and (folder / "net.mjs").exists()
    case = {"points": POINTS, "mlp": [{"data": a.ravel().tolist(), "shape": list(a.shape)} for a in (W1, b1, W2, b2, x)],
            "bad_x": {"data": x[:, :19].ravel().tolist(), "shape": [3, 19]}}
    (folder / "case.mjs").write_text(f"const CASE = {json.dumps(case)};\n{CASE_JS}")
    jit_fma = trace(fma)
    expected = {"fma": [bits(jit_fma(*p)) for p in POINTS],
                "grad": [[bits(jit_fma(*p)), [bits(p[1]), bits(p[0]), bits(1.0)]] for p in POINTS],
                "mlp": trace(mlp)(W1, b1, W2, b2, x)}
    return folder, expected


def check_results(got: dict, expected: dict) -> None:
    assert got["fma"] == expected["fma"]                     # the JIT's bits
    assert got["grad"] == expected["grad"]
    assert got["mlp"]["shape"] == [3, 3]
    mlp_values = [struct.unpack(">d", bytes.fromhex(h))[0] for h in got["mlp"]["data"]]
    assert np.allclose(mlp_values, expected["mlp"].ravel(), rtol=1e-15, atol=0)
    code, kind, message = got["error"]
    assert (code, kind) == (4, "ValueError") and "mlp" in message, got["error"]


def test_the_module_loader_is_an_es_module(exported_net):
    folder, _ = exported_net
    text = (folder / "net.mjs").read_text()
    assert "export async function load(" in text
    assert "require(" not in text and "__dirname" not in text and "module.exports" not in text
    assert 'import("node:fs/promises")' in text          # only when given a path, in Node.js
    assert "module.exports = { load };" in (folder / "net.js").read_text()


@needs_node
def test_the_module_loader_in_node(exported_net):
    folder, expected = exported_net
    (folder / "node_check.mjs").write_text(NODE_SCRIPT)
    done = subprocess.run([NODE, "node_check.mjs"], cwd=folder, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    assert set(got["results"]) == {"default", "path", "relative", "uint8array", "arraybuffer", "response", "commonjs"}
    for way, results in got["results"].items():
        check_results(results, expected)
        assert results == got["results"]["path"], way
    assert got["refused"][0] == "TypeError" and "ArrayBuffer" in got["refused"][1]


# Chromium's --dump-dom prints the DOM when the page's load event has fired, which does not wait
# for a module script's awaits (and --virtual-time-budget, which lets timers run ahead, does not
# wait for WebAssembly compiling: on a busy machine the page was dumped before it finished). So a
# page under test gets HOLD before </body>: an image the load event waits for, which the server
# answers once the page has fetched /__done__ (its body's data-status no longer "running").
HOLD = """<img src="/__hold__" alt="" hidden>
<script type="module">
while (document.body.dataset.status === "running") await new Promise((resolve) => setTimeout(resolve, 20));
await fetch("/__done__");
</script>
"""
HOLD_SECONDS = 90


def with_hold(page: str) -> str:
    assert page.count("</body>") <= 1
    return page.replace("</body>", HOLD + "</body>") if "</body>" in page else page + HOLD


class QuietHandler(SimpleHTTPRequestHandler):
    extensions_map = {**SimpleHTTPRequestHandler.extensions_map, ".wasm": "application/wasm",
                      ".mjs": "text/javascript", ".js": "text/javascript", ".html": "text/html"}
    done: threading.Event

    def do_GET(self):
        if self.path == "/__done__":
            self.done.set()
        elif self.path == "/__hold__":
            self.done.wait(HOLD_SECONDS)
        else:
            return super().do_GET()
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


@contextlib.contextmanager
def serving(folder):
    """http://127.0.0.1:<port>/ serving `folder` (and /__hold__, /__done__) from a thread."""
    handler = type("Handler", (QuietHandler,), {"done": threading.Event()})
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        handler.done.set()
        server.shutdown()
        server.server_close()
        thread.join()


def chromium_dom(url: str, profile) -> subprocess.CompletedProcess:
    """Headless Chromium's DOM of `url` after its load event (a page under test holds it: HOLD)."""
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic",
               "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
               f"--user-data-dir={profile}", "--dump-dom", url]
    return subprocess.run(command, capture_output=True, text=True, timeout=180)


@pytest.fixture(scope="module")
def chromium(tmp_path_factory):
    """Skips the test where Chromium is installed but cannot start (no sandbox support, say)."""
    if CHROMIUM is None:
        pytest.skip("no Chromium (Debian: apt-get install chromium)")
    profile = tmp_path_factory.mktemp("chromium-probe")
    try:
        done = chromium_dom("data:text/html,<p id=probe>ready</p>", profile)
    except subprocess.TimeoutExpired:
        pytest.skip(f"{CHROMIUM} did not answer within 180 s")
    if "ready" not in done.stdout:
        pytest.skip(f"{CHROMIUM} cannot run headless here: {done.stderr.strip()[-500:]}")
    return CHROMIUM


def page_result(dom: str, element: str) -> str:
    found = re.search(rf'<pre id="{element}">(.*?)</pre>', dom, re.S)
    assert found, dom[-2000:]
    return html.unescape(found.group(1))


@needs_chromium
def test_the_module_loader_in_chromium(exported_net, chromium, tmp_path):
    folder, expected = exported_net
    (folder / "browser.html").write_text(with_hold(PAGE))
    with serving(folder) as base:
        done = chromium_dom(base + "browser.html", tmp_path / "profile")
    text = page_result(done.stdout, "result")
    assert text != "running", f"the page did not finish:\n{done.stderr[-2000:]}"
    got = json.loads(text)
    assert "error" not in got, got.get("error")
    assert got["wasmType"] == "application/wasm"
    assert got["streamed"] == 4                 # every load but the bytes' went through instantiateStreaming
    assert set(got["results"]) == {"default", "url", "absolute", "response", "bytes"}
    for way, results in got["results"].items():
        check_results(results, expected)
        assert results == got["results"]["default"], way
    assert "HTTP 404" in got["missing"]


@needs_chromium
def test_the_example_page_runs_in_chromium(chromium, tmp_path):
    """examples/export_wasm/index.html: the MLP's probabilities agree with NumPy's."""
    folder = os.path.join(EXAMPLES, "export_wasm")
    script = (f"import sys; sys.path.insert(0, {os.path.join(EXAMPLES, 'export_c')!r}); import export_model; "
              f"export_model.main({str(tmp_path / 'site' / 'build')!r}, target='wasm32')")
    subprocess.run([sys.executable, "-c", script], check=True, capture_output=True)
    shutil.copy(os.path.join(folder, "page.js"), tmp_path / "site" / "page.js")
    with open(os.path.join(folder, "index.html")) as page:
        (tmp_path / "site" / "index.html").write_text(with_hold(page.read()))
    with serving(tmp_path / "site") as base:
        done = chromium_dom(base, tmp_path / "profile")
    output = page_result(done.stdout, "output")
    assert 'data-status="ok"' in done.stdout, output + "\n" + done.stderr[-2000:]
    assert "fma(3, -1, 2) = -1" in output and "value and gradient: -1, [-1, 3, 1]" in output
    assert "status 4" in output
