// Dev microbenchmark for the wasm SHA-256: scalar build vs SIMD build vs node:crypto.
// Usage: node scripts/bench-sha-wasm.mjs [scalar.wasm] [simd.wasm]   (RUNS=n to change repeats)
//
// The machine is noisy, so contestants are interleaved run by run (a slow patch hits all of
// them alike) and medians are reported. Input data is already resident in wasm memory, so the
// copy-in cost is not included for wasm; node:crypto hashes Buffers (one call per message).
import fs from "node:fs";
import crypto from "node:crypto";

const files = {
  scalar: process.argv[2] ?? "build/tapedeck.wasm",
  simd: process.argv[3] ?? "build/tapedeck-simd.wasm",
};
const RUNS = Number(process.env.RUNS ?? 31);

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

// Deterministic data so runs are comparable.
function prng(seed) {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}
const rnd = prng(42);
const big = crypto.randomBytes(1 << 20);
const pool = crypto.randomBytes(4 << 20);
const sets = {
  "10000 x 200 B": Array.from({ length: 10000 }, (_, i) => [(i * 257) % (pool.length - 4096), 200]),
  "1000 x 300..800 B": Array.from({ length: 1000 }, (_, i) => [(i * 1031) % (pool.length - 4096), 300 + Math.floor(rnd() * 501)]),
};

const wasm = Object.entries(files).map(([kind, file]) => {
  const ex = new WebAssembly.Instance(new WebAssembly.Module(fs.readFileSync(file)), {}).exports;
  const base = ex.memory.buffer.byteLength;
  ex.memory.grow(((big.length + pool.length + (1 << 20)) >>> 16) + 1);
  const u8 = new Uint8Array(ex.memory.buffer);
  const bigPtr = base;
  const poolPtr = bigPtr + big.length;
  const jobsPtr = { "10000 x 200 B": poolPtr + pool.length, "1000 x 300..800 B": poolPtr + pool.length + 80000 };
  const outPtr = poolPtr + pool.length + 96000;
  u8.set(big, bigPtr);
  u8.set(pool, poolPtr);
  const dv = new DataView(ex.memory.buffer);
  for (const [name, set] of Object.entries(sets)) {
    set.forEach(([o, l], i) => {
      dv.setUint32(jobsPtr[name] + 8 * i, poolPtr + o, true);
      dv.setUint32(jobsPtr[name] + 8 * i + 4, l, true);
    });
  }
  return { kind, ex, bigPtr, poolPtr, jobsPtr, outPtr };
});

const cases = [];
cases.push({
  name: "sha256 one-shot, 1 MB",
  bytes: big.length,
  fns: {
    ...Object.fromEntries(wasm.map((w) => [w.kind, () => w.ex.sha256(w.bigPtr, big.length, w.outPtr)])),
    "node createHash": () => crypto.createHash("sha256").update(big).digest(),
  },
});
for (const [name, set] of Object.entries(sets)) {
  const bufs = set.map(([o, l]) => pool.subarray(o, o + l));
  const fns = {};
  for (const w of wasm) fns[`${w.kind} sha256Many`] = () => w.ex.sha256Many(w.jobsPtr[name], set.length, w.outPtr);
  for (const w of wasm) fns[`${w.kind} JS loop of sha256`] = () => { for (const [o, l] of set) w.ex.sha256(w.poolPtr + o, l, w.outPtr); };
  fns["node createHash"] = () => { for (const b of bufs) crypto.createHash("sha256").update(b).digest(); };
  if (crypto.hash) fns["node crypto.hash"] = () => { for (const b of bufs) crypto.hash("sha256", b, "buffer"); };
  cases.push({ name: `batch ${name}`, bytes: set.reduce((s, [, l]) => s + l, 0), fns });
}
{
  const m = Array.from({ length: 1000 }, (_, i) => pool.subarray(32 * i, 32 * i + 32));
  const fns = Object.fromEntries(wasm.map((w) => [`${w.kind} pathChain`, () => w.ex.pathChain(w.poolPtr, 1000, w.outPtr)]));
  fns["node createHash chain"] = () => {
    let p = Buffer.from(m[0]);
    for (let i = 1; i < m.length; i++) p = crypto.createHash("sha256").update(`${p.toString("hex")}:${m[i].toString("hex")}`).digest();
  };
  cases.push({ name: "pathChain, 1000 digests (999 x 129 B)", bytes: 999 * 129, fns });
}

const rows = [];
for (const c of cases) {
  const names = Object.keys(c.fns);
  for (const n of names) for (let i = 0; i < 5; i++) c.fns[n](); // warm-up and tier-up
  const ts = Object.fromEntries(names.map((n) => [n, []]));
  for (let r = 0; r < RUNS; r++) {
    for (const n of names) {
      const t0 = process.hrtime.bigint();
      c.fns[n]();
      ts[n].push(Number(process.hrtime.bigint() - t0) / 1e3);
    }
  }
  const scalarKey = names.find((n) => n.startsWith("scalar"));
  const ref = median(ts[scalarKey]);
  for (const n of names) {
    const us = median(ts[n]);
    rows.push({ case: c.name, who: n, "us/batch": us.toFixed(0), "MB/s": (c.bytes / us).toFixed(0), "vs scalar": (ref / us).toFixed(2) + "x" });
  }
}
console.table(rows);
