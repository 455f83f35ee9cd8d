#!/usr/bin/env node
// tapedeck benchmark: `npm run bench` (node bench/run.mjs [--quick] [--filter <substr>])
//
// For each workload (see workloads.mjs) it times tapedeck's three backends,
// from a JS object and from raw JSON bytes, computing the full hash set, and
// the pure-JS baselines (baselines.mjs) computing the same outputs, all in
// the same process. Before timing a workload it checks that the canonical
// baselines and every tapedeck row produce identical hashes. Each row's
// distance to the floor (`/floor`) is timed in rounds shared with the floor
// (bench/floor-rounds.mjs), apart from the row's own p50/p99 samples.
//
// Flags:
//   --quick            every row briefly (whole run well under 30 s)
//   --filter <substr>  only rows whose "WORKLOAD / row" label contains substr
//                      (case-insensitive); a filter that equals a workload
//                      name exactly (e.g. "L") selects just that workload.
//                      Several filters may be given, comma-separated.
//   --out <file>       results file (default bench/results/latest.json)
// Env:
//   TAPEDECK_BENCH_LIB path of the module to benchmark instead of dist/index.js

import { Bench } from 'tinybench';
import { parseArgs } from 'node:util';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { hash as nodeHash, createHash } from 'node:crypto';
import os from 'node:os';
import { buildWorkload, WORKLOAD_NAMES } from './workloads.mjs';
import { BASELINES } from './baselines.mjs';
import { makeTarget, targetLine } from './targets.mjs';
import { FLOOR_ROUNDS, floorRoundsNote, perCall, timeAgainstFloor } from './floor-rounds.mjs';
import canonicalizeRef from 'canonicalize';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

const HERE = dirname(fileURLToPath(import.meta.url));

// Each row starts on a collected heap (timeRow), so that no row pays for collecting what the row
// before it left. `npm run bench` starts node without --expose-gc: the flag is set here, and the
// function taken from a new context, where V8 defines it once the flag is on (as bench/match.mjs).
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc');

// Harness errors (e.g. a verification failure) are reported without a stack.
process.on('uncaughtException', (e) => {
  console.error(e instanceof Error && e.message.startsWith('bench:') ? `\n${e.message}` : e);
  process.exit(1);
});
const BACKENDS = ['wasm-simd', 'wasm', 'js'];

// ------------------------------------------------------------------ args ----

const { values: argv } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    filter: { type: 'string', multiple: true },
    out: { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  },
  strict: true,
});
if (argv.help) {
  console.log('usage: node bench/run.mjs [--quick] [--filter <substr>[,<substr>...]] [--out <file>]');
  process.exit(0);
}
const QUICK = argv.quick;
const FILTERS = (argv.filter ?? []).flatMap((f) => f.split(',')).map((f) => f.trim().toLowerCase()).filter(Boolean);
const OUT = argv.out ? resolve(argv.out) : resolve(HERE, 'results', 'latest.json');

// Timing budgets (per row). Full run: ~2 min total; quick: ~15-25 s total.
// tinybench keeps sampling until BOTH `time` (ms) and `iterations` are met.
const BUDGET_FULL = {
  S: { time: 700, iterations: 200, warmupTime: 200, warmupIterations: 50 },
  M: { time: 700, iterations: 100, warmupTime: 200, warmupIterations: 20 },
  'M-body': { time: 700, iterations: 100, warmupTime: 200, warmupIterations: 20 },
  L: { time: 1000, iterations: 20, warmupTime: 100, warmupIterations: 3 },
  'L-intl': { time: 1000, iterations: 20, warmupTime: 100, warmupIterations: 3 },
  XL: { time: 1500, iterations: 5, warmupTime: 0, warmupIterations: 1 },
  SMALL10K: { time: 1000, iterations: 10, warmupTime: 100, warmupIterations: 2 },
  'L-esc': { time: 1000, iterations: 20, warmupTime: 100, warmupIterations: 3 },
  'SMALL10K-path': { time: 1000, iterations: 10, warmupTime: 100, warmupIterations: 2 },
  'STR10K-path': { time: 1000, iterations: 10, warmupTime: 100, warmupIterations: 2 },
};
const BUDGET_QUICK = {
  S: { time: 50, iterations: 20, warmupTime: 10, warmupIterations: 5 },
  M: { time: 50, iterations: 10, warmupTime: 10, warmupIterations: 3 },
  'M-body': { time: 50, iterations: 10, warmupTime: 10, warmupIterations: 3 },
  L: { time: 50, iterations: 3, warmupTime: 0, warmupIterations: 1 },
  'L-intl': { time: 50, iterations: 3, warmupTime: 0, warmupIterations: 1 },
  XL: { time: 0, iterations: 3, warmup: false }, // verification already ran each row once
  SMALL10K: { time: 50, iterations: 3, warmupTime: 0, warmupIterations: 1 },
  'L-esc': { time: 50, iterations: 3, warmupTime: 0, warmupIterations: 1 },
  'SMALL10K-path': { time: 50, iterations: 3, warmupTime: 0, warmupIterations: 1 },
  'STR10K-path': { time: 50, iterations: 3, warmupTime: 0, warmupIterations: 1 },
};
const BUDGET = QUICK ? BUDGET_QUICK : BUDGET_FULL;

// Each row's distance to the floor is timed apart from its tinybench samples, in rounds shared
// with the floor (bench/floor-rounds.mjs). `share` of the row's time budget goes to these rounds
// instead of to tinybench, so a run takes as long as before.
const PAIRED = { share: QUICK ? 0.5 : 0.4 };

// --------------------------------------------------------------- library ----

