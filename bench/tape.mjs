// Tape benchmark rows: append throughput with and without fsync, open time and memory
// for a tape of 100,000 records, replay lookup p50, and file size against the same data as
// JSON. Each row has a baseline measured in the same run: JSON Lines written with
// fs.appendFileSync (the format most record/replay tools use) and a JSON file parsed whole.
// Run by bench/run.mjs after the core rows, or alone: node bench/tape.mjs [--quick].
import { appendFileSync, closeSync, fsyncSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { makeTarget, targetLine } from './targets.mjs';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc');

function percentile(sorted, p) {
  const idx = (sorted.length - 1) * p;
  const lo = Math.floor(idx);
  const hi = Math.ceil(idx);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (idx - lo);
}

function request(i) {
  return {
    model: 'gpt-4o-mini',
    messages: [
      { role: 'system', content: 'You are a concise assistant.' },
      { role: 'user', content: `Question number ${i}: what is ${i} squared, and is it even? Ünïcödé ✓` },
    ],
    temperature: 0,
  };
}

/** A realistic small recording, as ReplayCache writes it: request, answer, key, signature. */
function record(i, key) {
  return {
    v: 1,
    key,
    // The request key spec version ReplayCache writes (an older one is re-keyed at open).
    keyVersion: 2,
    signature: { toolNames: [], messageCount: 2, contextKeys: [] },
    request: request(i),
    value: { id: `chatcmpl-${i}`, choices: [{ index: 0, message: { role: 'assistant', content: `${i * i}, ${i % 2 ? 'odd' : 'even'}.` } }], usage: { prompt_tokens: 31, completion_tokens: 6 } },
    recordedAt: new Date(Date.UTC(2026, 10, 22) + i * 1000).toISOString(),
  };
}

async function rate(label, n, fn) {
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await fn(i);
  const ms = performance.now() - t0;
  return { label, perSecond: (n / ms) * 1000, n, ms };
}

export async function tapeBench(store, lib, { quick = false } = {}) {
  const keyOf = (i) => lib.requestKeys(request(i)).key;
  const dir = mkdtempSync(join(tmpdir(), 'tapedeck-bench-'));
  const rows = [];
  const targets = [];
  try {
    // --- append throughput, one record per call (how a recording test appends)
    const nSync = quick ? 20 : 200;
    const nFast = quick ? 150 : 3000;
    const tapeA = join(dir, 'append.tape');
    await store.createTape(tapeA, { created: '2026-11-22T00:00:00.000Z' });
    const jsonlA = join(dir, 'append.jsonl');
    writeFileSync(jsonlA, '');
    const appendJsonl = (i, durable) => {
      const fd = openSync(jsonlA, 'a');
      writeSync(fd, `${JSON.stringify(record(i, keyOf(i)))}\n`);
      if (durable) fsyncSync(fd);
      closeSync(fd);
    };
    const tSync = await rate('append, fsync on (records/s)', nSync, (i) => store.appendRecords(tapeA, [record(i, keyOf(i))]));
    const jSync = await rate('baseline: JSON Lines append + fsync (records/s)', nSync, (i) => appendJsonl(i, true));
    const tFast = await rate('append, fsync off (records/s)', nFast, (i) => store.appendRecords(tapeA, [record(i, keyOf(i))], { durable: false }));
    const jFast = await rate('baseline: JSON Lines append (records/s)', nFast, (i) => appendJsonl(i, false));
    rows.push({ ...tSync, baseline: jSync.label, ratio: tSync.perSecond / jSync.perSecond }, { ...jSync, baseline: jSync.label, ratio: 1 });
    rows.push({ ...tFast, baseline: jFast.label, ratio: tFast.perSecond / jFast.perSecond }, { ...jFast, baseline: jFast.label, ratio: 1 });

    // --- ReplayCache.put from many concurrent callers (a proxy, parallel tests in one worker):
    // puts that arrive during an append share the next one (one lock, one fsync).
    const nConc = quick ? 200 : 2000;
    const tapeC = join(dir, 'concurrent.tape');
    const cacheC = await store.ReplayCache.open(tapeC, { mode: 'record' });
    const t0 = performance.now();
    for (let i = 0; i < nConc; i += 32) {
      await Promise.all(Array.from({ length: Math.min(32, nConc - i) }, (_, j) => cacheC.put(request(i + j), record(i + j, '').value)));
    }
    const concMs = performance.now() - t0;
    await cacheC.close();
    const conc = { label: 'ReplayCache.put, 32 concurrent callers, fsync on (records/s)', perSecond: (nConc / concMs) * 1000, n: nConc, ms: concMs };
    rows.push({ ...conc, baseline: jSync.label, ratio: conc.perSecond / jSync.perSecond });

    // --- a tape of 100,000 records: open time, memory, lookup, size
    const N = quick ? 5_000 : 100_000;
    const tapeB = join(dir, 'big.tape');
    await store.createTape(tapeB, { created: '2026-11-22T00:00:00.000Z' });
    const all = [];
    for (let i = 0; i < N; i++) all.push(record(i, keyOf(i)));
    for (let i = 0; i < N; i += 1000) await store.appendRecords(tapeB, all.slice(i, i + 1000), { durable: false });
    const jsonB = join(dir, 'big.json');
    writeFileSync(jsonB, JSON.stringify(all));
    const tapeBytes = statSync(tapeB).size;
    const jsonBytes = statSync(jsonB).size;
    all.length = 0;

    // Memory first, before any other open (a tape this large is read from its file, not held:
    // src/store/tape-lazy.ts). Array buffers dropped earlier (appends, the JSON
    // copy) are freed lazily after a GC, so let that settle before the first reading.
    const settle = async () => {
      for (let i = 0; i < 3; i++) {
        gc();
        await new Promise((r) => setTimeout(r, 30));
      }
    };
    await settle();
    const used = () => {
      const m = process.memoryUsage();
      return m.heapUsed + m.arrayBuffers; // buffers are external memory (a file image, where one is held)
    };
    const heapBefore = used();
    const held = await store.ReplayCache.open(tapeB, { mode: 'replay' });
    await settle();
    const heapAfter = used();
    const opens = [];
    for (let r = 0; r < (quick ? 2 : 5); r++) {
      gc();
      const t0 = performance.now();
      await store.ReplayCache.open(tapeB, { mode: 'replay' });
      opens.push(performance.now() - t0);
    }
    opens.sort((a, b) => a - b);
    const jsonOpens = [];
    for (let r = 0; r < (quick ? 2 : 5); r++) {
      gc();
      const t0 = performance.now();
      const map = new Map();
      for (const rec of JSON.parse(readFileSync(jsonB, 'utf8'))) map.set(rec.key, rec.value);
      jsonOpens.push(performance.now() - t0);
    }
    jsonOpens.sort((a, b) => a - b);
    const open = { label: `open a ${N.toLocaleString('en-US')}-record tape (ms)`, ms: percentile(opens, 0.5) };
    const jsonOpen = { label: `baseline: JSON.parse + Map of the same ${N.toLocaleString('en-US')} records (ms)`, ms: percentile(jsonOpens, 0.5) };
    rows.push({ ...open, baseline: jsonOpen.label, ratio: jsonOpen.ms / open.ms }, { ...jsonOpen, baseline: jsonOpen.label, ratio: 1 });
    const jsonNote = `${jsonOpen.label.replace(/ \(ms\)$/, '')} ${jsonOpen.ms.toFixed(1)} ms`;
    targets.push(makeTarget({ label: `open a ${N.toLocaleString('en-US')}-record tape, median`, unit: 'ms', value: open.ms, op: '<=', goal: 300, baseline: jsonNote }));
    targets.push(makeTarget({ label: `memory of an open ${N.toLocaleString('en-US')}-record tape per record, buffers included (read from its file, not held: the file is ${Math.round(tapeBytes / N)} B/record)`, unit: 'bytes', value: (heapAfter - heapBefore) / N }));
    targets.push(makeTarget({ label: `tape size / size of the same records as JSON (${tapeBytes} vs ${jsonBytes} bytes; lower is smaller)`, unit: 'x', value: tapeBytes / jsonBytes, baseline: 'the same records as one JSON array' }));

    // --- replay lookup: cache.get of a recorded request (keying the request included)
    const lookups = [];
    for (let i = 0; i < (quick ? 500 : 5000); i++) {
      const req = request((i * 7919) % N);
      const t0 = performance.now();
      await held.get(req);
      lookups.push(performance.now() - t0);
      
    }
    lookups.sort((a, b) => a - b);
    rows.push({ label: 'replay get (key the request + lookup), p50 (µs)', us: percentile(lookups, 0.5) * 1000, baseline: null, ratio: null });
    targets.push(makeTarget({ label: 'replay get p50, keying the request included', unit: 'µs', value: percentile(lookups, 0.5) * 1000 }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return { rows, targets };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const store = { ...(await import('../dist/store/index.js')), ...(await import('../dist/store/tape-file.js')) };
  const lib = await import('../dist/index.js');
  const { rows, targets } = await tapeBench(store, lib, { quick: process.argv.includes('--quick') });
  for (const r of rows) {
    const v = r.perSecond !== undefined ? `${r.perSecond.toFixed(0)}/s` : r.ms !== undefined ? `${r.ms.toFixed(1)} ms` : `${r.us.toFixed(1)} µs`;
    console.log(`${r.label.padEnd(64)} ${v.padStart(12)}  ${r.ratio === null ? '' : `${r.ratio.toFixed(2)}x vs ${r.baseline}`}`);
  }
  for (const t of targets) console.log(targetLine(t));
}
