#!/usr/bin/env node
// Differential fuzzer for the WebAssembly number module (assembly/number.ts)
// against V8, which is the reference RFC 8785 relies on:
//
//   formatNumber(x)         === String(x)
//   parseNumber(text)       is bit-identical to Number(text) (Object.is)
//   writeCanonicalNumber(t) === String(Number(t)), or -1 when not finite
//
// Usage: node scripts/fuzz-numbers.mjs [count=10000000] [--seed N] [--target scalar|simd|both]
// Exits 1 on the first mismatch, printing the input, the seed and the case index.

import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { randomInt } from "node:crypto";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");

// ---- arguments -------------------------------------------------------------
let count = 10_000_000;
let seed = randomInt(0, 2 ** 31);
let target = "both";
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === "--seed") seed = Number(argv[++i]) >>> 0;
  else if (a.startsWith("--seed=")) seed = Number(a.slice(7)) >>> 0;
  else if (a === "--target") target = argv[++i];
  else if (a.startsWith("--target=")) target = a.slice(9);
  else if (/^\d+(e\d+)?$/i.test(a)) count = Number(a);
  else {
    console.error(`unknown argument ${a}\nusage: fuzz-numbers.mjs [count] [--seed N] [--target scalar|simd|both]`);
    process.exit(2);
  }
}

// ---- wasm harness ----------------------------------------------------------
function harness(file) {
  const bytes = readFileSync(resolve(root, "build", file));
  const ex = new WebAssembly.Instance(new WebAssembly.Module(bytes), {}).exports;
  const mem = ex.memory;
  // I/O area past everything the module owns: grow and use the new pages.
  const base = mem.buffer.byteLength;
  mem.grow(2);
  const IN = base, OUT = base + 65536, IN_CAP = 65536;
  let u8 = new Uint8Array(mem.buffer);
  const enc = new TextEncoder();
  const view = () => (u8.buffer === mem.buffer ? u8 : (u8 = new Uint8Array(mem.buffer)));
  const put = (s) => {
    if (s.length > IN_CAP) throw new Error("input too long for the I/O area");
    return enc.encodeInto(s, view().subarray(IN, IN + IN_CAP)).written;
  };
  const latin1 = (n) => {
    const v = view();
    let s = "";
    for (let i = 0; i < n; i++) s += String.fromCharCode(v[OUT + i]);
    return s;
  };
  return {
    name: file,
    parse: (s) => ex.parseNumber(IN, put(s)),
    format: (x) => latin1(ex.formatNumber(x, OUT)),
    canon: (s) => {
      const n = ex.writeCanonicalNumber(IN, put(s), OUT);
      return n < 0 ? n : latin1(n);
    },
  };
}

// ---- deterministic PRNG (sfc32) ----------------------------------------------
function sfc32(s) {
  let a = 0x9e3779b9, b = 0x243f6a88, c = 0xb7e15162, d = s >>> 0;
  const next = () => {
    a >>>= 0; b >>>= 0; c >>>= 0; d >>>= 0;
    const t = (a + b | 0) + d | 0;
    d = d + 1 | 0;
    a = b ^ (b >>> 9);
    b = c + (c << 3) | 0;
    c = (c << 21) | (c >>> 11);
    c = c + t | 0;
    return t >>> 0;
  };
  for (let i = 0; i < 16; i++) next();
  return next;
}

// ---- generators ---------------------------------------------------------------
const f64 = new Float64Array(1);
const u32v = new Uint32Array(f64.buffer); // little-endian: [lo, hi]
const bitsOf = (x) => { f64[0] = x; return (BigInt(u32v[1]) << 32n) | BigInt(u32v[0]); };
const fromBits = (hi, lo) => { u32v[1] = hi; u32v[0] = lo; return f64[0]; };
const hex = (x) => "0x" + bitsOf(x).toString(16).padStart(16, "0");