const libUrl = process.env.TAPEDECK_BENCH_LIB
  ? pathToFileURL(resolve(process.env.TAPEDECK_BENCH_LIB)).href
  : new URL('../dist/index.js', import.meta.url).href;
if (!existsSync(fileURLToPath(libUrl))) {
  console.error(`bench: ${fileURLToPath(libUrl)} not found; run \`npm run build\` first.`);
  process.exit(1);
}
const lib = await import(libUrl);
for (const fn of ['pathHashes', 'hashMany', 'hashValue', 'hashJSON', 'backend', 'setBackend']) {
  if (typeof lib[fn] !== 'function') throw new Error(`bench: library ${libUrl} does not export ${fn}()`);
}
const DEFAULT_BACKEND = lib.backend();

/** Which backends can be activated in this process (others are skipped). */
const available = new Map();
for (const b of BACKENDS) {
  try {
    lib.setBackend(b);
    if (lib.backend() !== b) throw new Error(`backend() reports ${lib.backend()} after setBackend('${b}')`);
    available.set(b, null);
  } catch (e) {
    available.set(b, e instanceof Error ? e.message : String(e));
  }
}
lib.setBackend(DEFAULT_BACKEND);

// V8 runs new wasm code on its baseline tier and swaps in optimized code from a background
// compile after a while (measured: ~150 ms of M-sized calls on this 2-core machine). Exercise
// every wasm backend once before any row is timed, so rows measure steady-state code rather
// than the moment the tier-up lands; the JavaScript baselines get the same from tinybench's
// per-row warmup.
{
  const sample = buildWorkload('M');
  for (const b of available.keys()) {
    if (b === 'js') continue;
    lib.setBackend(b);
    const until = performance.now() + (QUICK ? 200 : 400);
    while (performance.now() < until) {
      lib.pathHashes(sample.messagesBytes);
      lib.pathHashes(sample.messages);
      lib.hashMany(sample.messagesBytes);
    }
  }
  lib.setBackend(DEFAULT_BACKEND);
}

// ----------------------------------------------------------------- rows ----

const td = (b) => `tapedeck[${b}]`;

/**
 * Rows of one workload. Every row: label, impl ('tapedeck' | baseline name),
 * backend (tapedeck only), input ('object' | 'raw'), op, fn (the timed
 * closure; returns the computed output), canonical (baselines).
 */
function rowsFor(group, w) {
  const rows = [];
  if (group === 'M-body') {
    const body = w.body;
    const bytes = w.bodyBytes;
    for (const b of BACKENDS) {
      rows.push({ label: `${td(b)} object  hashValue(body)`, impl: 'tapedeck', backend: b, input: 'object', op: 'digest', fn: () => lib.hashValue(body) });
      rows.push({ label: `${td(b)} raw     hashJSON(bytes)`, impl: 'tapedeck', backend: b, input: 'raw', op: 'digest', fn: () => lib.hashJSON(bytes) });
    }
    for (const bl of BASELINES) {
      rows.push({ label: `${bl.name} object`, impl: bl.name, canonical: bl.canonical, input: 'object', op: 'digest', fn: () => bl.digest(body) });
      rows.push({ label: `${bl.name} raw`, impl: bl.name, canonical: bl.canonical, input: 'raw', op: 'digest', fn: () => bl.digestRaw(bytes) });
    }
    rows.push(floorRow('digest', body));
    return rows;
  }
  const msgs = w.messages;
  const bytes = w.messagesBytes;
  if (w.kind === 'many') {
    for (const b of BACKENDS) {
      rows.push({ label: `${td(b)} object  hashMany`, impl: 'tapedeck', backend: b, input: 'object', op: 'many', fn: () => lib.hashMany(msgs) });
      rows.push({ label: `${td(b)} raw     hashMany`, impl: 'tapedeck', backend: b, input: 'raw', op: 'many', fn: () => lib.hashMany(bytes) });
      rows.push({
        label: `${td(b)} object  ${msgs.length}x hashValue`, impl: 'tapedeck', backend: b, input: 'object', op: 'many', separate: true,
        fn: () => {
          const out = new Array(msgs.length);
          for (let i = 0; i < msgs.length; i++) out[i] = lib.hashValue(msgs[i]);
          return out;
        },
      });
    }
    for (const bl of BASELINES) {
      rows.push({ label: `${bl.name} object`, impl: bl.name, canonical: bl.canonical, input: 'object', op: 'many', fn: () => bl.many(msgs) });
      rows.push({ label: `${bl.name} raw`, impl: bl.name, canonical: bl.canonical, input: 'raw', op: 'many', fn: () => bl.manyRaw(bytes) });
    }
    rows.push(floorRow('many', msgs));
    return rows;
  }
  for (const b of BACKENDS) {
    rows.push({ label: `${td(b)} object  pathHashes`, impl: 'tapedeck', backend: b, input: 'object', op: 'path', fn: () => lib.pathHashes(msgs) });
    rows.push({ label: `${td(b)} raw     pathHashes`, impl: 'tapedeck', backend: b, input: 'raw', op: 'path', fn: () => lib.pathHashes(bytes) });
  }
  for (const bl of BASELINES) {
    rows.push({ label: `${bl.name} object`, impl: bl.name, canonical: bl.canonical, input: 'object', op: 'path', fn: () => bl.fullSet(msgs) });
    rows.push({ label: `${bl.name} raw`, impl: bl.name, canonical: bl.canonical, input: 'raw', op: 'path', fn: () => bl.fullSetRaw(bytes) });
  }
  rows.push(floorRow('path', msgs));
  return rows;
}

const sha256Hex = (bytes) => (typeof nodeHash === 'function' ? nodeHash('sha256', bytes, 'hex') : createHash('sha256').update(bytes).digest('hex'));

