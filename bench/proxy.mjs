// Proxy benchmark rows: replay throughput and the latency the proxy adds over a
// loopback baseline server, at 1, 16 and 64 connections, for tapedeck and for talkback (the
// established Node record/replay proxy) serving the same recordings, in the same run.
//
// - The tape is recorded for real: a fake OpenAI upstream, tapedeck in record mode.
// - baseline: a plain node:http server that reads the body and answers the recorded bytes for it
//   (a Map lookup by body) with the header lines tapedeck sends, i.e. the floor for any HTTP
//   server putting the same response on the wire on this machine.
// - talkback: the same recordings written as talkback tapes (JSON5), record DISABLED.
// - chaos: tapedeck with faults on demand configured but never firing (`--chaos 429:0`): what
//   chaos costs a request it leaves alone.
// Each server runs in a worker thread, so it has a core while autocannon drives it from the main
// thread. Before the timed rounds every server goes through two full collections and warms up
// again (settle()), so that none crosses its first one during the rounds. Latency is measured
// per response from autocannon's 'response' events (its own histogram has 1 ms resolution, too
// coarse for a 1 ms target).
//
// Run by bench/run.mjs (--filter proxy), or alone: node bench/proxy.mjs [--quick].
import { makeTarget, targetLine } from './targets.mjs';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';

const HERE = fileURLToPath(new URL('.', import.meta.url));
const PROXY_LIB = new URL('../dist/proxy/index.js', import.meta.url).href;
const STORE_LIB = new URL('../dist/store/index.js', import.meta.url).href;

const SYSTEM = 'You are a support assistant for an online bookshop. Answer in at most three sentences. ' + 'Be precise about order numbers and dates. '.repeat(8);

/** A realistic chat request of ~2 KB: system prompt, a few turns, temperature 0. */
function requestBody(i) {
  return JSON.stringify({
    model: 'gpt-4o-mini',
    temperature: 0,
    messages: [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: `Where is my order #${10_000 + i}? I ordered it last Tuesday.` },
      { role: 'assistant', content: `Order #${10_000 + i} shipped on Wednesday and should arrive within three working days.` },
      { role: 'user', content: `Can I still change the delivery address for order #${10_000 + i}? Question ${i}.` },
    ],
  });
}

function answerBody(i) {
  return JSON.stringify({
    id: `chatcmpl-bench${i}`,
    object: 'chat.completion',
    created: 1767225600,
    model: 'gpt-4o-mini-2024-07-18',
    choices: [{ index: 0, message: { role: 'assistant', content: `Yes: order #${10_000 + i} has not left the depot's last stop yet, so you can change the address under My orders until 18:00 today.`, refusal: null }, logprobs: null, finish_reason: 'stop' }],
    usage: { prompt_tokens: 212, completion_tokens: 31, total_tokens: 243 },
    system_fingerprint: 'fp_bench',
  });
}

const N_REQUESTS = 8;

function listen(server) {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)));
}

function readAll(req) {
  return new Promise((resolve) => {
    const parts = [];
    req.on('data', (c) => parts.push(c));
    req.on('end', () => resolve(Buffer.concat(parts)));
  });
}

// ----------------------------------------------------------------- worker side ----

