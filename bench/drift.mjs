// Drift rows: `tapedeck diff` of two 10,000-recording tapes (a re-record where most answers are
// the same, some changed in noise, text or tool calls; a fifth streamed), and of a re-record
// where every request changed (each pair found by closeness), against the baseline of reading
// both tapes alone. Run by bench/run.mjs, or alone: node bench/drift.mjs [--quick].
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { makeTarget, targetLine } from './targets.mjs';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc');
const enc = new TextEncoder();

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

function request(i, tools, system = 'You are a concise assistant.') {
  return {
    model: 'gpt-4o-mini',
    messages: [
      { role: 'system', content: system },
      { role: 'user', content: `Question number ${i}: what is ${i} squared, and is it even?` },
    ],
    ...(tools ? { tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: { n: { type: 'integer' } } } } }] } : {}),
    ...(i % 5 === 0 ? { stream: true } : {}),
  };
}

/** The answer of request i: `variant` 0 as recorded, 1 noise, 2 other text, 3 other tool arguments. */
function answer(i, variant) {
  const tools = i % 10 === 3;
  const id = variant === 1 ? `chatcmpl-${i}b` : `chatcmpl-${i}`;
  const text = `${i} squared is ${i * i}, which is ${i % 2 ? 'odd' : 'even'}. ${variant === 2 ? 'Squares keep the parity of their root.' : 'A square is even exactly when its root is.'}`;
  const args = JSON.stringify({ n: variant === 3 ? i + 1 : i });
  const head = { id, object: 'chat.completion', created: 1767225600 + (variant === 1 ? 60 : 0), model: 'gpt-4o-mini-2024-07-18', system_fingerprint: 'fp_1' };
  const message = tools ? { role: 'assistant', content: null, tool_calls: [{ id: `call_${i}`, type: 'function', function: { name: 'lookup', arguments: args } }] } : { role: 'assistant', content: text };
  const usage = { prompt_tokens: 31, completion_tokens: 24, total_tokens: 55 };
  if (i % 5 !== 0) return { ct: 'application/json', body: enc.encode(JSON.stringify({ ...head, choices: [{ index: 0, message, finish_reason: tools ? 'tool_calls' : 'stop' }], usage })) };
  const chunk = (delta, finish = null) => `data: ${JSON.stringify({ ...head, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  let s = chunk({ role: 'assistant', content: '' });
  if (tools) s += chunk({ tool_calls: [{ index: 0, id: `call_${i}`, type: 'function', function: { name: 'lookup', arguments: args } }] });
  else for (const w of text.match(/\S+\s*/g)) s += chunk({ content: w });
  s += chunk({}, tools ? 'tool_calls' : 'stop') + `data: ${JSON.stringify({ ...head, object: 'chat.completion.chunk', choices: [], usage })}\n\ndata: [DONE]\n\n`;
  return { ct: 'text/event-stream', body: enc.encode(s) };
}

function record(lib, i, variant, system) {
  const tools = i % 10 === 3;
  const body = request(i, tools, system);
  const a = answer(i, variant);
  return {
    v: 1,
    kind: 'http',
    match: 'llm',
    route: 'POST /v1/chat/completions',
    key: lib.requestKeys(body).key,
    keyVersion: 2,
    trace: `t${i}`,
    request: { method: 'POST', url: '/v1/chat/completions', headers: { 'content-type': 'application/json' }, body },
    response: { status: 200, headers: { 'content-type': a.ct }, body: a.body },
    recordedAt: '2026-11-22T00:00:00.000Z',
    durationMs: 800,
  };
}

/** Re-recorded: 80% the same bytes, 10% noise, 8% other text, 2% other tool arguments. */
const variantOf = (i) => {
  const r = (i * 7919) % 100;
  return r < 80 ? 0 : r < 90 ? 1 : i % 10 === 3 ? 3 : r < 98 ? 2 : 1;
};

export async function driftBench(store, lib, drift, { quick = false } = {}) {
  const N = 10_000;
  const dir = mkdtempSync(join(tmpdir(), 'tapedeck-drift-bench-'));
  const rows = [];
  const targets = [];
  try {
    const oldTape = join(dir, 'old.tape');
    const newTape = join(dir, 'new.tape');
    // And every request changed (a new system prompt): each key is new, each pair found by closeness.
    const movedTape = join(dir, 'moved.tape');
    // (--quick: 1,000 of them; each request is ranked against a few old ones, ~1-2 ms a request.)
    const M = quick ? 1000 : N;
    const oldM = join(dir, 'old-m.tape');
    for (const [path, v, system, count] of [[oldTape, () => 0, undefined, N], [newTape, variantOf, undefined, N], [oldM, () => 0, undefined, M], [movedTape, () => 0, 'You are a terse assistant.', M]]) {
      await store.createTape(path, { created: '2026-11-22T00:00:00.000Z' });
      for (let i = 0; i < count; i += 1000) {
        const batch = [];
        for (let k = i; k < i + 1000; k++) batch.push(record(lib, k, v(k), system));
        await store.appendRecords(path, batch, { durable: false });
      }
    }
    const reps = quick ? 2 : 5;
    const reads = [];
    const diffs = [];
    let report;
    for (let r = 0; r < reps; r++) {
      gc();
      let t0 = performance.now();
      await store.readTape(oldTape);
      await store.readTape(newTape);
      reads.push(performance.now() - t0);
      gc();
      t0 = performance.now();
      const { before, after } = await drift.loadPaths(oldTape, newTape);
      report = drift.driftReport(before.tapes, after.tapes, { old: 'old', new: 'new' });
      diffs.push(performance.now() - t0);
    }
    const moved = [];
    let movedReport;
    for (let r = 0; r < (quick ? 1 : 3); r++) {
      gc();
      const t0 = performance.now();
      const { before, after } = await drift.loadPaths(oldM, movedTape);
      movedReport = drift.driftReport(before.tapes, after.tapes, { old: 'old', new: 'moved' });
      moved.push(performance.now() - t0);
    }
    const misplaced = movedReport.entries.filter((e) => !e.old || !e.new || e.old.index !== e.new.index).length;
    if (misplaced !== 0 || movedReport.entries[0].requestChange[0] !== 'message 0 (system) text differs') throw new Error(`bench: ${misplaced} requests of the changed tape paired wrongly`);
    const s = report.summary;
    if (s.pairs !== N || s.primary.identical + s.primary.benign + s.primary.text + s.primary['tool-calls'] !== N) throw new Error(`bench: drift report of ${s.pairs} pairs: ${JSON.stringify(s.primary)}`);
    const read = median(reads);
    const diff = median(diffs);
    const readLabel = `baseline: readTape of both ${N.toLocaleString('en-US')}-record tapes (ms)`;
    rows.push({ label: `tapedeck diff of two ${N.toLocaleString('en-US')}-record tapes, read + pair + classify (ms)`, ms: diff, baseline: readLabel, ratio: diff / read }, { label: readLabel, ms: read, baseline: readLabel, ratio: 1 });
    const note = `(${s.primary.identical} identical, ${s.primary.benign} benign, ${s.primary.text} text, ${s.primary['tool-calls']} tool-calls; time / baseline ${(diff / read).toFixed(2)}x)`;
    const m = median(moved);
    const readM = (read * M) / N;
    rows.push({ label: `tapedeck diff, every one of ${M.toLocaleString('en-US')} requests changed (new system prompt), paired by closeness (ms)`, ms: m, baseline: readLabel, ratio: m / readM });
    targets.push(makeTarget({ label: `tapedeck diff of ${M.toLocaleString('en-US')} recordings whose requests all changed, median`, unit: 'ms', value: m, baseline: `readTape of both ${N.toLocaleString('en-US')}-record tapes alone ${read.toFixed(0)} ms, scaled to ${M.toLocaleString('en-US')}: ${readM.toFixed(0)} ms`, note: `(time / baseline ${(m / readM).toFixed(2)}x)` }));
    targets.push(makeTarget({ label: `tapedeck diff of two ${N.toLocaleString('en-US')}-recording tapes, median`, unit: 'ms', value: diff, op: '<=', goal: 2000, baseline: `readTape of both tapes alone ${read.toFixed(0)} ms`, note }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return { rows, targets };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const store = { ...(await import('../dist/store/index.js')), ...(await import('../dist/store/tape-file.js')) };
  const lib = await import('../dist/index.js');
  const drift = { ...(await import('../dist/drift/load.js')), ...(await import('../dist/drift/report.js')) };
  const { rows, targets } = await driftBench(store, lib, drift, { quick: process.argv.includes('--quick') });
  for (const r of rows) console.log(`${r.label.padEnd(80)} ${`${r.ms.toFixed(1)} ms`.padStart(10)}  ${r.label === r.baseline ? '(baseline)' : `${r.ratio.toFixed(2)}x the baseline's time`}`);
  for (const t of targets) console.log(targetLine(t));
}