function makeGen(rnd) {
  const below = (n) => Math.floor((rnd() / 4294967296) * n);
  const digits = (n, lead = true) => {
    let s = lead ? String(1 + below(9)) : "";
    while (s.length < n) s += String(below(10));
    return s;
  };
  const nextUp = (x) => {
    f64[0] = x;
    if (u32v[0] === 0xffffffff) { u32v[0] = 0; u32v[1]++; } else u32v[0]++;
    return f64[0];
  };
  const nextDown = (x) => {
    f64[0] = x;
    if (u32v[0] === 0) { u32v[0] = 0xffffffff; u32v[1]--; } else u32v[0]--;
    return f64[0];
  };

  // Doubles ----------------------------------------------------------------
  const special = [
    Number.MIN_VALUE, 2 * Number.MIN_VALUE, 3 * Number.MIN_VALUE, Number.MAX_VALUE,
    2 ** 53, 2 ** 53 - 1, 2 ** 53 + 2, 2 ** 53 - 2, 9007199254740993, 2 ** 63, 2 ** 64,
    2.2250738585072014e-308, 2.225073858507201e-308, 1e21, 1e21 - 65536, 999999999999999900000,
    1e-6, 1e-7, 0.000001, 1.5e-7, 5e-324, 1e23, 1e22, 0.1, 0.2, 0.3, 1 / 3, 2 / 3,
    333333333.33333329, 123e-20, 4.35, 0.7, 1, 100,
  ];
  const randomBits = () => {
    for (;;) {
      const hi = rnd(), lo = rnd();
      if ((hi & 0x7ff00000) !== 0x7ff00000) return fromBits(hi, lo);
    }
  };
  const doubleGens = [
    [40, randomBits],
    [8, () => fromBits(rnd() & 0x800fffff, rnd())], // subnormals
    [8, () => { // "nice" decimals
      const s = digits(1 + below(9)) + "e" + (below(40) - 30);
      return Number(s);
    }],
    [6, () => { const x = 2 ** (below(2098) - 1074); return [x, nextUp(x), nextDown(x) || x][below(3)]; }],
    [6, () => { const x = Number("1e" + (below(632) - 323)); return [x, nextUp(x), nextDown(x) || x][below(3)]; }],
    [8, () => below(2) ? below(2 ** 31) : Math.floor((rnd() * 2 ** 21 + (rnd() >>> 11)))], // integers
    [4, () => fromBits(0x43300000 + below(0xb0 << 20 >>> 0), rnd())], // integers 2^52..2^75ish
    [4, () => (rnd() / 4294967296) * 10 ** (below(14) - 6)], // everyday magnitudes
    [2, () => special[below(special.length)]],
  ];

  // Strings -----------------------------------------------------------------
  // Renders the decimal digits S times 10^X in a random valid JSON spelling.
  const render = (S, X) => {
    const style = below(4);
    if (style === 0 || S.length + Math.abs(X) > 400) { // mantissa as integer
      return X === 0 && below(2) ? S : S + (below(2) ? "e" : "E") + (X < 0 ? "-" : below(2) ? "+" : "") + Math.abs(X);
    }
    if (style === 1) { // scientific d.ddd
      const e = X + S.length - 1;
      const m = S.length > 1 ? S[0] + "." + S.slice(1) : S;
      return m + "e" + (e < 0 ? "-" : "") + Math.abs(e);
    }
    // plain positional, possibly with extra trailing zeros
    let s;
    if (X >= 0) s = S + "0".repeat(X);
    else if (-X < S.length) s = S.slice(0, S.length + X) + "." + S.slice(S.length + X);
    else s = "0." + "0".repeat(-X - S.length) + S;
    if (style === 3 && s.includes(".")) s += "0".repeat(below(5));
    return s;
  };
  const exact = (x) => { // x > 0 finite -> {N, F}: x == N / 10^F exactly
    const b = bitsOf(x);
    const ef = Number(b >> 52n);
    const fr = b & ((1n << 52n) - 1n);
    const m = ef === 0 ? fr : fr | (1n << 52n);
    const e = ef === 0 ? -1074 : ef - 1075;
    return { m, e };
  };
  const midpointDigits = (x) => { // exact decimal of the midpoint between x and nextUp(x)
    const { m, e } = exact(x);
    const odd = 2n * m + 1n; // midpoint = odd * 2^(e-1)
    const p = e - 1;
    if (p >= 0) return { N: odd << BigInt(p), F: 0 };
    return { N: odd * 5n ** BigInt(-p), F: -p };
  };
  const sign = () => (below(8) === 0 ? "-" : "");
  const stringGens = [
    [20, () => { // short
      let s = below(4) === 0 ? "0" : digits(1 + below(6));
      if (below(2)) s += "." + digits(1 + below(6), false);
      if (below(3) === 0) s += "e" + ["", "+", "-"][below(3)] + below(30);
      return sign() + s;
    }],
    [15, () => sign() + render(digits(17), below(660) - 345)], // 17 digits across the range
    [10, () => sign() + render(digits(15 + below(5)), below(60) - 30)],
    [10, () => sign() + render(digits(20 + below(21)), below(700) - 360)], // 20-40 digits
    [2, () => sign() + render(digits(700 + below(400)), below(1500) - 1100)], // ~800 digits
    [6, () => sign() + digits(1 + below(20)) + "e" + ["", "+", "-"][below(3)] + (300 + below(50))], // near limits
    [3, () => sign() + digits(1 + below(5)) + "e" + (below(2) ? "-" : "+") + digits(1 + below(14))], // huge exponents
    [3, () => sign() + "0." + "0".repeat(below(400)) + digits(1 + below(30)) + (below(2) ? "e" + below(400) : "")],
    [20, () => { // halfway points and their immediate neighbours
      let x;
      do x = Math.abs(randomBits()); while (x === Number.MAX_VALUE);
      if (below(4) === 0) x = Math.abs(fromBits(rnd() & 0x000fffff, rnd())); // subnormal
      if (below(8) === 0) x = Math.abs(Number(digits(1 + below(16)) + "e" + (below(40) - 10)));
      let { N, F } = midpointDigits(x);
      const v = below(6);
      if (v === 1) { N = N * 1000n + 1n; F += 3; }
      else if (v === 2) { N = N * 1000n - 1n; F += 3; }
      else if (v === 3) { N = N * 10n ** 20n + BigInt(1 + below(1000)); F += 20; }
      else if (v >= 4) { // the deciding digit far beyond the 800 digits the parser keeps
        const z = 30 + below(300);
        N = N * 10n ** BigInt(z) + (v === 4 ? 1n : -1n); F += z;
      }
      let S = N.toString();
      let X = -F;
      while (S.length > 1 && S.endsWith("0")) { S = S.slice(0, -1); X++; }
      return sign() + render(S, X);
    }],
    [4, () => { // exact decimal expansions of doubles (exactly representable inputs)
      const x = Math.abs(randomBits());
      const { m, e } = exact(x);
      let S, X;
      if (e >= 0) { S = (m << BigInt(e)).toString(); X = 0; } else { S = (m * 5n ** BigInt(-e)).toString(); X = e; }
      while (S.length > 1 && S.endsWith("0")) { S = S.slice(0, -1); X++; }
      return sign() + render(S, X);
    }],
    [4, () => sign() + render(digits(1 + below(15)), below(40) - 25) ], // canonical fast path shapes
    [3, () => sign() + String(Math.abs(randomBits())).replace("+", "")], // shortest forms of doubles
  ];

  const pick = (gens) => {
    const total = gens.reduce((a, g) => a + g[0], 0);
    return () => {
      let r = below(total);
      for (const [w, g] of gens) { if (r < w) return g(); r -= w; }
      return gens[0][1]();
    };
  };
  return { double: pick(doubleGens), string: pick(stringGens), below };
}

