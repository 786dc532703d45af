// The script of index.html: loads the module export_model.py wrote with its ES module loader,
// runs fma, its gradient and the MLP forward on the batch in weights.bin, and shows the results.
import { load } from "./build/model.mjs";

const output = document.getElementById("output");
const lines = [];
const say = (line) => { lines.push(line); output.textContent = lines.join("\n"); };
const BATCH = 4;

try {
  const model = await load();      // build/model.wasm, beside model.mjs (instantiateStreaming)

  say(`fma(3, -1, 2) = ${model.fma(3, -1, 2)}`);
  const [value, gradient] = model.fma_grad(3, -1, 2);
  say(`value and gradient: ${value}, [${gradient.join(", ")}]`);

  // float64, in this order: W1, b1, W2, b2, x, the expected probabilities
  const response = await fetch("build/weights.bin");
  if (!response.ok) throw new Error(`build/weights.bin: HTTP ${response.status}`);
  const all = new Float64Array(await response.arrayBuffer());
  let at = 0;
  const take = (n) => all.slice(at, (at += n));
  const W1 = { data: take(784 * 50), shape: [784, 50] }, b1 = { data: take(50), shape: [50] };
  const W2 = { data: take(50 * 10), shape: [50, 10] }, b2 = { data: take(10), shape: [10] };
  const x = { data: take(BATCH * 784), shape: [BATCH, 784] }, expected = take(BATCH * 10);

  const p = model.mlp(W1, b1, W2, b2, x);
  const worst = Math.max(...p.data.map((v, i) => Math.abs(v - expected[i])));
  say(`MLP forward: ${p.shape.join(" x ")} probabilities; row 0 class 0..2: ` +
      `${Array.from(p.data.slice(0, 3), (v) => v.toFixed(6)).join(" ")}; max |wasm - Python| = ${worst.toExponential(1)}`);

  try {
    model.mlp(W1, b1, W2, b2, { data: x.data.slice(0, BATCH * 783), shape: [BATCH, 783] });
    say("with 783 inputs per row: no error?");
  } catch (e) {
    say(`with 783 inputs per row: ${e.kind} (status ${e.code}): ${e.message}`);
  }

  const ok = worst < 1e-12;
  document.getElementById("verdict").textContent = ok ? "The browser computed what Python computed."
                                                      : "The MLP's output differs from Python's!";
  document.body.dataset.status = ok ? "ok" : "failed";

  const form = document.getElementById("fma");
  const update = () => {
    const [x, y, z] = ["x", "y", "z"].map((k) => Number(form.elements[k].value));
    const [v, g] = model.fma_grad(x, y, z);
    document.getElementById("fma-result").textContent =
      `fma(${x}, ${y}, ${z}) = ${v}\ngradient (d/dx, d/dy, d/dz) = (${g.join(", ")})`;
  };
  form.addEventListener("input", update);
  update();
} catch (e) {
  say(`error: ${e.message}`);
  document.body.dataset.status = "failed";
}
