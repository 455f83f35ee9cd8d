// Redis store benchmark rows: a fleet of proxies on one shared Redis against one proxy on a tape
// file, in the same run, and record throughput with 4 concurrent writers.
//
// Replay rows (autocannon, each server in its own worker thread, as in bench/proxy.mjs):
// - baseline: a plain node:http server answering the recorded bytes (the floor);
// - tape x1: one `tapedeck serve` on the tape file;
// - redis x1 / redis x4: one or four proxies on one Redis namespace holding the same records
//   (pushed from the tape); for x4 the connections are split evenly over the four proxies.
// Record rows: 4 writers, each appending the bench's HTTP record one at a time and waiting for
// the acknowledgement (as a proxy does before answering), to one tape file (fsync), to Redis
// without persistence and to Redis with appendonly + appendfsync everysec.
//
// Without redis-server the rows are skipped with a note saying what to install.
// Run by bench/run.mjs (--filter redis), or alone: node bench/redis.mjs [--quick].
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { redisMissing, startRedis } from '../test/redis/harness.mjs';
import { load, recordTape, startWorker, writeTalkbackTapes } from './proxy.mjs';

const STORE_LIB = new URL('../dist/store/index.js', import.meta.url).href;

async function recordRows(store, tape, quick) {
  const { TapeBackend, RedisBackend, readTape } = await import(STORE_LIB);
  const template = (await readTape(tape)).records.map((r) => r.value).find((v) => v?.kind === 'http');
  const perWriter = quick ? 100 : 500;
  const writers = 4;
  const time = async (make) => {
    const backends = Array.from({ length: writers }, make);
    await backends[0].load({ create: true });
    const t0 = performance.now();
    await Promise.all(
      backends.map(async (b, w) => {
        for (let i = 0; i < perWriter; i++) await b.append([{ ...template, key: `w${w}-${i}`, recordedAt: new Date(1767225600000 + i).toISOString() }], { durable: true });
      }),
    );
    const ms = performance.now() - t0;
    await Promise.all(backends.map((b) => b.close()));
    const check = make();
    const n = (await check.load({ create: false })).records.length;
    await check.close();
    if (n !== writers * perWriter) throw new Error(`bench: expected ${writers * perWriter} records after the record rows, found ${n}`);
    return { perSec: (writers * perWriter * 1000) / ms, n: writers * perWriter };
  };
  const dir = mkdtempSync(join(tmpdir(), 'tapedeck-redis-record-'));
  const aof = await startRedis({ args: ['--appendonly', 'yes', '--appendfsync', 'everysec'] });
  try {
    const tapeFile = join(dir, 'writers.tape');
    const fileRow = await time(() => new TapeBackend(tapeFile));
    const plain = await time(() => new RedisBackend(store, { namespace: 'bench-record' }));
    const persisted = await time(() => new RedisBackend(aof.url, { namespace: 'bench-record' }));
    return [
      { label: 'record, 4 writers: tape file (fsync)', perSec: fileRow.perSec, n: fileRow.n, ratio: null },
      { label: 'record, 4 writers: redis (no persistence)', perSec: plain.perSec, n: plain.n, ratio: plain.perSec / fileRow.perSec },
      { label: 'record, 4 writers: redis (appendfsync everysec)', perSec: persisted.perSec, n: persisted.n, ratio: persisted.perSec / fileRow.perSec },
    ];
  } finally {
    await aof.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Runs the rows. Returns `{ rows, recordRows, targets, skipped }`; `skipped` is a one-line reason
 * (and the rows are empty) when redis-server is not installed.
 */
export async function redisBench({ quick = false } = {}) {
  const missing = redisMissing();
  if (missing) return { rows: [], recordRows: [], targets: [], skipped: missing };
  const autocannon = (await import('autocannon')).default;
  const { pushTape } = await import(STORE_LIB);
  const dir = mkdtempSync(join(tmpdir(), 'tapedeck-redis-bench-'));
  const redis = await startRedis();
  const duration = quick ? 0.5 : 2.5;
  const rounds = quick ? 1 : 2;
  const conns = [16, 64];
  const rows = [];
  const targets = [];
  const workers = [];
  try {
    const tape = await recordTape(dir);
    const { answers, bodies } = await writeTalkbackTapes(tape, dir);
    const store = `${redis.url}?namespace=bench`;
    await pushTape(tape, store);
    const spawn = async (data) => {
      const w = await startWorker(data);
      workers.push(w);
      return w.port;
    };
    const servers = {
      baseline: [await spawn({ kind: 'baseline', answers })],
      'tape x1': [await spawn({ kind: 'tapedeck', tape })],
      'redis x1': [await spawn({ kind: 'tapedeck', store })],
      'redis x4': [await spawn({ kind: 'tapedeck', store }), await spawn({ kind: 'tapedeck', store }), await spawn({ kind: 'tapedeck', store })],
    };
    // The x4 fleet is the x1 proxy plus three more on the same Redis.
    servers['redis x4'].unshift(servers['redis x1'][0]);
    // Every proxy must answer every request with the recorded bytes before it is timed.
    for (const ports of Object.values(servers)) {
      for (const port of ports) {
        for (const [req, res] of answers) {
          const r = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: req });
          const text = await r.text();
          if (r.status !== 200 || JSON.stringify(JSON.parse(text)) !== JSON.stringify(JSON.parse(res))) throw new Error(`bench: server on ${port} answered ${r.status} ${text.slice(0, 200)}`);
        }
        await load(autocannon, port, 8, quick ? 0.2 : 0.5, bodies);
      }
    }
    const kinds = Object.keys(servers);
    const results = {};
    for (const c of conns) {
      const runs = Object.fromEntries(kinds.map((k) => [k, []]));
      for (let round = 0; round < rounds; round++) {
        // Alternate the order, so a slow patch of the shared machine hits every row alike.
        for (const kind of round % 2 === 0 ? kinds : [...kinds].reverse()) runs[kind].push(await load(autocannon, servers[kind], c, duration, bodies));
      }
      for (const kind of kinds) {
        const med = (f) => {
          const v = runs[kind].map(f).sort((a, b) => a - b);
          return v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
        };
        results[`${kind}/${c}`] = { rps: med((r) => r.rps), p50: med((r) => r.p50), p99: med((r) => r.p99), n: runs[kind].reduce((n, r) => n + r.n, 0) };
      }
    }
    for (const c of conns) {
      const base = results[`baseline/${c}`];
      for (const kind of kinds) {
        const r = results[`${kind}/${c}`];
        rows.push({ label: `${kind.padEnd(8)} ${String(c).padStart(2)} conn`, impl: kind, connections: c, rps: r.rps, p50: r.p50, p99: r.p99, n: r.n, addedP50: kind === 'baseline' ? null : r.p50 - base.p50 });
      }
    }
    const at = (kind, c) => rows.find((r) => r.impl === kind && r.connections === c);
    for (const c of conns) {
      // The same number of proxies on either store: what the store itself adds to a replay.
      const same = at('redis x1', c).addedP50 - at('tape x1', c).addedP50;
      targets.push({ label: `redis x1 p50 added latency minus tape x1's at ${c} conn`, value: same, unit: 'ms', pass: null });
      const over = at('redis x4', c).addedP50 - at('tape x1', c).addedP50;
      targets.push({ label: `redis x4 p50 added latency minus tape x1's at ${c} conn <= 0.5 ms`, value: over, unit: 'ms', pass: over <= 0.5 });
      targets.push({ label: `redis x4 req/s / redis x1 req/s at ${c} conn (scaling)`, value: at('redis x4', c).rps / at('redis x1', c).rps, unit: 'ratio', pass: null });
    }
    await Promise.all(workers.map((w) => w.worker.terminate()));
    workers.length = 0;
    const recordRowsOut = await recordRows(redis.url, tape, quick);
    return { rows, recordRows: recordRowsOut, targets, skipped: null };
  } finally {
    await Promise.all(workers.map((w) => w.worker.terminate()));
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { rows, recordRows: rec, targets, skipped } = await redisBench({ quick: process.argv.includes('--quick') });
  if (skipped) console.log(`redis rows skipped: ${skipped}`);
  for (const r of rows) console.log(`${r.label}  ${r.rps.toFixed(0).padStart(7)} req/s  p50 ${r.p50.toFixed(3)} ms  p99 ${r.p99.toFixed(3)} ms${r.addedP50 === null ? '' : `  added p50 ${r.addedP50.toFixed(3)} ms`}`);
  for (const r of rec) console.log(`${r.label.padEnd(50)} ${r.perSec.toFixed(0).padStart(8)} records/s${r.ratio === null ? '  (baseline)' : `  ${r.ratio.toFixed(2)}x`}`);
  for (const t of targets) console.log(`${t.label}: ${t.value.toFixed(3)}${t.pass === null ? '' : t.pass ? ' PASS' : ' MISS'}`);
}