// ---- checks --------------------------------------------------------------------
function checkDouble(h, x) {
  const got = h.format(x);
  const want = String(x);
  if (got !== want) return `formatNumber(${want} [${hex(x)}]) = ${JSON.stringify(got)}, want ${JSON.stringify(want)}`;
  const back = h.parse(want);
  const wantBack = Number(want); // x itself, except -0 which prints as "0"
  if (!Object.is(back, wantBack)) {
    return `parseNumber(${JSON.stringify(want)}) = ${back} [${hex(back)}], want ${hex(wantBack)}`;
  }
  const c = h.canon(want);
  if (c !== want) return `writeCanonicalNumber(${JSON.stringify(want)}) = ${JSON.stringify(c)}, want ${JSON.stringify(want)}`;
  return null;
}

function checkString(h, s) {
  const want = Number(s);
  const got = h.parse(s);
  if (!Object.is(got, want)) {
    return `parseNumber(${JSON.stringify(s)}) = ${got} [${hex(got)}], want ${want} [${hex(want)}]`;
  }
  const c = h.canon(s);
  const wc = Number.isFinite(want) ? String(want) : -1;
  if (c !== wc) return `writeCanonicalNumber(${JSON.stringify(s)}) = ${JSON.stringify(c)}, want ${JSON.stringify(wc)}`;
  return null;
}

// ---- main -----------------------------------------------------------------------
const targets = target === "both" ? ["tapedeck.wasm", "tapedeck-simd.wasm"]
  : target === "scalar" ? ["tapedeck.wasm"] : target === "simd" ? ["tapedeck-simd.wasm"] : null;
if (!targets) { console.error(`bad --target ${target}`); process.exit(2); }
const hs = targets.map(harness);
const rnd = sfc32(seed);
const gen = makeGen(rnd);

console.log(`fuzz-numbers: ${count.toLocaleString("en-US")} cases, seed ${seed}, targets ${targets.join(", ")}`);
const t0 = process.hrtime.bigint();
let doubles = 0, strings = 0;
const step = Math.max(1, Math.min(1_000_000, Math.floor(count / 10)));
for (let i = 0; i < count; i++) {
  let err = null, input;
  if ((rnd() & 1) === 0) {
    let x = gen.double();
    if (gen.below(2)) x = -x;
    input = `double ${String(x)} [${hex(x)}]`;
    doubles++;
    for (const h of hs) if ((err = checkDouble(h, x))) { err = `${h.name}: ${err}`; break; }
  } else {
    const s = gen.string();
    input = `string ${JSON.stringify(s)}`;
    strings++;
    for (const h of hs) if ((err = checkString(h, s))) { err = `${h.name}: ${err}`; break; }
  }
  if (err) {
    console.error(`MISMATCH at case ${i} (seed ${seed})\n  input: ${input}\n  ${err}`);
    console.error(`reproduce: node scripts/fuzz-numbers.mjs ${i + 1} --seed ${seed} --target ${target}`);
    process.exit(1);
  }
  if ((i + 1) % step === 0) {
    const s = Number(process.hrtime.bigint() - t0) / 1e9;
    console.log(`  ${(i + 1).toLocaleString("en-US")} cases ok (${s.toFixed(1)} s, ${Math.round((i + 1) / s).toLocaleString("en-US")}/s)`);
  }
}
const secs = Number(process.hrtime.bigint() - t0) / 1e9;
console.log(`fuzz-numbers: OK — ${count.toLocaleString("en-US")} cases (${doubles.toLocaleString("en-US")} doubles, ${strings.toLocaleString("en-US")} strings) on ${targets.length} build(s), seed ${seed}, ${secs.toFixed(1)} s`);
