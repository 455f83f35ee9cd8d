// Cold-start rows: how long after start a process answers its first replayed request from a
// large tape of proxy recordings, and how much it grows, for `createFetch` and the proxy, against
// `ReplayCache.open` of the same tape in the same run (the cost of reading and indexing the file
// alone); and `tapedeck export`, `tree`, `inspect`, `verify` and `scan` of that tape (time per
// 10,000 records, peak memory) against decoding it whole (readTape). Each measurement runs in a fresh process (a cold start is what is measured: no JIT
// warm-up, no heap left by the rows before), rounds interleaved, medians reported. The tape is
// recorded through createFetch itself (record mode, an in-process upstream), so its records are
// exactly what users' tapes hold. The first miss's diagnosis (and the misses after it) is timed
// for createFetch on that tape and for `ReplayCache` on a cache tape of the same requests
// (recordCacheTape: one real put as the template of the others).
// Run by bench/run.mjs, or alone: node bench/cold-start.mjs [--quick] [--json].
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeTarget, targetLine } from './targets.mjs';

const HERE = fileURLToPath(new URL('.', import.meta.url));
const DIST = join(HERE, '..', 'dist');
const ROUTE = 'https://api.openai.com/v1/chat/completions';

/** The n-th chat request: a system prompt and a question, as an SDK sends it. */
export function chatBody(i) {
  return { model: 'gpt-4o-mini', messages: [{ role: 'system', content: 'You are a concise assistant.' }, { role: 'user', content: `Question number ${i}: what is ${i} squared, and is it even? Ünïcödé ✓` }], temperature: 0 };
}

/**
 * A tape of n chat recordings as the proxy writes them: the first is recorded through createFetch
 * (record mode, an in-process upstream) and is the template of the others, each with its own
 * request, answer, request key and signature (computed by the package, as recording would), so
 * building 100,000 takes seconds instead of recording each.
 */
