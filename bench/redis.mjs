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
// What saturates: over every timed run the bench reads CPU time from /proc (the machine's busy
// time, redis-server's, each proxy thread's, and the bench process's own, whose remainder is the
// load generator) and turns it into cores busy (CPU seconds / wall seconds). The scaling row of
// four proxies says whether the cores were saturated, or Redis (single-threaded: one core), or
// neither, with the breakdown.
//
// Without redis-server the rows are skipped with a note saying what to install.
// Run by bench/run.mjs (--filter redis), or alone: node bench/redis.mjs [--quick].
import { makeTarget, targetLine } from './targets.mjs';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { redisMissing, startRedis } from '../test/redis/harness.mjs';
import { load, median, recordTape, startWorker, writeTalkbackTapes } from './proxy.mjs';

const STORE_LIB = new URL('../dist/store/index.js', import.meta.url).href;

// ---- CPU accounting from /proc (Linux); elsewhere the scaling row says it could not measure.

const HAVE_PROC = existsSync('/proc/self/task') && existsSync('/proc/stat');
const TICKS = (() => {
  const r = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
  return Number(r.stdout) > 0 ? Number(r.stdout) : 100;
})();

/** CPU seconds (user + system) of a process or thread from its stat file; 0 once it is gone. */
function cpuSeconds(statPath) {
  try {
    const text = readFileSync(statPath, 'utf8');
    // Fields after the command name (which may hold spaces) in parentheses: utime is the 14th
    // field of the line, stime the 15th.
    const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / TICKS;
  } catch {
    return 0;
  }
}

/** Busy CPU seconds of the whole machine, every core (everything but idle and iowait). */
function machineBusySeconds() {
  const [, ...v] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/);
  const n = v.slice(0, 8).map(Number); // user nice system idle iowait irq softirq steal
  return (n.reduce((a, b) => a + b, 0) - n[3] - n[4]) / TICKS;
}

const threadIds = () => (HAVE_PROC ? readdirSync('/proc/self/task') : []);

/**
 * A CPU snapshot: wall time, machine busy time, redis-server's, the bench process's, and each
 * proxy thread's (by thread id).
 */
function cpuSnapshot(redisPid, proxyTids) {
  if (!HAVE_PROC) return null;
  return {
    wall: performance.now() / 1000,
    machine: machineBusySeconds(),
    redis: cpuSeconds(`/proc/${redisPid}/stat`),
    self: cpuSeconds('/proc/self/stat'),
    proxies: proxyTids.reduce((n, tid) => n + cpuSeconds(`/proc/self/task/${tid}/stat`), 0),
  };
}

/** Adds the CPU between two snapshots into an accumulator. */
function addCpu(acc, a, b) {
  if (!a || !b) return;
  for (const k of ['wall', 'machine', 'redis', 'self', 'proxies']) acc[k] = (acc[k] ?? 0) + (b[k] - a[k]);
}

/**
 * Cores busy over the accumulated runs, and what saturated: the cores (the machine at 90% or
 * more of its cores), Redis (redis-server at 90% or more of its one core), or neither.
 */
