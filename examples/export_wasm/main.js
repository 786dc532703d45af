// Runs the WebAssembly module examples/export_wasm/export_model.py wrote: fma, its gradient, and
// the MLP forward on the batch in weights.bin, checked against the probabilities Python computed.
"use strict";
const fs = require("fs");
const path = require("path");

(async () => {
  const build = path.join(__dirname, "build");
  const model = await require(path.join(build, "model.js")).load();

  console.log(`fma(3, -1, 2) = ${model.fma(3, -1, 2)}`);
  const [value, gradient] = model.fma_grad(3, -1, 2);
  console.log(`value and gradient: ${value}, [${gradient.join(", ")}]`);

  // float64, in this order: W1, b1, W2, b2, x, the expected probabilities
  const bytes = fs.readFileSync(path.join(build, "weights.bin"));
  const all = new Float64Array(bytes.buffer, bytes.byteOffset, bytes.length / 8);
  const BATCH = 4;
  let at = 0;
  const take = (n) => all.slice(at, (at += n));
  const W1 = { data: take(784 * 50), shape: [784, 50] }, b1 = { data: take(50), shape: [50] };
  const W2 = { data: take(50 * 10), shape: [50, 10] }, b2 = { data: take(10), shape: [10] };
  const x = { data: take(BATCH * 784), shape: [BATCH, 784] }, expected = take(BATCH * 10);

  const p = model.mlp(W1, b1, W2, b2, x);
  const worst = Math.max(...p.data.map((v, i) => Math.abs(v - expected[i])));
  console.log(`MLP forward: ${p.shape.join(" x ")} probabilities; row 0 class 0..2: ` +
              `${Array.from(p.data.slice(0, 3), (v) => v.toFixed(6)).join(" ")}; max |wasm - Python| = ${worst.toExponential(1)}`);

  try {
    model.mlp(W1, b1, W2, b2, { data: x.data.slice(0, BATCH * 783), shape: [BATCH, 783] });
  } catch (e) {
    console.log(`with 783 inputs per row: ${e.kind} (status ${e.code}): ${e.message}`);
  }
  process.exitCode = worst < 1e-12 ? 0 : 1;
})();