export async function recordTape(tape, n) {
  const { createFetch } = await import(join(DIST, 'proxy', 'fetch-entry.js'));
  const { requestKeys } = await import(join(DIST, 'index.js'));
  const { inRecordOrder, sortedKeys } = await import(join(DIST, 'store', 'record-order.js'));
  const answer = (i) => JSON.stringify({ id: `chatcmpl-${i}`, object: 'chat.completion', created: 1764288000, model: 'gpt-4o-mini-2024-07-18', choices: [{ index: 0, message: { role: 'assistant', content: `${i * i}, ${i % 2 ? 'odd' : 'even'}.` }, finish_reason: 'stop' }], usage: { prompt_tokens: 31, completion_tokens: 6, total_tokens: 37 } });
  const upstream = async () => new Response(answer(0), { status: 200, headers: { 'content-type': 'application/json' } });
  const f = createFetch({ tape, mode: 'record', fetch: upstream, onWarning: () => {} });
  await (await f(ROUTE, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-bench' }, body: JSON.stringify(chatBody(0)) })).arrayBuffer();
  await f.close();
  const endpoint = { method: 'POST', url: '/v1/chat/completions' };
  const enc = new TextEncoder();
  await fillFromTemplate(tape, n, (template, i) => {
    const body = chatBody(i);
    const k = requestKeys(body, { endpoint });
    const trace = k.key.split('').reverse().join(''); // distinct per recording, 64 hex
    const rec = { ...template, key: k.key, signature: k.signature, trace, recordedAt: new Date(Date.UTC(2026, 10, 22) + i * 1000).toISOString(), request: { ...template.request, body }, response: { ...template.response, body: enc.encode(answer(i)) } };
    return inRecordOrder(sortedKeys(rec));
  });
}

/**
 * Appends records 1 to n-1 to a tape whose one record is their template: make(template, i)
 * gives record i, written in batches of 2,000.
 */
async function fillFromTemplate(tape, n, make) {
  const { appendRecords, scanTape, decodeFrame } = await import(join(DIST, 'store', 'tape-file.js'));
  const scan = await scanTape(tape);
  const template = decodeFrame(scan.bytes, scan.frames[0], tape);
  let batch = [];
  for (let i = 1; i < n; i++) {
    batch.push(make(template, i));
    if (batch.length === 2000) {
      await appendRecords(tape, batch, { durable: false });
      batch = [];
    }
  }
  if (batch.length > 0) await appendRecords(tape, batch, { durable: false });
}

/**
 * A tape of n ReplayCache recordings of chatBody(i): the first put through ReplayCache itself
 * (record mode) is the template of the others, each with its own request, value, key,
 * signature and message and path hashes (computed by the package, as put does), written in
 * batches so that 100,000 take seconds.
 */
export async function recordCacheTape(tape, n) {
  const { ReplayCache } = await import(join(DIST, 'store', 'index.js'));
  const { requestKeys } = await import(join(DIST, 'index.js'));
  const { sortedKeys } = await import(join(DIST, 'store', 'record-order.js'));
  const value = (i) => ({ content: `${i * i}, ${i % 2 ? 'odd' : 'even'}.`, usage: { input: 31, output: 6 } });
  const cache = await ReplayCache.open(tape, { mode: 'record' });
  await cache.put(chatBody(0), value(0));
  await cache.close();
  const bytes = (hashes) => Buffer.from(hashes.join(''), 'hex');
  await fillFromTemplate(tape, n, (template, i) => {
    const request = chatBody(i);
    const k = requestKeys(request);
    // The template's own field order (put writes one), its fields replaced.
    return { ...template, key: k.key, recordedAt: new Date(Date.UTC(2026, 10, 22) + i * 1000).toISOString(), signature: sortedKeys(k.signature), hashes: { messages: bytes(k.messageHashes), paths: bytes(k.pathHashes) }, request: sortedKeys(request), value: value(i) };
  });
}

/**
 * ReplayCache's first miss on a large cache tape, in a fresh process: open, one recording
 * served, then a changed request (a miss, diagnosed against every recording) and three more.
 * Prints { ms, missMs, laterMissMs }: open to the first answer, the first miss's diagnosis, the
 * median of the three after it.
 */
async function cacheMissChild(tape, n) {
  const { ReplayCache } = await import('llm-tapedeck/store');
  const pick = Math.floor(n * 0.7);
  const t0 = performance.now();
  const cache = await ReplayCache.open(tape, { mode: 'replay' });
  const got = await cache.get(chatBody(pick));
  if (got?.content !== `${pick * pick}, ${pick % 2 ? 'odd' : 'even'}.`) throw new Error(`bench: the cache answered ${JSON.stringify(got)}`);
  const answeredAt = performance.now();
  const miss = async (i) => {
    const changed = chatBody(i);
    changed.messages[1].content += ' Be brief.';
    const t = performance.now();
    try {
      await cache.get(changed);
    } catch (e) {
      // The diagnosis names the recording the request came from as the closest.
      if (e?.code !== 'E_MISS' || e.details?.closest?.[0]?.index !== i) throw new Error(`bench: the cache miss was ${e?.code}, closest ${JSON.stringify(e?.details?.closest?.[0])}`);
      return performance.now() - t;
    }
    throw new Error('bench: a changed request was answered');
  };
  const missMs = await miss(pick);
  const later = [];
  for (const k of [1, 2, 3]) later.push(await miss((pick + k) % n));
  process.stdout.write(`${JSON.stringify({ ms: answeredAt - t0, missMs, laterMissMs: median(later) })}\n`);
  await cache.close();
}

/**
 * One cold start in a fresh process: `what` is 'cache' (ReplayCache.open of the tape), 'fetch'
 * (createFetch, then its first replayed answer) or 'proxy' (startProxy, then its first replayed
 * answer over HTTP). Prints { ms, rssMB, missMs, laterMissMs } as JSON: milliseconds from before
 * the open to the first answer, the resident set's growth, and for fetch the first miss's
 * diagnosis and the median of the three misses after it.
 */
async function child(what, tape, n) {
  const pick = Math.floor(n * 0.7);
  const rss0 = process.memoryUsage().rss;
  const cpu0 = process.cpuUsage();
  const cpuMs = () => {
    const c = process.cpuUsage(cpu0);
    return (c.user + c.system) / 1000;
  };
  const t0 = performance.now();
  let missMs = null;
  let close = async () => {};
  if (what === 'cache') {
    // The package's entries as a user's import resolves them (package.json exports: on Node,
    // the bundled dist/node/).
    const { ReplayCache } = await import('llm-tapedeck/store');
    const cache = await ReplayCache.open(tape, { mode: 'replay' });
    close = () => cache.close();
  } else if (what === 'fetch') {
    const { createFetch } = await import('llm-tapedeck/fetch');
    const f = createFetch({ tape, mode: 'replay', onWarning: () => {}, summary: false });
    const r = await f(ROUTE, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(chatBody(pick)) });
    const j = await r.json();
    if (j.choices?.[0]?.message?.content !== `${pick * pick}, ${pick % 2 ? 'odd' : 'even'}.`) throw new Error(`bench: cold start answered ${r.status} ${JSON.stringify(j).slice(0, 200)}`);
    const answeredAt = performance.now();
    const rssMB = (process.memoryUsage().rss - rss0) / 2 ** 20;
    const cpu = cpuMs();
    if (process.env.TAPEDECK_BENCH_NO_MISS) {
      process.stdout.write(`${JSON.stringify({ ms: answeredAt - t0, cpuMs: cpu, rssMB, missMs })}\n`);
      return;
    }
    const changed = chatBody(pick);
    changed.messages[1].content += ' Be brief.';
    const m = await f(ROUTE, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(changed) });
    await m.arrayBuffer();
    if (m.status === 200) throw new Error('bench: a changed request was answered');
    missMs = performance.now() - answeredAt;
    // The misses after it: the matcher is made, what each miss does again is what they time.
    const later = [];
    for (const k of [1, 2, 3]) {
      const other = chatBody((pick + k) % n);
      other.messages[1].content += ' Be brief.';
      const t1 = performance.now();
      const again = await f(ROUTE, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(other) });
      await again.arrayBuffer();
      if (again.status === 200) throw new Error('bench: a changed request was answered');
      later.push(performance.now() - t1);
    }
    process.stdout.write(`${JSON.stringify({ ms: answeredAt - t0, cpuMs: cpu, rssMB, missMs, laterMissMs: median(later) })}\n`);
    await f.close();
    return;
  } else {
    const { startProxy } = await import('llm-tapedeck/proxy');
    const proxy = await startProxy({ tape, mode: 'replay', port: 0, host: '127.0.0.1', onWarning: () => {} });
    // The client is node:http, the lightest one: a proxy's clients run in other processes, and
    // the first call of the global fetch (undici) alone costs ~30 ms of CPU more, which is the
    // client's start, not the proxy's.
    const { status, text } = await post(`${proxy.url}/v1/chat/completions`, JSON.stringify(chatBody(pick)));
    const j = JSON.parse(text);
    if (j.choices?.[0]?.message?.content !== `${pick * pick}, ${pick % 2 ? 'odd' : 'even'}.`) throw new Error(`bench: cold start answered ${status} ${text.slice(0, 200)}`);
    close = () => proxy.close();
  }
  process.stdout.write(`${JSON.stringify({ ms: performance.now() - t0, cpuMs: cpuMs(), rssMB: (process.memoryUsage().rss - rss0) / 2 ** 20, missMs })}\n`);
  await close();
}