/**
 * The floor of a row: the SHA-256 digests its result needs (hex, as tapedeck returns them),
 * computed by node:crypto (SHA-NI where the CPU has it) from the exact bytes each digest covers,
 * prepared before the timing: each message's canonical JSON, each link of the path-hash chain
 * (`hex(p[i-1]) ":" hex(m[i])`) and the whole array's canonical JSON. No parsing, no
 * canonicalization, no chaining logic: only the hashing any implementation must do. Verified
 * like every row (its output equals the reference).
 */
function floorRow(op, value) {
  const label = 'floor: node:crypto SHA-256 of prepared bytes';
  // Built on first use: the probe in the main loop calls rowsFor with empty inputs.
  let prepared;
  const prepare = () => {
    if (prepared) return prepared;
    if (op === 'digest') prepared = { whole: encoder.encode(canonicalizeRef(value)) };
    else {
      const each = value.map((m) => encoder.encode(canonicalizeRef(m)));
      const hashes = each.map(sha256Hex);
      // The chain's inputs depend on the previous path hash: computed once here, like the rest.
      const links = [];
      let path = hashes[0];
      for (let i = 1; i < hashes.length; i++) {
        links.push(encoder.encode(`${path}:${hashes[i]}`));
        path = sha256Hex(links[i - 1]);
      }
      prepared = { each, links, whole: op === 'path' ? encoder.encode(canonicalizeRef(value)) : undefined };
    }
    return prepared;
  };
  const fn = () => {
    const p = prepare();
    if (op === 'digest') return sha256Hex(p.whole);
    const messageHashes = new Array(p.each.length);
    for (let i = 0; i < p.each.length; i++) messageHashes[i] = sha256Hex(p.each[i]);
    if (op === 'many') return messageHashes;
    const pathHashes = new Array(p.each.length);
    if (p.each.length > 0) pathHashes[0] = messageHashes[0];
    for (let i = 0; i < p.links.length; i++) pathHashes[i + 1] = sha256Hex(p.links[i]);
    return { messageHashes, pathHashes, digest: sha256Hex(p.whole) };
  };
  return { label, impl: 'floor', input: 'floor', op, fn };
}
const encoder = new TextEncoder();

const GROUPS = ['S', 'M', 'M-body', 'L', 'L-intl', 'L-esc', 'XL', 'SMALL10K', 'SMALL10K-path', 'STR10K-path'];

/** A filter equal to a group name selects that group; otherwise substring of "GROUP / label". */
function selected(group, row) {
  if (FILTERS.length === 0) return true;
  const full = `${group} / ${row.label}`.toLowerCase();
  return FILTERS.some((f) => (GROUPS.some((g) => g.toLowerCase() === f) ? f === group.toLowerCase() : full.includes(f)));
}

// ---------------------------------------------------------- verification ----

function sameArray(a, b) {
  if (!a || !b || a.length !== b.length) return -2;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return i;
  return -1;
}

/** Throws unless `got` equals `want` for the row's op. */
function assertSame(op, want, got, who) {
  const fail = (what) => { throw new Error(`bench: verification failed: ${who}: ${what}`); };
  if (op === 'digest') {
    if (got !== want) fail(`digest ${got} != expected ${want}`);
    return;
  }
  if (op === 'many') {
    const i = sameArray(want, got);
    if (i === -2) fail(`got ${got?.length} hashes, expected ${want.length}`);
    if (i >= 0) fail(`hash[${i}] ${got[i]} != expected ${want[i]}`);
    return;
  }
  for (const key of ['messageHashes', 'pathHashes']) {
    const i = sameArray(want[key], got?.[key]);
    if (i === -2) fail(`${key}: got ${got?.[key]?.length} entries, expected ${want[key].length}`);
    if (i >= 0) fail(`${key}[${i}] ${got[key][i]} != expected ${want[key][i]}`);
  }
  if (got.digest !== want.digest) fail(`digest ${got.digest} != expected ${want.digest}`);
}

/**
 * Compute the reference output once with the first canonical baseline and
 * check every other canonical baseline row and every tapedeck row against it.
 * Also checks the path-hash chain against its definition.
 */
function verify(group, rows, value) {
  const canonicalRows = rows.filter((r) => r.canonical);
  const ref = canonicalRows[0].fn();
  for (const r of canonicalRows.slice(1)) assertSame(r.op, ref, r.fn(), `${group} / ${r.label}`);
  if (rows[0].op === 'path') {
    const h = (s) => (typeof nodeHash === 'function' ? nodeHash('sha256', s, 'hex') : createHash('sha256').update(s).digest('hex'));
    ref.pathHashes.forEach((p, i) => {
      const want = i === 0 ? ref.messageHashes[0] : h(ref.pathHashes[i - 1] + ':' + ref.messageHashes[i]);
      if (p !== want) throw new Error(`bench: reference chain broken at ${i}`);
    });
    // whole digest independently: the reference canonicalizer on the whole array
    if (h(canonicalizeRef(value)) !== ref.digest) throw new Error(`bench: ${group}: whole-array digest mismatch`);
  }
  for (const r of rows.filter((x) => x.impl === 'tapedeck' && available.get(x.backend) === null)) {
    lib.setBackend(r.backend);
    assertSame(r.op, ref, r.fn(), `${group} / ${r.label}`);
  }
  // The floor computes the same digests (and prepares its bytes here, outside the timing).
  for (const r of rows.filter((x) => x.impl === 'floor')) assertSame(r.op, ref, r.fn(), `${group} / ${r.label}`);
  lib.setBackend(DEFAULT_BACKEND);
}

// --------------------------------------------------------------- timing ----