export function saturation(acc, cores = cpus().length) {
  if (!acc || !(acc.wall > 0)) return { verdict: 'CPU not measured (no /proc here)', text: 'CPU not measured (no /proc here)' };
  const per = (k) => acc[k] / acc.wall;
  const busy = per('machine');
  const redis = per('redis');
  const proxies = per('proxies');
  const loadgen = Math.max(0, per('self') - proxies);
  const others = Math.max(0, busy - per('self') - redis);
  const verdict = busy >= 0.9 * cores ? 'cores saturated' : redis >= 0.9 ? 'Redis saturated' : 'neither saturated';
  const f = (x) => x.toFixed(2);
  const text = `${verdict}: ${f(busy)} of ${cores} cores busy; redis-server ${f(redis)} cores, proxies ${f(proxies)}, load generator ${f(loadgen)}, other processes ${f(others)}`;
  return { verdict, busy, redis, proxies, loadgen, others, cores, text };
}

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
  // Six short rounds rather than two long ones: the x4-minus-tape target is the median of each
  // round's own difference (below). Two rounds of 2.5 s on this 2-core machine read anywhere
  // from -372 to +753 µs at 64 connections over five full runs with no change to the proxy; one
  // round's difference still swings by a few hundred µs.
  const duration = quick ? 0.5 : 1;
  const rounds = quick ? 1 : 6;
  const conns = [16, 64];
  const rows = [];
  const targets = [];
  const workers = [];
  try {
    const tape = await recordTape(dir);
    const { answers, bodies } = await writeTalkbackTapes(tape, dir);
    const store = `${redis.url}?namespace=bench`;
    await pushTape(tape, store);
    // Each proxy runs in its own worker thread: the threads that appear while it starts are its.
    const tidsOfPort = new Map();
    const spawn = async (data) => {
      const before = new Set(threadIds());
      const w = await startWorker(data);
      workers.push(w);
      tidsOfPort.set(w.port, threadIds().filter((t) => !before.has(t)));
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
    const cpu = {};
    // Per connection count, each round's p50 of every kind (seconds apart, not minutes).
    const perRound = {};
    for (const c of conns) {
      const runs = Object.fromEntries(kinds.map((k) => [k, []]));
      for (let round = 0; round < rounds; round++) {
        // Alternate the order, so a slow patch of the shared machine hits every row alike.
        for (const kind of round % 2 === 0 ? kinds : [...kinds].reverse()) {
          const tids = servers[kind].flatMap((p) => tidsOfPort.get(p) ?? []);
          const before = cpuSnapshot(redis.pid, tids);
          runs[kind].push(await load(autocannon, servers[kind], c, duration, bodies));
          addCpu((cpu[`${kind}/${c}`] ??= {}), before, cpuSnapshot(redis.pid, tids));
        }
      }
      perRound[c] = runs;
      for (const kind of kinds) {
        const med = (f) => median(runs[kind].map(f));
        results[`${kind}/${c}`] = { rps: med((r) => r.rps), p50: med((r) => r.p50), p99: med((r) => r.p99), n: runs[kind].reduce((n, r) => n + r.n, 0) };
      }
    }
    for (const c of conns) {
      const base = results[`baseline/${c}`];
      for (const kind of kinds) {
        const r = results[`${kind}/${c}`];
        rows.push({ label: `${kind.padEnd(8)} ${String(c).padStart(2)} conn`, impl: kind, connections: c, rps: r.rps, p50: r.p50, p99: r.p99, n: r.n, addedP50: kind === 'baseline' ? null : r.p50 - base.p50, cpu: saturation(cpu[`${kind}/${c}`]) });
      }
    }
    const at = (kind, c) => rows.find((r) => r.impl === kind && r.connections === c);
    for (const c of conns) {
      // The same number of proxies on either store: what the store itself adds to a replay.
      const same = at('redis x1', c).addedP50 - at('tape x1', c).addedP50;
      const tapeNote = `one proxy on a tape file, added p50 ${(at('tape x1', c).addedP50 * 1000).toFixed(1)} µs`;
      targets.push(makeTarget({ label: `redis x1 p50 added latency minus tape x1's at ${c} conn`, unit: 'µs', value: same * 1000, baseline: tapeNote }));
      // Paired by round: the fleet's p50 against the tape proxy's of the same round, where the
      // machine was in the same state, and the median of those differences (the baseline's p50
      // cancels out of "added minus added").
      const diffs = perRound[c]['redis x4'].map((r, i) => r.p50 - perRound[c]['tape x1'][i].p50);
      const over = median(diffs);
      const pairedNote = `${tapeNote}; median of ${diffs.length} rounds' differences, each the fleet's p50 against the tape proxy's of the same round (${diffs.map((d) => (d * 1000).toFixed(0)).join(', ')} µs)`;
      targets.push(makeTarget({ label: `redis x4 p50 added latency minus tape x1's at ${c} conn`, unit: 'µs', value: over * 1000, op: '<=', goal: 500, baseline: pairedNote }));
      // Scaling, and what stopped it: the CPU of the four-proxy runs (and of the one-proxy runs,
      // for comparison).
      const x1 = at('redis x1', c);
      const x4 = at('redis x4', c);
      targets.push({
        ...makeTarget({ label: `redis x4 req/s / redis x1 req/s at ${c} conn (scaling)`, unit: 'x', value: x4.rps / x1.rps, baseline: `one proxy on redis, ${x1.rps.toFixed(0)} req/s` }),
        detail: `x4 scaling at ${c} conn: ${(x4.rps / x1.rps).toFixed(2)}x (${x1.rps.toFixed(0)} -> ${x4.rps.toFixed(0)} req/s) (${x4.cpu.text}); redis x1 for comparison: ${x1.cpu.text}`,
      });
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
  for (const t of targets) console.log(targetLine(t));
  for (const t of targets) if (t.detail) console.log(t.detail);
}