/** A JSON POST over node:http: the answer's status and text. */
async function post(url, body) {
  const { request } = await import('node:http');
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      const parts = [];
      res.on('data', (c) => parts.push(c));
      res.on('end', () => resolve({ status: res.statusCode, text: Buffer.concat(parts).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Runs `tapedeck <args>` (the built CLI) in a fresh process with its output to nowhere, as git's
 * textconv runs export; returns wall ms, CPU ms and the process's peak resident set.
 */
function command(args) {
  const cli = join(DIST, 'cli.js');
  // The child reports its own resource usage on exit (stderr's last line).
  const wrapper = `process.on('exit', () => { const u = process.resourceUsage(); require('node:fs').writeSync(2, '\\n' + JSON.stringify({ cpuMs: (u.userCPUTime + u.systemCPUTime) / 1000, maxRSSMB: u.maxRSS / 1024 }) + '\\n'); }); process.argv = [process.argv[0], ${JSON.stringify(cli)}, ...${JSON.stringify(args)}]; import(${JSON.stringify(`file://${cli}`)});`;
  const t0 = performance.now();
  const c = spawnSync(process.execPath, ['-e', wrapper], { encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'], maxBuffer: 1 << 26 });
  const ms = performance.now() - t0;
  if (c.status !== 0) throw new Error(`bench: tapedeck ${args.join(' ')} failed (exit ${c.status ?? c.signal}): ${c.stderr.slice(-500)}`);
  return { ms, ...JSON.parse(c.stderr.trim().split('\n').pop()) };
}

/** Node starting and exiting with nothing to do, as command() spawns it: the floor of any command's start. */
function bareStart() {
  const t0 = performance.now();
  const c = spawnSync(process.execPath, ['-e', '0'], { stdio: ['ignore', 'ignore', 'pipe'] });
  if (c.status !== 0) throw new Error(`bench: node -e 0 failed (exit ${c.status ?? c.signal})`);
  return { ms: performance.now() - t0 };
}

/** Decoding every record of the tape whole (readTape), in a fresh process: what export and tree must at least do. */
function readWhole(tape) {
  const file = JSON.stringify(`file://${join(DIST, 'store', 'tape-file.js')}`);
  const code = `const t0 = performance.now(); const { readTape } = await import(${file}); const t = await readTape(${JSON.stringify(tape)}); const u = process.resourceUsage(); console.log(JSON.stringify({ ms: performance.now() - t0, records: t.records.length, cpuMs: (u.userCPUTime + u.systemCPUTime) / 1000, maxRSSMB: u.maxRSS / 1024 }));`;
  const c = spawnSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (c.status !== 0) throw new Error(`bench: readTape failed (exit ${c.status ?? c.signal})`);
  return JSON.parse(c.stdout.trim().split('\n').pop());
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

export async function coldStartBench({ quick = false } = {}) {
  const N = Number(process.env.TAPEDECK_BENCH_COLD_N) || (quick ? 10_000 : 100_000);
  const rounds = Number(process.env.TAPEDECK_BENCH_COLD_ROUNDS) || (quick ? 1 : 3);
  // The three starts (ReplayCache.open, createFetch, the proxy) take a few tenths of a second
  // each; on the shared machine one of them reads 1.5-2x its usual time now and then, and a
  // median of three moved a ratio by a third when two of them did (docs/benchmarks.md). So they
  // run in more rounds than the commands, in a rotated order (none always first after the
  // commands' heavy rounds), and the rounds past `rounds` skip createFetch's misses (~2.5 s).
  const startRounds = Math.max(rounds, Number(process.env.TAPEDECK_BENCH_COLD_START_ROUNDS) || (quick ? 1 : 9));
  const dir = mkdtempSync(join(tmpdir(), 'tapedeck-bench-cold-'));
  try {
    const tape = join(dir, 'big.tape');
    await recordTape(tape, N);
    const tapeMB = statSync(tape).size / 2 ** 20;
    // A small tape, as most tapes are: there the command's own start is what `git diff` waits for.
    const small = join(dir, 'small.tape');
    await recordTape(small, 3);
    // ReplayCache's recordings of the same requests, for its first miss.
    const cacheTape = join(dir, 'cache.tape');
    await recordCacheTape(cacheTape, N);
    const runs = { cacheMiss: [], cache: [], fetch: [], proxy: [], read: [], export: [], tree: [], inspect: [], verify: [], scan: [], bare: [], version: [], smallExport: [] };
    const STARTS = ['cache', 'fetch', 'proxy'];
    for (let r = 0; r < startRounds; r++) {
      for (let k = 0; k < STARTS.length; k++) {
        const what = STARTS[(r + k) % STARTS.length];
        const env = r < rounds ? process.env : { ...process.env, TAPEDECK_BENCH_NO_MISS: '1' };
        const c = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child', what, tape, String(N)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], env });
        if (c.status !== 0) throw new Error(`bench: the ${what} cold start failed (exit ${c.status ?? c.signal})`);
        runs[what].push(JSON.parse(c.stdout.trim().split('\n').pop()));
      }
      if (r >= rounds) continue;
      const c = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child', 'cacheMiss', cacheTape, String(N)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
      if (c.status !== 0) throw new Error(`bench: the ReplayCache miss run failed (exit ${c.status ?? c.signal})`);
      runs.cacheMiss.push(JSON.parse(c.stdout.trim().split('\n').pop()));
      runs.read.push(readWhole(tape));
      // A few of each, interleaved: they take a tenth of a second.
      for (let k = 0; k < 5; k++) {
        runs.bare.push(bareStart());
        runs.version.push(command(['--version']));
        runs.smallExport.push(command(['export', '--review', small]));
      }
      for (const what of TAPE_COMMANDS) runs[what].push(command([what, tape]));
    }
    // The rounds past `rounds` have no misses: a field a run lacks is not a reading.
    const med = (what, field) => median(runs[what].map((x) => x[field]).filter((v) => v !== null && v !== undefined));
    const n = N.toLocaleString('en-US');
    const cacheMB = statSync(cacheTape).size / 2 ** 20;
    const base = med('cache', 'ms');
    const baseline = `ReplayCache.open of the same tape, ${base.toFixed(0)} ms, +${med('cache', 'rssMB').toFixed(0)} MB`;
    const rows = [
      { label: `ReplayCache.open, ${n}-record proxy tape (${tapeMB.toFixed(0)} MB)`, ms: base, rssMB: med('cache', 'rssMB'), baseline: null, ratio: 1 },
      ...['fetch', 'proxy'].map((what) => ({ label: `${what === 'fetch' ? 'createFetch' : 'proxy (startProxy)'}: first replayed answer, ${n}-record tape`, ms: med(what, 'ms'), rssMB: med(what, 'rssMB'), baseline, ratio: med(what, 'ms') / base })),
      { label: `createFetch: the first miss's diagnosis after that answer`, ms: med('fetch', 'missMs'), rssMB: null, baseline: null, ratio: null },
      { label: `createFetch: a later miss's diagnosis (median of the next three)`, ms: med('fetch', 'laterMissMs'), rssMB: null, baseline: `the first miss's, ${med('fetch', 'missMs').toFixed(0)} ms`, ratio: med('fetch', 'laterMissMs') / med('fetch', 'missMs') },
      { label: `ReplayCache: the first miss's diagnosis, ${n}-record cache tape (${cacheMB.toFixed(0)} MB)`, ms: med('cacheMiss', 'missMs'), rssMB: null, baseline: null, ratio: null },
      { label: `ReplayCache: a later miss's diagnosis (median of the next three)`, ms: med('cacheMiss', 'laterMissMs'), rssMB: null, baseline: `the first miss's, ${med('cacheMiss', 'missMs').toFixed(0)} ms`, ratio: med('cacheMiss', 'laterMissMs') / med('cacheMiss', 'missMs') },
    ];
    // The tape commands at the same scale, per 10,000 records, against decoding the tape whole.
    const per = 10_000 / N;
    const readBase = `readTape of the same tape (every record decoded), ${(med('read', 'ms') * per).toFixed(0)} ms per 10,000 records, peak ${med('read', 'maxRSSMB').toFixed(0)} MB`;
    rows.push({ label: `readTape, ${n} records, per 10,000 (peak memory of the whole run)`, ms: med('read', 'ms') * per, rssMB: med('read', 'maxRSSMB'), peak: true, baseline: null, ratio: 1 });
    for (const what of TAPE_COMMANDS) {
      rows.push({ label: `tapedeck ${what} of the ${n}-record tape, per 10,000 (peak memory of the whole run)`, ms: med(what, 'ms') * per, rssMB: med(what, 'maxRSSMB'), peak: true, baseline: readBase, ratio: med(what, 'ms') / med('read', 'ms') });
    }
    const bareNote = `node -e 0 in the same rounds, ${med('bare', 'ms').toFixed(0)} ms`;
    rows.push({ label: 'node -e 0: a bare node process, spawn to exit', ms: med('bare', 'ms'), rssMB: null, baseline: null, ratio: 1 });
    rows.push({ label: 'tapedeck --version, spawn to exit', ms: med('version', 'ms'), rssMB: null, baseline: bareNote, ratio: med('version', 'ms') / med('bare', 'ms') });
    rows.push({ label: 'tapedeck export --review of a 3-record tape, spawn to exit', ms: med('smallExport', 'ms'), rssMB: null, baseline: bareNote, ratio: med('smallExport', 'ms') / med('bare', 'ms') });
    const targets = [];
    // The targets are for a 100,000-record tape; a smaller one (--quick) is reported without
    // them: the modules and the core's first use are most of its cold start.
    const goal = (g) => (N >= 100_000 ? { op: '<=', goal: g } : {});
    for (const what of ['fetch', 'proxy']) {
      const name = what === 'fetch' ? 'createFetch' : 'proxy';
      targets.push(makeTarget({ label: `${name} cold start to the first replayed answer / ReplayCache.open, ${n} records (lower is faster)`, unit: 'x', value: med(what, 'ms') / base, ...goal(1.5), baseline }));
      targets.push(makeTarget({ label: `${name} cold start to the first replayed answer, ${n} records`, unit: 'ms', value: med(what, 'ms'), ...goal(500), baseline }));
      targets.push(makeTarget({ label: `${name} cold start, CPU time (all threads) / ReplayCache.open's, ${n} records (lower is faster)`, unit: 'x', value: med(what, 'cpuMs') / med('cache', 'cpuMs'), baseline: `ReplayCache.open's ${med('cache', 'cpuMs').toFixed(0)} ms of CPU` }));
      targets.push(makeTarget({ label: `${name} memory growth at the first answer / tape size (${tapeMB.toFixed(0)} MB; lower is smaller)`, unit: 'x', value: med(what, 'rssMB') / tapeMB, ...goal(2), baseline: 'the tape file size' }));
    }
    targets.push(makeTarget({ label: `createFetch: first miss's diagnosis after a cold start, ${n} records`, unit: 'ms', value: med('fetch', 'missMs') }));
    targets.push(makeTarget({ label: `createFetch: a later miss's diagnosis / the first miss's, ${n} records (median of the three after it; lower is faster)`, unit: 'x', value: med('fetch', 'laterMissMs') / med('fetch', 'missMs'), baseline: `the first miss's diagnosis, ${med('fetch', 'missMs').toFixed(0)} ms; a later one ${med('fetch', 'laterMissMs').toFixed(0)} ms` }));
    targets.push(makeTarget({ label: `ReplayCache: first miss's diagnosis, ${n} records`, unit: 'ms', value: med('cacheMiss', 'missMs') }));
    targets.push(makeTarget({ label: `ReplayCache: a later miss's diagnosis / the first miss's, ${n} records (median of the three after it; lower is faster)`, unit: 'x', value: med('cacheMiss', 'laterMissMs') / med('cacheMiss', 'missMs'), baseline: `the first miss's diagnosis, ${med('cacheMiss', 'missMs').toFixed(0)} ms; a later one ${med('cacheMiss', 'laterMissMs').toFixed(0)} ms` }));
    // The command's start: what a small tape's export (git's textconv, both sides of every diff)
    // and --version take from spawn to exit, against node starting and exiting with nothing to do.
    targets.push(makeTarget({ label: 'tapedeck export --review of a 3-record tape, spawn to exit / a bare node process (lower is faster)', unit: 'x', value: med('smallExport', 'ms') / med('bare', 'ms'), op: '<=', goal: 2.5, baseline: bareNote }));
    targets.push(makeTarget({ label: 'tapedeck --version, spawn to exit / a bare node process (lower is faster)', unit: 'x', value: med('version', 'ms') / med('bare', 'ms'), baseline: bareNote }));
    for (const what of TAPE_COMMANDS) {
      targets.push(makeTarget({ label: `tapedeck ${what}, per 10,000 records of a ${n}-record tape (process start included)`, unit: 'ms', value: med(what, 'ms') * per, baseline: readBase }));
      targets.push(makeTarget({ label: `tapedeck ${what}: peak memory / tape size (${tapeMB.toFixed(0)} MB; lower is smaller)`, unit: 'x', value: med(what, 'maxRSSMB') / tapeMB, baseline: `readTape's peak / tape size, ${(med('read', 'maxRSSMB') / tapeMB).toFixed(2)}x` }));
    }
    return { rows, targets, rounds, startRounds };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The tape commands timed on the large tape, each visiting every record once: export and tree
 * (which git's textconv and people run on big tapes), inspect, verify and scan (the pre-commit
 * hook's secret scan).
 */
const TAPE_COMMANDS = ['export', 'tree', 'inspect', 'verify', 'scan'];

/** A row as bench/run.mjs prints it. */
export function formatRow(r) {
  return [r.label, `${r.ms.toFixed(0)} ms`, r.rssMB === null ? '' : r.peak ? `${r.rssMB.toFixed(0)} MB peak` : `+${r.rssMB.toFixed(0)} MB`, r.baseline === null ? (r.ratio === 1 ? '(baseline)' : '') : `${r.ratio.toFixed(2)}x`, r.baseline ?? ''];
}

if (process.argv[2] === '--child') {
  if (process.argv[3] === 'cacheMiss') await cacheMissChild(process.argv[4], Number(process.argv[5]));
  else await child(process.argv[3], process.argv[4], Number(process.argv[5]));
} else if (import.meta.url === `file://${process.argv[1]}`) {
  const out = await coldStartBench({ quick: process.argv.includes('--quick') });
  if (process.argv.includes('--json')) process.stdout.write(`${JSON.stringify(out)}\n`);
  else {
    for (const r of out.rows) console.log(formatRow(r).join('  '));
    for (const t of out.targets) console.log(targetLine(t));
  }
}