/** Linear-interpolated percentile of an ascending-sorted array. */
function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  if (sorted.length === 1) return sorted[0];
  const idx = (sorted.length - 1) * p;
  const lo = Math.floor(idx);
  const hi = Math.ceil(idx);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (idx - lo);
}

let sink; // keeps results observable

async function timeRow(group, row) {
  if (row.impl === 'tapedeck') lib.setBackend(row.backend);
  gc();
  const budget = BUDGET[group];
  const bench = new Bench({ ...budget, time: budget.time * (1 - PAIRED.share), retainSamples: true, throws: true });
  const fn = row.fn;
  bench.add(row.label, () => { sink = fn(); });
  const [task] = await bench.run();
  if (row.impl === 'tapedeck') lib.setBackend(DEFAULT_BACKEND);
  const res = task.result;
  if (res.state !== 'completed') throw new Error(`bench: ${group} / ${row.label}: ${res.state} ${res.error ?? ''}`);
  const lat = res.latency;
  const samples = lat.samples ? Array.from(lat.samples).sort((a, b) => a - b) : null;
  return {
    p50: samples ? percentile(samples, 0.5) : lat.p50,
    p99: samples ? percentile(samples, 0.99) : lat.p99,
    mean: lat.mean,
    min: lat.min,
    max: lat.max,
    samples: lat.samplesCount ?? samples?.length,
  };
}

/** A row's distance to the floor in rounds shared with it (bench/floor-rounds.mjs). */
function againstFloor(group, row, floor, rowMs, floorMs) {
  if (row.impl === 'tapedeck') lib.setBackend(row.backend);
  const budgetMs = BUDGET[group].time * PAIRED.share;
  const out = timeAgainstFloor(row.fn, floor.fn, { rowMs, floorMs, budgetMs, ...(QUICK ? FLOOR_ROUNDS.quick : FLOOR_ROUNDS.full) });
  if (row.impl === 'tapedeck') lib.setBackend(DEFAULT_BACKEND);
  return out;
}

// ------------------------------------------------------------ formatting ----