async function serve({ kind, tape, store, talkbackDir, answers }) {
  if (kind === 'baseline') {
    // Each answer with the header lines the proxy sends for it (when given), so both servers
    // put the same bytes on the wire and the client parses the same response.
    const byBody = new Map(answers.map(([req, res, headers]) => {
      const out = Buffer.from(res);
      return [req, { out, headers: { ...(headers ?? { 'content-type': 'application/json' }), 'content-length': out.length } }];
    }));
    // Callbacks, no promise per request: the cheapest way node:http reads a body and answers.
    const server = createServer((req, res) => {
      const parts = [];
      req.on('data', (c) => parts.push(c));
      req.on('end', () => {
        const hit = byBody.get((parts.length === 1 ? parts[0] : Buffer.concat(parts)).toString());
        if (!hit) {
          res.writeHead(404).end();
          return;
        }
        res.writeHead(200, hit.headers);
        res.end(hit.out);
      });
    });
    server.keepAliveTimeout = 65_000;
    return listen(server);
  }
  if (kind === 'tapedeck' || kind === 'chaos') {
    const { startProxy } = await import(PROXY_LIB);
    // `store` (a Redis URL) for the shared-store rows of bench/redis.mjs, else the tape file.
    const chaos = kind === 'chaos' ? { chaos: { faults: { 429: 0 }, seed: 1 } } : {};
    const proxy = await startProxy({ ...(store ? { store } : { tape }), mode: 'replay', port: 0, ...chaos });
    return proxy.port;
  }
  if (kind === 'talkback') {
    const talkback = (await import('talkback')).default;
    const server = talkback({
      host: 'http://127.0.0.1:9',
      path: talkbackDir,
      record: talkback.Options.RecordMode.DISABLED,
      fallbackMode: talkback.Options.FallbackMode.NOT_FOUND,
      allowHeaders: [],
      silent: true,
      summary: false,
      port: 0,
    });
    const srv = await server.start();
    return (srv ?? server.server).address().port;
  }
  throw new Error(`bench: unknown server kind ${kind}`);
}

/**
 * The heap's full collector, for the settling step before the timed rounds (see settle()). The
 * flag is set at run time because a worker thread cannot take V8 flags of its own, and the
 * function only appears in contexts made after it is set.
 */
function fullCollector() {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc');
  if (typeof gc !== 'function') throw new Error('bench: this node does not expose its garbage collector with --expose-gc');
  return gc;
}

if (!isMainThread && workerData?.role === 'proxy-bench-server') {
  serve(workerData).then(
    (port) => parentPort.postMessage({ port }),
    (e) => parentPort.postMessage({ error: String(e?.stack ?? e) }),
  );
  parentPort.on('message', (m) => {
    if (m !== 'collect') return;
    const gc = fullCollector();
    const t = performance.now();
    gc();
    gc();
    parentPort.postMessage({ collected: performance.now() - t });
  });
}

// ------------------------------------------------------------------- main side ----

export function startWorker(data) {
  const worker = new Worker(fileURLToPath(import.meta.url), { workerData: { role: 'proxy-bench-server', ...data } });
  return new Promise((resolve, reject) => {
    worker.once('message', (m) => (m.error ? reject(new Error(`bench: ${data.kind} server failed: ${m.error}`)) : resolve({ worker, port: m.port })));
    worker.once('error', reject);
  });
}

/**
 * Runs two full collections in a server's thread and waits for them (milliseconds they took).
 * A full collection deoptimizes much of the node:http code a server optimized while serving (V8
 * drops optimized code whose embedded objects died: 60-80 functions in a bare server), and the
 * server just collected serves slower. Left alone, the servers have their first ones at different
 * moments (the bare server's 14-27 s after it started, the proxy's ~105 s, in runs here). Settled
 * servers are compared past that moment, instead of one server's rounds straddling it and the
 * other's not.
 */
export function settle({ worker }) {
  return new Promise((resolve, reject) => {
    const done = () => {
      worker.off('message', onMessage);
      worker.off('error', onError);
    };
    const onMessage = (m) => {
      if (m?.collected === undefined) return;
      done();
      resolve(m.collected);
    };
    const onError = (e) => {
      done();
      reject(e);
    };
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.postMessage('collect');
  });
}

/** The median of a list of numbers (the mean of the middle two for an even count). */
export function median(values) {
  const v = [...values].sort((a, b) => a - b);
  return v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
}

export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length - 1) * p + 0.5))];
}

/**
 * Drives one server, or several at once (`port` an array: the connections are split evenly, one
 * autocannon per server, started together), and returns the requests per second over all of
 * them and the latency percentiles over every response.
 */