function fmtTime(ms) {
  if (!Number.isFinite(ms)) return 'n/a';
  if (ms < 1e-3) return `${(ms * 1e6).toFixed(0)} ns`;
  if (ms < 1) return `${(ms * 1e3).toPrecision(3)} µs`;
  if (ms < 1000) return `${ms.toPrecision(3)} ms`;
  return `${(ms / 1000).toPrecision(3)} s`;
}
function fmtRatio(r) {
  if (!Number.isFinite(r)) return 'n/a';
  return r >= 1 ? `${r.toFixed(2)}x faster` : `${(1 / r).toFixed(2)}x slower`;
}
function fmtBytes(n) {
  if (n >= 1e6) return `${(n / 1e6).toFixed(2)} MB`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)} KB`;
  return `${n} B`;
}
function table(header, lines) {
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => String(l[i]).length)));
  const right = header.map((_, i) => i > 0);
  const fmt = (cells) => cells.map((c, i) => (right[i] ? String(c).padStart(widths[i]) : String(c).padEnd(widths[i]))).join('  ');
  return [fmt(header), widths.map((w) => '-'.repeat(w)).join('  '), ...lines.map(fmt)].join('\n');
}

// ------------------------------------------------------------------ main ----

const started = performance.now();
const cpus = os.cpus();
// Node's code on 2 MB pages (`npm run bench` starts node with --use-largepages=silent), also in
// the rows' own processes: this machine's kernel reclaims file-backed pages that look idle
// (DAMON, `pageout` of pages unused for 60 s), and once it has taken some of node's code from a
// process, that process runs ~10-15% slower from then on (a proxy process: a burst of ~5,000
// page faults, then 62-64K -> 55-57K requests a second, for good), at a moment that differs from
// process to process. Remapped to anonymous large pages at start, the code is out of its reach;
// a fresh process reads the same either way (docs/benchmarks.md, "Node's code on large pages").
const LARGE_PAGES = process.execArgv.filter((a) => a.startsWith('--use-largepages'));

/** Runs a rows script (`import.mjs`, `proxy.mjs`) in a process of its own and returns its JSON result. */
function rowsProcess(script, what) {
  const child = spawnSync(process.execPath, [...LARGE_PAGES, fileURLToPath(new URL(script, import.meta.url)), '--json', ...(QUICK ? ['--quick'] : [])], { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8', maxBuffer: 1 << 24 });
  if (child.status !== 0) throw new Error(`bench: the ${what} rows failed (exit ${child.status ?? child.signal})`);
  return JSON.parse(child.stdout.trim().split('\n').pop());
}

const meta = {
  date: new Date().toISOString(),
  node: process.version,
  execArgv: process.execArgv,
  v8: process.versions.v8,
  platform: `${process.platform}-${process.arch}`,
  cpu: cpus[0]?.model?.trim() ?? 'unknown',
  cpuCount: cpus.length,
  mode: QUICK ? 'quick' : 'full',
  filter: FILTERS,
  library: fileURLToPath(libUrl),
  defaultBackend: DEFAULT_BACKEND,
  backends: Object.fromEntries([...available].map(([b, err]) => [b, err === null ? 'ok' : `unavailable: ${err}`])),
  mbDefinition: '1 MB = 1e6 bytes of input JSON (UTF-8)',
  ratioDefinition: 'best canonical baseline p50 (same workload, same input form: object or raw) / row p50',
  floorRatioDefinition: 'median over rounds of (row CPU time per call / floor CPU time per call), the row and the floor timed in the same rounds, one batch of each, order alternated (floorPaired: the rounds, each side\'s median CPU time per call in them, the median wall-time ratio)',
};

console.log(`tapedeck bench (${meta.mode})  node ${meta.node}  ${meta.cpu} x${meta.cpuCount}  default backend: ${DEFAULT_BACKEND}`);
for (const [b, err] of available) if (err !== null) console.log(`  note: backend ${b} unavailable, its rows are skipped (${err})`);
console.log('ratio = best canonical baseline p50 (same input form) / row p50; MB/s = input JSON bytes / p50');
console.log('/floor = the row\'s CPU time over the floor\'s, both timed in the same rounds (interleaved, order alternated): the median of the rounds\' ratios\n');

const results = [];
const workloadsMeta = {};

for (const group of GROUPS) {
  const wname = group === 'M-body' ? 'M' : group;
  // Decide selection from labels alone before building the (possibly large) workload.
  const probe = rowsFor(group, { kind: wname === 'SMALL10K' ? 'many' : 'path', messages: [], messagesBytes: new Uint8Array(0), body: {}, bodyBytes: new Uint8Array(0) });
  if (!probe.some((r) => selected(group, r))) continue;

  const w = buildWorkload(wname);
  const inputBytes = group === 'M-body' ? w.bodyBytes : w.messagesBytes;
  const fingerprint = nodeHash ? nodeHash('sha256', inputBytes, 'hex') : createHash('sha256').update(inputBytes).digest('hex');
  const count = group === 'M-body' ? 1 : w.messages.length;
  workloadsMeta[group] = { messages: count, bytes: inputBytes.length, sha256: fingerprint };

  const rows = rowsFor(group, w);
  verify(group, rows, group === 'M-body' ? w.body : w.messages);

  const timed = [];
  const floorRow = rows.find((r) => r.impl === 'floor');
  // One call of the floor, warm (verify ran it once), to size its batches in the paired rounds.
  const floorEstimate = perCall(floorRow.fn, QUICK ? 2 : 10);
  for (const row of rows) {
    // The floor is timed whenever its group is: every row's distance to it is printed.
    if (!selected(group, row) && row.impl !== 'floor') continue;
    if (row.impl === 'tapedeck' && available.get(row.backend) !== null) continue;
    const stats = await timeRow(group, row);
    // Right after the row's own samples, while its code is warm: its rounds against the floor.
    const paired = row.impl === 'floor' ? null : againstFloor(group, row, floorRow, stats.p50, floorEstimate);
    timed.push({ row, stats, paired });
  }

  // Ratios against the best canonical baseline of the same input form.
  const best = {};
  for (const { row, stats } of timed) {
    if (!row.canonical) continue;
    if (!best[row.input] || stats.p50 < best[row.input].p50) best[row.input] = { name: row.impl, p50: stats.p50 };
  }
  const floor = timed.find((t) => t.row.impl === 'floor')?.stats.p50;
  const lines = [];
  for (const { row, stats, paired } of timed) {
    const b = best[row.input];
    const ratio = b ? b.p50 / stats.p50 : NaN;
    const toFloor = row.impl === 'floor' ? 1 : paired.ratio;
    const mbps = inputBytes.length / 1e6 / (stats.p50 / 1000);
    const rec = {
      workload: group,
      name: row.label.replace(/\s+/g, ' '),
      impl: row.impl,
      backend: row.backend ?? null,
      input: row.input,
      op: row.separate ? 'separate-hashValue' : row.op,
      p50Ms: stats.p50,
      p99Ms: stats.p99,
      meanMs: stats.mean,
      minMs: stats.min,
      maxMs: stats.max,
      samples: stats.samples,
      inputBytes: inputBytes.length,
      mbPerSec: mbps,
      ratio: Number.isFinite(ratio) ? ratio : null,
      baseline: b ? b.name : null,
      floorRatio: Number.isFinite(toFloor) ? toFloor : null,
      floorP50Ms: floor ?? null,
      // The rounds the floor ratio comes from: each side's median time per call in them.
      floorPaired: paired && { rounds: paired.rounds, rowCpuMs: paired.rowMs, floorCpuMs: paired.floorMs, wallRatio: paired.wallRatio },
    };
    results.push(rec);
    const isBest = b && row.canonical && row.impl === b.name;
    lines.push([row.label, fmtTime(stats.p50), fmtTime(stats.p99), stats.samples, mbps.toFixed(1), isBest ? '(best)' : row.impl === 'floor' ? '(floor)' : fmtRatio(ratio), b ? b.name : '-', row.impl === 'floor' ? '1.00x' : Number.isFinite(toFloor) ? `${toFloor.toFixed(2)}x` : '-']);
  }
  const opDesc = group === 'M-body' ? 'digest of the full request body'
    : w.kind === 'many' ? 'digest of each element (hashMany)'
      : 'full hash set: message + path hashes + whole digest';
  console.log(`== ${group}: ${group === 'M-body' ? 'request body' : WORKLOAD_NAMES.includes(group) ? w.description : ''} | ${count} msg, ${fmtBytes(inputBytes.length)} | ${opDesc} | input sha256 ${fingerprint.slice(0, 12)}`);
  console.log(table(['row', 'p50', 'p99', 'n', 'MB/s', 'ratio', 'vs', '/floor'], lines));
  console.log('');
}

// ---------------------------------------------------------------- targets ----

function find(workload, pred) {
  return results.find((r) => r.workload === workload && r.impl === 'tapedeck' && r.backend === DEFAULT_BACKEND && pred(r));
}
const targets = [];
/** Prints and records one target line (see targets.mjs). */
function report(t) {
  targets.push({ ...t, backend: t.backend === undefined ? DEFAULT_BACKEND : t.backend });
  console.log(`  ${targetLine(t)}`);
}
/** The baseline a core row was compared with, with its p50, for the target line. */
function baselineOf(rec) {
  if (!rec?.baseline) return null;
  const b = results.find((x) => x.workload === rec.workload && x.impl === rec.baseline && x.input === rec.input);
  return b ? `${rec.baseline} ${fmtTime(b.p50Ms)}` : rec.baseline;
}
/** A speed target of a core row: best baseline p50 / row p50 >= goal. */
function ratioTarget(what, rec, goal) {
  report(makeTarget({ label: `${what}, speed vs the best baseline`, unit: 'x', value: rec?.ratio ?? null, op: '>=', goal, baseline: baselineOf(rec) ?? 'best canonical baseline, same input form' }));
}
console.log(`== targets (tapedeck default backend: ${DEFAULT_BACKEND})`);
{
  const r = find('M', (x) => x.input === 'raw' && x.op === 'path');
  report(makeTarget({ label: 'M raw full hash set, p50', unit: 'µs', value: r ? r.p50Ms * 1000 : null, op: '<=', goal: 100, baseline: baselineOf(r) ?? 'best canonical baseline, raw bytes' }));
}
for (const [group, input, goal] of [
  ['L', 'raw', 3],
  ['L', 'object', 2],
  ['L-intl', 'object', 1.5],
  ['L-intl', 'raw', 3],
  ['L-esc', 'object', 1.5],
  ['L-esc', 'raw', 3],
  ['SMALL10K-path', 'object', 1.8],
  ['SMALL10K-path', 'raw', 3],
]) {
  ratioTarget(`${group} ${input} full hash set`, find(group, (x) => x.input === input && x.op === 'path'), goal);
}
for (const [what, pred] of [
  ['SMALL10K object hashMany', (x) => x.input === 'object' && x.op === 'many'],
  ['SMALL10K raw hashMany', (x) => x.input === 'raw' && x.op === 'many'],
  ['SMALL10K object 10000x hashValue', (x) => x.op === 'separate-hashValue'],
]) {
  ratioTarget(what, find('SMALL10K', pred), 2);
}
// Distance to the floor (tapedeck p50 / the floor's p50 for the same digests; lower is closer):
// raw inputs and plain strings at most 1.5x, objects at most 2x.
for (const [group, input, op, goal] of [
  ['M', 'raw', 'path', 1.5],
  ['L', 'raw', 'path', 1.5],
  ['L', 'object', 'path', 2],
  ['L-intl', 'raw', 'path', 1.5],
  ['L-intl', 'object', 'path', 2],
  ['L-esc', 'raw', 'path', 1.5],
  ['L-esc', 'object', 'path', 2],
  ['XL', 'raw', 'path', 1.5],
  ['XL', 'object', 'path', 2],
  ['SMALL10K', 'raw', 'many', 1.5],
  ['SMALL10K', 'object', 'many', 2],
  ['SMALL10K-path', 'raw', 'path', 1.5],
  ['SMALL10K-path', 'object', 'path', 2],
  ['STR10K-path', 'raw', 'path', 1.5],
  ['STR10K-path', 'object', 'path', 1.5],
]) {
  const rec = find(group, (x) => x.input === input && x.op === op);
  const label = `${group} ${input} ${op === 'many' ? 'hashMany' : 'full hash set'}, time / the floor's (lower is closer)`;
  const p = rec?.floorPaired;
  const paired = p ? { rounds: p.rounds, floorMs: p.floorCpuMs, rowMs: p.rowCpuMs } : null;
  const baseline = paired ? floorRoundsNote(paired, fmtTime) : 'the floor, timed in the same rounds as the row';
  report(makeTarget({ label, unit: 'x', value: rec?.floorRatio ?? null, op: '<=', goal, baseline, paired }));
}

// ---------------------------------------------------------------- matcher ----
// Matcher rows: index lookup among 1,000,000 recordings, memory per recording, and matching
// end to end from the raw M request body (bench/match.mjs).
let match = null;
if (!FILTERS.length || FILTERS.includes('match')) {
  const { matchBench } = await import('./match.mjs');
  lib.setBackend(DEFAULT_BACKEND);
  match = await matchBench(lib, { quick: QUICK });
  console.log(`\n== MATCH: matcher (backend ${DEFAULT_BACKEND})`);
  console.log(
    table(
      ['row', 'p50', 'p99', 'n', 'ratio', 'vs'],
      match.rows.map((r) => [r.label, fmtTime(r.p50), fmtTime(r.p99), r.samples, r.label === r.baseline ? '(baseline)' : fmtRatio(r.ratio), r.baseline]),
    ),
  );
  for (const t of match.targets) report(t);
}

// ------------------------------------------------------------------- tape ----
// Tape rows: append throughput, open time and memory for a large tape, replay lookup, size.
let tape = null;
if (!FILTERS.length || FILTERS.includes('tape')) {
  const { tapeBench } = await import('./tape.mjs');
  // The frame-level writers (appendRecords, createTape) are internals, not in the public entry.
  const store = { ...(await import(new URL('../dist/store/index.js', import.meta.url).href)), ...(await import(new URL('../dist/store/tape-file.js', import.meta.url).href)) };
  lib.setBackend(DEFAULT_BACKEND);
  tape = await tapeBench(store, lib, { quick: QUICK });
  console.log(`\n== TAPE: tape store (backend ${DEFAULT_BACKEND})`);
  console.log(
    table(
      ['row', 'value', 'ratio', 'vs'],
      tape.rows.map((r) => [
        r.label,
        r.perSecond !== undefined ? `${r.perSecond.toFixed(0)}/s` : r.ms !== undefined ? `${r.ms.toFixed(1)} ms` : `${r.us.toFixed(1)} µs`,
        r.ratio === null ? '' : r.label === r.baseline ? '(baseline)' : `${r.ratio.toFixed(2)}x`,
        r.baseline ?? '',
      ]),
    ),
  );
  for (const t of tape.targets) report(t);
}