export async function load(autocannon, port, connections, duration, bodies) {
  const ports = Array.isArray(port) ? port : [port];
  const latencies = [];
  let non2xx = 0;
  let errors = 0;
  let started = Infinity;
  let last = 0;
  await Promise.all(
    ports.map(
      (p, i) =>
        new Promise((resolve, reject) => {
          const share = Math.floor(connections / ports.length) + (i < connections % ports.length ? 1 : 0);
          const instance = autocannon(
            {
              url: `http://127.0.0.1:${p}`,
              connections: share,
              duration,
              // Checks for the end every 100 ms instead of every second, so short runs stay short.
              sampleInt: 100,
              requests: bodies.map((body) => ({ method: 'POST', path: '/v1/chat/completions', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-bench' }, body })),
            },
            (err, res) => (err ? reject(err) : ((errors += res.errors), resolve(res))),
          );
          instance.on('start', () => (started = Math.min(started, performance.now())));
          instance.on('response', (_client, status, _bytes, ms) => {
            last = performance.now();
            if (status >= 200 && status < 300) latencies.push(ms);
            else non2xx++;
          });
        }),
    ),
  );
  latencies.sort((a, b) => a - b);
  if (non2xx > 0 || errors > 0) throw new Error(`bench: ${non2xx} non-2xx answers and ${errors} errors on port(s) ${ports.join(', ')}`);
  return { rps: (latencies.length / (last - started)) * 1000, p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99), n: latencies.length };
}

/** Records the tape for real: fake upstream, tapedeck in record mode. */
export async function recordTape(dir) {
  const { startProxy } = await import(PROXY_LIB);
  const byBody = new Map(Array.from({ length: N_REQUESTS }, (_, i) => [requestBody(i), answerBody(i)]));
  const upstream = createServer(async (req, res) => {
    const out = byBody.get((await readAll(req)).toString());
    res.writeHead(out ? 200 : 404, { 'content-type': 'application/json' });
    res.end(out ?? '{}');
  });
  const port = await listen(upstream);
  const tape = join(dir, 'bench.tape');
  const proxy = await startProxy({ upstream: `http://127.0.0.1:${port}`, tape, mode: 'record', port: 0 });
  for (const body of byBody.keys()) {
    const r = await fetch(`${proxy.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-bench' }, body });
    await r.arrayBuffer();
  }
  await proxy.close();
  await new Promise((r) => upstream.close(r));
  return tape;
}

/** The same recordings as talkback tapes: one JSON5 file each (JSON is JSON5). */
export async function writeTalkbackTapes(tape, dir) {
  const { readTape } = await import(STORE_LIB);
  const out = join(dir, 'talkback');
  mkdirSync(out, { recursive: true });
  const answers = [];
  const records = (await readTape(tape)).records.map((r) => r.value).filter((v) => v?.kind === 'http');
  records.forEach((rec, i) => {
    const reqBody = JSON.stringify(rec.request.body);
    const resBody = Buffer.from(rec.response.body).toString('utf8');
    answers.push([reqBody, resBody]);
    const t = {
      meta: { createdAt: rec.recordedAt, host: 'http://127.0.0.1:9', reqHumanReadable: true, resHumanReadable: true },
      req: { url: rec.request.url, method: rec.request.method, headers: { 'content-type': 'application/json' }, body: rec.request.body },
      res: { status: rec.response.status, headers: { 'content-type': ['application/json'] }, body: JSON.parse(resBody) },
    };
    writeFileSync(join(out, `rec-${i}.json5`), JSON.stringify(t, null, 2));
  });
  return { talkbackDir: out, answers, bodies: answers.map(([req]) => req) };
}

/** Header lines of the response Node writes itself, whatever the handler does. */
const CONNECTION_HEADERS = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length']);

/**
 * Adds to each answer (`[request, response]`) the headers the tapedeck proxy on `port` sends with
 * it, so the baseline server can send the same response bytes.
 */
export async function withProxyHeaders(port, answers) {
  for (const a of answers) {
    const r = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: a[0] });
    await r.arrayBuffer();
    a[2] = Object.fromEntries([...r.headers].filter(([k]) => !CONNECTION_HEADERS.has(k)));
  }
}

/**
 * Runs the proxy rows. Returns `{ rows, targets }`: per server and connection count, requests per
 * second and p50/p99 latency; for tapedeck and talkback also the p50 added over the baseline.
 */
export async function proxyBench({ quick = false } = {}) {
  const autocannon = (await import('autocannon')).default;
  const dir = mkdtempSync(join(tmpdir(), 'tapedeck-proxy-bench-'));
  // Eleven short rounds rather than three long ones: each ratio is taken within a round, where
  // the servers ran back to back, and the median over rounds is the figure. On this shared
  // machine the baseline's own rate moved by 10-15% between rounds, and a ratio of medians over
  // three rounds read anywhere from 0.87x to 1.05x on the same build.
  const duration = quick ? 0.5 : 1;
  const rounds = quick ? 1 : 11;
  const warmup = quick ? 0.3 : 1;
  const conns = [1, 16, 64];
  const rows = [];
  const targets = [];
  try {
    const tape = await recordTape(dir);
    const { talkbackDir, answers, bodies } = await writeTalkbackTapes(tape, dir);
    if (answers.length !== N_REQUESTS) throw new Error(`bench: expected ${N_REQUESTS} recordings, got ${answers.length}`);
    const results = {};
    const ratios = {};
    const kinds = ['baseline', 'tapedeck', 'chaos', 'talkback'];
    const servers = {};
    try {
      // tapedeck first: the baseline then answers with the header lines tapedeck sent.
      for (const kind of ['tapedeck', 'baseline', 'chaos', 'talkback']) {
        if (kind === 'baseline') await withProxyHeaders(servers.tapedeck.port, answers);
        servers[kind] = await startWorker({ kind, tape, talkbackDir, answers });
        const { port } = servers[kind];
        // Every server must answer every request with the recorded bytes before it is timed.
        for (const [req, res] of answers) {
          const r = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: req });
          const text = await r.text();
          if (r.status !== 200 || JSON.stringify(JSON.parse(text)) !== JSON.stringify(JSON.parse(res))) throw new Error(`bench: ${kind} answered ${r.status} ${text.slice(0, 200)}`);
        }
        await load(autocannon, port, 16, warmup, bodies);
      }
      // Every server past its first full collection, then warm again, before any round is timed.
      for (const kind of kinds) await settle(servers[kind]);
      for (const kind of kinds) await load(autocannon, servers[kind].port, 64, warmup, bodies);
      // Servers take turns, round by round, so a slow patch of the machine (a shared VM) hits
      // all three alike; each figure is the median over the rounds.
      for (const c of conns) {
        const runs = Object.fromEntries(kinds.map((k) => [k, []]));
        for (let round = 0; round < rounds; round++) {
          const order = round % 2 === 0 ? kinds : [...kinds].reverse();
          for (const kind of order) runs[kind].push(await load(autocannon, servers[kind].port, c, duration, bodies));
        }
        for (const kind of kinds) {
          const med = (f) => median(runs[kind].map(f));
          // Each round's rate kept too (results file): a median hides whether a server stepped down mid-run.
          results[`${kind}/${c}`] = { rps: med((r) => r.rps), p50: med((r) => r.p50), p99: med((r) => r.p99), n: runs[kind].reduce((n, r) => n + r.n, 0), roundsRps: runs[kind].map((r) => Math.round(r.rps)) };
        }
        // Paired within each round: tapedeck's rate over the baseline's and over talkback's.
        const paired = (over) => median(runs.tapedeck.map((r, i) => r.rps / runs[over][i].rps));
        ratios[`baseline/${c}`] = paired('baseline');
        ratios[`talkback/${c}`] = paired('talkback');
        ratios[`chaos/${c}`] = median(runs.chaos.map((r, i) => r.rps / runs.baseline[i].rps));
      }
    } finally {
      await Promise.all(Object.values(servers).map((s) => s.worker.terminate()));
    }
    for (const c of conns) {
      const base = results[`baseline/${c}`];
      for (const kind of kinds) {
        const r = results[`${kind}/${c}`];
        rows.push({
          label: `${(kind === 'chaos' ? 'tapedeck --chaos 429:0' : kind).padEnd(22)} ${String(c).padStart(2)} conn`,
          impl: kind,
          connections: c,
          rps: r.rps,
          p50: r.p50,
          p99: r.p99,
          n: r.n,
          roundsRps: r.roundsRps,
          addedP50: kind === 'baseline' ? null : r.p50 - base.p50,
        });
      }
    }
    const at = (kind, c) => rows.find((r) => r.impl === kind && r.connections === c);
    const added16 = at('tapedeck', 16).addedP50;
    targets.push(addedLatency('proxy p50 added latency at 16 connections', added16, 1, `plain node:http server, p50 ${(at('baseline', 16).p50 * 1000).toFixed(1)} µs`));
    for (const c of conns) {
      const ratio = ratios[`talkback/${c}`];
      targets.push(makeTarget({ label: `proxy req/s / talkback's req/s at ${c} connection${c === 1 ? '' : 's'}, median over rounds`, unit: 'x', value: ratio, op: '>', goal: 1, baseline: `talkback on the same tape content, ${at('talkback', c).rps.toFixed(0)} req/s` }));
    }
    for (const c of conns) {
      const share = ratios[`baseline/${c}`];
      targets.push(makeTarget({ label: `proxy req/s / bare node:http req/s at ${c} connection${c === 1 ? '' : 's'}, median over rounds`, unit: 'x', value: share, op: '>=', goal: 0.9, baseline: `plain node:http server, ${at('baseline', c).rps.toFixed(0)} req/s` }));
    }
    for (const c of conns) {
      targets.push(makeTarget({ label: `proxy with chaos configured, not firing (429:0): req/s / bare node:http req/s at ${c} connection${c === 1 ? '' : 's'}, median over rounds`, unit: 'x', value: ratios[`chaos/${c}`], op: '>=', goal: 0.9, baseline: `plain node:http server, ${at('baseline', c).rps.toFixed(0)} req/s (tapedeck without chaos: ${ratios[`baseline/${c}`].toFixed(2)}x)` }));
    }
    return { rows, targets };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (isMainThread && process.argv[1] === fileURLToPath(import.meta.url)) {
  const { rows, targets } = await proxyBench({ quick: process.argv.includes('--quick') });
  // For bench/run.mjs, which runs these rows in a process of their own.
  if (process.argv.includes('--json')) {
    console.log(JSON.stringify({ rows, targets }));
    process.exit(0);
  }
  for (const r of rows) console.log(`${r.label}  ${r.rps.toFixed(0).padStart(7)} req/s  p50 ${r.p50.toFixed(3)} ms  p99 ${r.p99.toFixed(3)} ms${r.addedP50 === null ? '' : `  added p50 ${r.addedP50.toFixed(3)} ms`}`);
  for (const t of targets) console.log(targetLine(t));

}

/**
 * An added-latency target (p50 minus the baseline server's p50, in ms; goal in ms). A difference
 * below zero is noise (the proxy cannot answer before the baseline's work is done), so it is
 * shown as 0 µs with the measured difference beside it rather than as a negative latency.
 */
export function addedLatency(label, addedMs, goalMs, baseline) {
  const us = addedMs * 1000;
  const note = us < 0 ? `(p50 ${(-us).toFixed(2)} µs below the baseline's: within run-to-run noise)` : null;
  return makeTarget({ label, unit: 'µs', value: Math.max(0, us), op: '<=', goal: goalMs * 1000, baseline, note });
}