// ------------------------------------------------------------- cold start ----
// Cold-start rows: the first replayed answer of createFetch and the proxy on a 100,000-record
// tape, each in a fresh process, against ReplayCache.open of the same tape (bench/cold-start.mjs).
let cold = null;
if (!FILTERS.length || FILTERS.includes('cold')) {
  const { coldStartBench, formatRow } = await import('./cold-start.mjs');
  cold = await coldStartBench({ quick: QUICK });
  console.log(`\n== COLD START: first replayed answer from a large tape (fresh processes, medians of ${cold.startRounds ?? cold.rounds} rounds for the starts and ${cold.rounds} for the misses and commands, interleaved)`);
  console.log(table(['row', 'time', 'memory', 'ratio', 'vs'], cold.rows.map(formatRow)));
  for (const t of cold.targets) report(t);
}

// ------------------------------------------------------------------- tree ----
// Tree rows: findOrCreate on a 10,000-message conversation, ReplayStore with 1,000,000 entries.
let tree = null;
if (!FILTERS.length || FILTERS.includes('tree')) {
  const { treeBench, formatRow } = await import('./tree.mjs');
  lib.setBackend(DEFAULT_BACKEND);
  tree = await treeBench(lib, null, { quick: QUICK });
  console.log(`\n== TREE: conversation tree and replay store (backend ${DEFAULT_BACKEND}; ratio = time / baseline time)`);
  console.log(table(['row', 'value', 'ratio', 'vs'], tree.rows.map(formatRow)));
  for (const t of tree.targets) report(t);
}

// ------------------------------------------------------------------ drift ----
// Drift rows: tapedeck diff of two 10,000-recording tapes against reading them alone.
let drift = null;
if (!FILTERS.length || FILTERS.includes('drift')) {
  const { driftBench } = await import('./drift.mjs');
  const store = { ...(await import(new URL('../dist/store/index.js', import.meta.url).href)), ...(await import(new URL('../dist/store/tape-file.js', import.meta.url).href)) };
  // The drift modules are internals of the CLI, not in a public entry.
  const modules = { ...(await import(new URL('../dist/drift/load.js', import.meta.url).href)), ...(await import(new URL('../dist/drift/report.js', import.meta.url).href)) };
  lib.setBackend(DEFAULT_BACKEND);
  drift = await driftBench(store, lib, modules, { quick: QUICK });
  console.log(`\n== DRIFT: tapedeck diff (backend ${DEFAULT_BACKEND}; ratio = time / baseline time)`);
  console.log(table(['row', 'value', 'ratio', 'vs'], drift.rows.map((r) => [r.label, `${r.ms.toFixed(1)} ms`, r.label === r.baseline ? '(baseline)' : `${r.ratio.toFixed(2)}x`, r.baseline])));
  for (const t of drift.targets) report(t);
}

// ----------------------------------------------------------------- import ----
// Import rows: tapedeck import of a 10,000-entry HAR against read + JSON.parse of the same file.
let importRows = null;
if (!FILTERS.length || FILTERS.includes('import')) {
  // In a process of its own, as `tapedeck import` runs: the heap the rows above leave behind
  // (the L and SMALL10K workloads, the tapes of the store rows) would make every collection
  // during the import and its baseline copy and mark more than a user's import ever pays.
  // The baseline (read + JSON.parse of the same file) runs in that process too, alternating.
  importRows = rowsProcess('./import.mjs', 'import');
  console.log(`\n== IMPORT: tapedeck import of a HAR (backend ${DEFAULT_BACKEND}, in a process of its own; medians; ratio = baseline time / import time)`);
  console.log(table(['row', 'value', 'ratio', 'vs'], importRows.rows.map((r) => [r.label, `${r.ms.toFixed(1)} ms`, r.label === r.baseline ? '(baseline)' : `${r.ratio.toFixed(2)}x`, r.baseline])));
  for (const t of importRows.targets) report(t);
  console.log(`  (load average at the end: ${os.loadavg().map((l) => l.toFixed(1)).join(' ')} on ${os.cpus().length} cores; rows share the machine)`);
}

// ------------------------------------------------------------------ proxy ----
// Proxy rows: replay throughput and added latency over a loopback baseline, vs talkback.
let proxy = null;
if (!FILTERS.length || FILTERS.includes('proxy')) {
  // In a process of its own: autocannon drives the servers from the main thread, and the heap
  // the rows above leave behind (the L and SMALL10K workloads and their garbage) could pause it
  // for collections in the middle of the rounds, which would not be the servers' doing.
  proxy = rowsProcess('./proxy.mjs', 'proxy');
  console.log('\n== PROXY: replay over HTTP (autocannon; each server in its own worker thread)');
  console.log(
    table(
      ['row', 'req/s', 'p50', 'p99', 'added p50', 'n'],
      proxy.rows.map((r) => [r.label, r.rps.toFixed(0), `${r.p50.toFixed(3)} ms`, `${r.p99.toFixed(3)} ms`, r.addedP50 === null ? '(baseline)' : `${r.addedP50.toFixed(3)} ms`, r.n]),
    ),
  );
  for (const t of proxy.targets) report(t);
}

// ------------------------------------------------------------------ redis ----
// Shared-store rows: four proxies on one Redis vs one proxy on a tape file; 4-writer record
// throughput. Skipped, with what to install, where redis-server is missing.
let redisRows = null;
if (!FILTERS.length || FILTERS.includes('redis')) {
  const { redisBench } = await import('./redis.mjs');
  redisRows = await redisBench({ quick: QUICK });
  console.log('\n== REDIS: shared store (proxies in worker threads, one redis-server on loopback)');
  if (redisRows.skipped) console.log(`  skipped: ${redisRows.skipped}`);
  else {
    console.log(
      table(
        ['row', 'req/s', 'p50', 'p99', 'added p50', 'n'],
        redisRows.rows.map((r) => [r.label, r.rps.toFixed(0), `${r.p50.toFixed(3)} ms`, `${r.p99.toFixed(3)} ms`, r.addedP50 === null ? '(baseline)' : `${r.addedP50.toFixed(3)} ms`, r.n]),
      ),
    );
    console.log(table(['row', 'records/s', 'vs tape file', 'n'], redisRows.recordRows.map((r) => [r.label, r.perSec.toFixed(0), r.ratio === null ? '(baseline)' : `${r.ratio.toFixed(2)}x`, r.n])));
    for (const t of redisRows.targets) {
      report(t);
      if (t.detail) console.log(`    ${t.detail}`);
    }
    console.log(`  (load average at the end: ${os.loadavg().map((l) => l.toFixed(1)).join(' ')} on ${os.cpus().length} cores; rows share the machine)`);
  }
}

// -------------------------------------------------------------------- mcp ----
// MCP rows: replayed tools/call over stdio, Streamable HTTP and in process against the real
// server-everything in the same run; the key of a JSON-RPC call.
let mcpRows = null;
if (!FILTERS.length || FILTERS.includes('mcp')) {
  const { mcpBench, formatRow } = await import('./mcp.mjs');
  lib.setBackend(DEFAULT_BACKEND);
  mcpRows = await mcpBench({ quick: QUICK });
  console.log(`\n== MCP: record/replay of an MCP server (server-everything, the SDK Client; medians; backend ${DEFAULT_BACKEND})`);
  console.log(table(['row', 'value', 'ratio', 'vs'], mcpRows.rows.map(formatRow)));
  for (const t of mcpRows.targets) {
    targets.push({ label: t.label, backend: DEFAULT_BACKEND, row: null, value: t.value, pass: t.pass, unit: t.unit });
    console.log(`  ${t.label.padEnd(60)} ${`${t.value.toFixed(2)}x`.padStart(14)}  ${t.pass ? 'PASS' : 'MISS'}`);
  }
}

// --------------------------------------------------------------- realtime ----
// Realtime rows: a recorded OpenAI Realtime session replayed through tapedeck serve against a
// bare ws server answering with the same frames, at 1 and 50 concurrent sessions.
let realtimeRows = null;
if (!FILTERS.length || FILTERS.includes('realtime')) {
  const { realtimeBench, formatRow } = await import('./realtime.mjs');
  lib.setBackend(DEFAULT_BACKEND);
  realtimeRows = await realtimeBench({ quick: QUICK });
  console.log(`\n== REALTIME: replayed WebSocket sessions vs a bare ws server of the same frames (${realtimeRows.steps} client events, ${realtimeRows.framesPerSession} server frames per session; medians of alternating rounds; backend ${DEFAULT_BACKEND})`);
  console.log(table(['row', 'value', 'vs baseline', 'baseline'], realtimeRows.rows.map(formatRow)));
  for (const t of realtimeRows.targets) report({ ...makeTarget(t), backend: DEFAULT_BACKEND });
  console.log(`  (load average at the end: ${os.loadavg().map((l) => l.toFixed(1)).join(' ')} on ${os.cpus().length} cores; rows share the machine)`);
}

// ------------------------------------------------------------------- size ----
// Size rows: the browser entry as a page downloads it (minified, gzipped), vs the main entry.
let size = null;
if (!FILTERS.length || FILTERS.includes('size')) {
  const { sizeBench } = await import('./size.mjs');
  size = await sizeBench();
  console.log('\n== SIZE: bundles (esbuild --minify, gzip -9; WebAssembly embedded as text: base64, hex in browser bundles)');
  const kb = (n) => `${(n / 1024).toFixed(1)} KB`;
  console.log(
    table(
      ['row', 'minified', 'gzipped', 'wasm (as text, minified)', 'ratio (gzipped)', 'vs'],
      size.rows.map((r) => [r.label, kb(r.minified), kb(r.gzip), kb(r.wasmBase64), r.label === r.baseline ? '(baseline)' : `${r.ratio.toFixed(2)}x`, r.baseline]),
    ),
  );
  for (const t of size.targets) report({ ...t, backend: null });
}

const elapsed = (performance.now() - started) / 1000;
meta.elapsedSeconds = Math.round(elapsed * 10) / 10;
mkdirSync(dirname(OUT), { recursive: true });
writeFileSync(OUT, JSON.stringify({ ...meta, workloads: workloadsMeta, rows: results, targets, match: match && { rows: match.rows.map(({ sink: _s, ...r }) => r), bytesPerRecording: match.bytesPerRecording }, tape: tape && { rows: tape.rows }, cold: cold && { rows: cold.rows }, tree: tree && { rows: tree.rows }, drift: drift && { rows: drift.rows }, import: importRows && { rows: importRows.rows }, proxy: proxy && { rows: proxy.rows }, redis: redisRows && { rows: redisRows.rows, recordRows: redisRows.recordRows, skipped: redisRows.skipped }, mcp: mcpRows && { rows: mcpRows.rows }, realtime: realtimeRows && { rows: realtimeRows.rows }, size: size && { rows: size.rows } }, null, 2) + '\n');
console.log(`\ndone in ${elapsed.toFixed(1)} s; results written to ${OUT}`);
// One run cannot tell a slow row from a busy machine; several runs' files can (bench/spread.mjs).
if (!QUICK && FILTERS.length === 0) console.log('the spread of several full runs (each with its own --out file): npm run bench:spread -- <file> <file> <file>');
void sink;
