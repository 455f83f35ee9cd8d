// Matcher benchmark rows: lookup among 1,000,000 recordings after hashing, memory per
// recording in the index, and end to end from the raw bytes of the M request body. Run by
// bench/run.mjs after the core rows (or alone: node bench/match.mjs [--quick]).
import { createHash, hash as nodeHash } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import stringify from 'safe-stable-stringify';
import { Bench } from 'tinybench';
import { buildWorkload, conversationTurns, converseBody, geminiBody, newToolLists, ollamaChatBody, requestBodies } from './workloads.mjs';
import { makeTarget, targetLine } from './targets.mjs';
import { FLOOR_ROUNDS, floorRoundsNote, pairedFigures, timeAgainstFloor } from './floor-rounds.mjs';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc');

const hex = (s) => createHash('sha256').update(s).digest('hex');

function percentile(sorted, p) {
  const idx = (sorted.length - 1) * p;
  const lo = Math.floor(idx);
  const hi = Math.ceil(idx);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (idx - lo);
}

async function time(label, fn, budget) {
  const bench = new Bench({ ...budget, retainSamples: true, throws: true });
  let sink;
  bench.add(label, () => {
    sink = fn();
  });
  const [task] = await bench.run();
  const samples = Array.from(task.result.latency.samples).sort((a, b) => a - b);
  return { label, p50: percentile(samples, 0.5), p99: percentile(samples, 0.99), samples: samples.length, sink };
}

/** Deterministic 64-hex strings standing in for digests (the index never looks inside them). */
function fakeDigests(n, salt) {
  const out = new Array(n);
  let x = 0x9e3779b9 ^ salt;
  for (let i = 0; i < n; i++) {
    let s = '';
    for (let j = 0; j < 8; j++) {
      x = (Math.imul(x ^ (x >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) | 0;
      s += (x >>> 0).toString(16).padStart(8, '0');
    }
    out[i] = s;
  }
  return out;
}

/**
 * Runs the matcher rows against `lib` (the built package). Returns rows and targets in the
 * shape bench/run.mjs writes to latest.json.
 */
export async function matchBench(lib, { quick = false } = {}) {
  const N = quick ? 100_000 : 1_000_000;
  const budget = quick ? { time: 50, iterations: 50, warmupTime: 10 } : { time: 700, iterations: 2000, warmupTime: 100 };
  const rows = [];
  const targets = [];
  // requestDigests and its floor: their own samples (p50, p99) in 80% of the budget each, and
  // their distance in rounds shared by both (bench/floor-rounds.mjs) in the 40% left.
  const apart = { ...budget, time: budget.time * 0.8 };
  const againstFloor = (rowFn, floorFn, row, floor) =>
    timeAgainstFloor(rowFn, floorFn, { rowMs: row.p50, floorMs: floor.p50, budgetMs: budget.time * 0.4, ...(quick ? FLOOR_ROUNDS.quick : FLOOR_ROUNDS.full) });
  const us = (ms) => `${(ms * 1000).toFixed(1)} µs`;

  // --- index: build, memory, lookup
  const keys = fakeDigests(N, 1);
  const sigs = fakeDigests(Math.ceil(N / 50), 2); // many recordings share a signature, as in real tapes
  gc();
  const before = process.memoryUsage().heapUsed;
  const index = new lib.MatchIndex(true);
  for (let i = 0; i < N; i++) index.add(keys[i], sigs[i % sigs.length]);
  gc();
  const bytesPerRecording = (process.memoryUsage().heapUsed - before) / N;
  let probe = 0;
  const lookup = await time(`index lookup by key, ${N.toLocaleString('en-US')} recordings`, () => index.byRequestKey(keys[(probe = (probe + 7919) % N)]), budget);
  const sigLookup = await time(`index lookup by signature, ${N.toLocaleString('en-US')} recordings`, () => index.bySignatureDigest(sigs[(probe = (probe + 7919) % sigs.length)]), budget);
  // The naive matcher of a JSON recordings directory: a scan over the recordings comparing signatures.
  const scanList = keys.map((k, i) => ({ key: k, sig: sigs[i % sigs.length] }));
  const scan = await time(
    `linear scan, ${N.toLocaleString('en-US')} recordings`,
    () => {
      const want = keys[(probe = (probe + 7919) % N)];
      return scanList.findIndex((r) => r.key === want);
    },
    quick ? { time: 50, iterations: 5 } : { time: 700, iterations: 20 },
  );
  rows.push({ ...lookup, baseline: scan.label, ratio: scan.p50 / lookup.p50 });
  rows.push({ ...sigLookup, baseline: scan.label, ratio: scan.p50 / sigLookup.p50 });
  rows.push({ ...scan, baseline: scan.label, ratio: 1 });
  targets.push(makeTarget({ label: `index lookup by key after hashing, ${N.toLocaleString('en-US')} recordings, p50`, unit: 'µs', value: lookup.p50 * 1000, op: '<=', goal: 5, baseline: `linear scan ${(scan.p50 * 1000).toFixed(0)} µs` }));
  targets.push(makeTarget({ label: 'index memory per recording', unit: 'bytes', value: bytesPerRecording }));

  // --- end to end from the raw M request body
  const w = buildWorkload('M');
  const body = w.bodyBytes;
  const recordings = [{ request: JSON.parse(Buffer.from(body).toString('utf8')), response: { ok: true } }];
  // Cold (memo off, as for bytes never seen before). The body is canonically the recorded one,
  // so its fingerprint (one core call over the raw bytes) finds the recording's digests.
  const cold = lib.createMatcher({ mode: 'exact', allowRepeats: true, recordings, memo: 0 });
  const e2e = await time('match(raw M body), cold: fingerprint + lookup', () => cold.match(body), budget);
  if (cold.stats().computed !== 0) throw new Error('bench: the cold row did not take the fingerprint path');
  // Cold, full path: the same conversation re-recorded with new tool-call ids, which normalization
  // renumbers but the fingerprint sees: JSON.parse + normalize + one core call + lookup.
  const reRecorded = Buffer.from(Buffer.from(body).toString('utf8').replace(/"(call_[A-Za-z0-9]+)"/g, '"$1x"'));
  if (reRecorded.equals(Buffer.from(body))) throw new Error('bench: the M body has no tool-call ids to change');
  const full = lib.createMatcher({ mode: 'exact', allowRepeats: true, recordings, memo: 0 });
  // A matcher whose fingerprints keep missing only probes them (every 32nd request), so this
  // row is the raw-bytes key path + lookup once the run is past its first requests.
  const e2eFull = await time('match(raw M body, new call ids), cold: raw-bytes key + paths', () => full.match(reRecorded), budget);
  if (full.stats().fingerprintHits !== 0 || full.match(reRecorded).matchedBy !== 'exact') throw new Error('bench: the full-path row did not take the full path');
  // Its floor: the digests the full path's result holds (the key, every message and path hash,
  // the signature) by node:crypto from bytes prepared beforehand, as for requestDigests below;
  // its distance in rounds shared with it.
  const fullFloorFn = requestFloor(lib, reRecorded);
  const fullFloor = await time('floor of the full path: node:crypto SHA-256 of the prepared bytes of every digest', fullFloorFn, apart);
  const fullToFloor = againstFloor(() => full.match(reRecorded), fullFloorFn, e2eFull, fullFloor);
  // Warm: bytes seen before (a proxy serving many clients), or a recording's request exactly as
  // JSON.stringify writes it (what the JavaScript SDKs send, known from the first request on):
  // SHA-256 of the bytes + memo + lookup.
  const warm = lib.createMatcher({ mode: 'exact', allowRepeats: true, recordings });
  if (Buffer.from(JSON.stringify(recordings[0].request)).equals(Buffer.from(body))) {
    warm.match(body);
    if (warm.stats().memoHits !== 1) throw new Error("bench: the recording's own JSON text was not known to the memo");
  }
  const e2eWarm = await time('match(raw M body), bytes seen before or a recording\'s JSON text (memo hit)', () => warm.match(body), budget);
  // Baseline: the same pipeline with the best pure-JS hashing (safe-stable-stringify + node:crypto).
  const base = await time(
    'baseline: JSON.parse + normalize + sss/node:crypto key and chain',
    () => jsKeyAndChain(lib, body),
    budget,
  );
  rows.push({ ...e2e, baseline: base.label, ratio: base.p50 / e2e.p50 });
  rows.push({ ...e2eFull, baseline: base.label, ratio: base.p50 / e2eFull.p50, floorRatio: fullToFloor.ratio, floorPaired: fullToFloor });
  rows.push({ ...fullFloor, baseline: base.label, ratio: base.p50 / fullFloor.p50 });
  rows.push({ ...e2eWarm, baseline: base.label, ratio: base.p50 / e2eWarm.p50 });
  rows.push({ ...base, baseline: base.label, ratio: 1 });
  const baseNote = `${base.label} ${(base.p50 * 1000).toFixed(1)} µs`;
  targets.push(makeTarget({ label: 'match end to end from raw M request bytes, cold, p50', unit: 'µs', value: e2e.p50 * 1000, op: '<=', goal: 150, baseline: baseNote }));

  // A whole matcher over real recordings keeps, per recording, its digests: key, signature and
  // one message hash and one path hash per message (50 here), plus the index entries.
  const variants = quick ? 200 : 2000;
  const bodyText = Buffer.from(body).toString('utf8');
  const many = [];
  for (let i = 0; i < variants; i++) many.push({ request: JSON.parse(bodyText.replace('"messages":[', `"messages":[{"role":"user","content":"variant ${i}"},`)), response: null });
  gc();
  const beforeMatcher = process.memoryUsage().heapUsed;
  const bigMatcher = lib.createMatcher({ recordings: many });
  gc();
  const perRecording = (process.memoryUsage().heapUsed - beforeMatcher) / variants;
  if (bigMatcher.keys().length !== variants) throw new Error('bench: matcher lost recordings');
  targets.push(makeTarget({ label: `matcher memory per M-sized recording (${variants} recordings, 51 messages each)`, unit: 'bytes', value: perRecording }));
  targets.push(makeTarget({ label: 'match end to end, body differing in normalized-away fields (full path), p50', unit: 'µs', value: e2eFull.p50 * 1000, op: '<=', goal: 150, baseline: baseNote }));
  targets.push(makeTarget({ label: "match end to end, body differing in normalized-away fields (full path): time / the floor's (lower is closer)", unit: 'x', value: fullToFloor.ratio, op: '<=', goal: 1.5, baseline: floorRoundsNote(fullToFloor, us), paired: pairedFigures(fullToFloor) }));

  // --- request digests of an M-sized body never seen before, every request shape: the key,
  // message hashes and path hashes (requestDigests: the raw-bytes path) against the JavaScript
  // pipeline (JSON.parse + normalize + safe-stable-stringify + node:crypto) and against
  // tapedeck's own general path (requestKeys: JSON.parse + normalize + one core call).
  for (const [shape, { bytes }] of Object.entries(requestBodies())) {
    const want = lib.requestKeys(bytes);
    const got = lib.requestDigests(bytes);
    if (got.key !== want.key || got.pathHashes.join() !== want.pathHashes.join()) throw new Error(`bench: ${shape}: requestDigests disagrees with requestKeys`);
    const raw = await time(`requestDigests(raw M ${shape} body)`, () => lib.requestDigests(bytes), apart);
    const general = await time(`requestKeys(raw M ${shape} body): parse + normalize + one core call`, () => lib.requestKeys(bytes), budget);
    const js = await time(
      `baseline ${shape}: JSON.parse + normalize + sss/node:crypto key and chain`,
      () => jsKeyAndChain(lib, bytes),
      budget,
    );
    const floorFn = requestFloor(lib, bytes);
    const floor = await time(`floor ${shape}: node:crypto SHA-256 of the prepared bytes of every digest`, floorFn, apart);
    const toFloor = againstFloor(() => lib.requestDigests(bytes), floorFn, raw, floor);
    rows.push({ ...raw, baseline: js.label, ratio: js.p50 / raw.p50, floorRatio: toFloor.ratio, floorPaired: toFloor });
    rows.push({ ...general, baseline: js.label, ratio: js.p50 / general.p50 });
    rows.push({ ...js, baseline: js.label, ratio: 1 });
    rows.push({ ...floor, baseline: js.label, ratio: js.p50 / floor.p50 });
    const against = `${js.label} ${(js.p50 * 1000).toFixed(1)} µs`;
    targets.push(makeTarget({ label: `requestDigests, raw M ${shape} body: time / the floor's (lower is closer)`, unit: 'x', value: toFloor.ratio, op: '<=', goal: 1.5, baseline: floorRoundsNote(toFloor, us), paired: pairedFigures(toFloor) }));
    // The body repeats, so from the second call on its tool list's canonical form is kept
    // (src/match/raw-keys/tools-cache.ts): what every request of a conversation after its first
    // costs. A conversation's first request is the row after this loop.
    targets.push(makeTarget({ label: `requestDigests, raw M ${shape} body (${bytes.length} B), new messages, tool list seen before, p50`, unit: 'µs', value: raw.p50 * 1000, op: '<=', goal: 150, baseline: against }));
    targets.push(makeTarget({ label: `requestDigests, raw M ${shape} body: speed vs the JavaScript pipeline`, unit: 'x', value: js.p50 / raw.p50, op: '>=', goal: 5, baseline: against }));
  }

  // --- a conversation's first request (its tool list never seen: 16 lists, more than are kept,
  // taken in turn) and a conversation growing turn by turn with the same tools (each request
  // its messages so far), against the JavaScript pipeline on the same requests.
  for (const shape of ['openai-chat', 'openai-chat-tools']) {
    const fresh = newToolLists(shape, 16);
    let next = 0;
    const first = await time(`requestDigests(raw M ${shape} body), tool list never seen (a conversation's first request)`, () => lib.requestDigests(fresh[(next = (next + 1) % fresh.length)]), budget);
    const js = await time(`baseline ${shape}, tool list never seen: JSON.parse + normalize + sss/node:crypto key and chain`, () => jsKeyAndChain(lib, fresh[(next = (next + 1) % fresh.length)]), budget);
    rows.push({ ...first, baseline: js.label, ratio: js.p50 / first.p50 });
    rows.push({ ...js, baseline: js.label, ratio: 1 });
    const against = `${js.label} ${(js.p50 * 1000).toFixed(1)} µs`;
    targets.push(makeTarget({ label: `requestDigests, raw M ${shape} body, tool list never seen (a conversation's first request), p50`, unit: 'µs', value: first.p50 * 1000, baseline: against }));
    targets.push(makeTarget({ label: `requestDigests, raw M ${shape} body, tool list never seen: speed vs the JavaScript pipeline`, unit: 'x', value: js.p50 / first.p50, baseline: against }));

    const turns = conversationTurns(shape);
    const keyAll = () => turns.map((b) => lib.requestDigests(b).key);
    if (keyAll().join() !== turns.map((b) => lib.requestKeys(b).key).join()) throw new Error(`bench: ${shape} conversation: requestDigests disagrees with requestKeys`);
    const label = `${shape} conversation, ${turns.length} requests growing turn by turn, same tools`;
    const conv = await time(`requestDigests of every request: ${label}`, keyAll, quick ? budget : { ...budget, iterations: 200 });
    const convJs = await time(`baseline: JSON.parse + normalize + sss/node:crypto key and chain of every request: ${label}`, () => turns.map((b) => jsKeyAndChain(lib, b)), quick ? budget : { ...budget, iterations: 200 });
    rows.push({ ...conv, baseline: convJs.label, ratio: convJs.p50 / conv.p50 });
    rows.push({ ...convJs, baseline: convJs.label, ratio: 1 });
    const convAgainst = `${convJs.label}: ${((convJs.p50 * 1000) / turns.length).toFixed(1)} µs per request`;
    targets.push(makeTarget({ label: `requestDigests, ${label}: mean per request, p50 of the whole conversation`, unit: 'µs', value: (conv.p50 * 1000) / turns.length, baseline: convAgainst }));
    targets.push(makeTarget({ label: `requestDigests, ${label}: speed vs the JavaScript pipeline`, unit: 'x', value: convJs.p50 / conv.p50, op: '>=', goal: 5, baseline: convAgainst }));
  }

  // --- M-sized bodies of provider modules' shapes, sent to their routes (Gemini and Bedrock: the
  // model from the path; Ollama /api/chat), against the JavaScript pipeline on the same
  // normalizer. The core writes the view of Gemini and Converse bodies itself (assembly/view.ts),
  // as it does for the chat family; an Ollama body is walked over the core's index in JavaScript
  // (src/match/raw-keys/ollama.ts). Gemini and Bedrock have a 4x target; Ollama is reported.
  for (const [shape, { bytes, endpoint }, goal] of [['gemini', geminiBody(), 4], ['bedrock-converse', converseBody(), 4], ['ollama-chat', ollamaChatBody(), null]]) {
    const opts = { endpoint };
    const want = lib.requestKeys(bytes, opts);
    const got = lib.requestDigests(bytes, opts);
    if (got.key !== want.key || got.pathHashes.join() !== want.pathHashes.join() || got.provider !== shape) throw new Error(`bench: ${shape}: requestDigests disagrees with requestKeys`);
    const raw = await time(`requestDigests(raw M ${shape} body, its route)`, () => lib.requestDigests(bytes, opts), apart);
    const js = await time(`baseline ${shape}: JSON.parse + normalize + sss/node:crypto key and chain`, () => jsKeyAndChain(lib, bytes, opts), budget);
    const floorFn = requestFloor(lib, bytes, opts);
    const floor = await time(`floor ${shape}: node:crypto SHA-256 of the prepared bytes of every digest`, floorFn, apart);
    const toFloor = againstFloor(() => lib.requestDigests(bytes, opts), floorFn, raw, floor);
    rows.push({ ...raw, baseline: js.label, ratio: js.p50 / raw.p50, floorRatio: toFloor.ratio, floorPaired: toFloor });
    rows.push({ ...js, baseline: js.label, ratio: 1 });
    rows.push({ ...floor, baseline: js.label, ratio: js.p50 / floor.p50 });
    const against = `${js.label} ${(js.p50 * 1000).toFixed(1)} µs`;
    targets.push(makeTarget({ label: `requestDigests, raw M ${shape} body: time / the floor's (lower is closer)`, unit: 'x', value: toFloor.ratio, op: '<=', goal: 1.5, baseline: floorRoundsNote(toFloor, us), paired: pairedFigures(toFloor) }));
    targets.push(makeTarget({ label: `requestDigests, raw M ${shape} body (${bytes.length} B), new messages, tool list seen before, p50`, unit: 'µs', value: raw.p50 * 1000, baseline: against }));
    const speed = { label: `requestDigests, raw M ${shape} body: speed vs the JavaScript pipeline`, unit: 'x', value: js.p50 / raw.p50, baseline: against };
    targets.push(makeTarget(goal === null ? speed : { ...speed, op: '>=', goal }));
  }
  return { rows, targets, bytesPerRecording };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const lib = await import('../dist/index.js');
  const { rows, targets } = await matchBench(lib, { quick: process.argv.includes('--quick') });
  for (const r of rows) console.log(`${r.label.padEnd(70)} p50 ${(r.p50 * 1000).toFixed(2)} µs  p99 ${(r.p99 * 1000).toFixed(2)} µs  ${r.ratio.toFixed(1)}x vs ${r.baseline}`);
  for (const t of targets) console.log(targetLine(t));
}

// The baseline pipeline of the keying rows: the reference normalizer on parsed JSON, then the
// best pure-JS hashing (safe-stable-stringify + node:crypto) for the key and the path chain.
/**
 * The floor of requestDigests for one body: the SHA-256 digests its result holds (the request
 * key, each message hash, each path-chain link, the signature digest), by node:crypto's one-shot
 * hash from the exact bytes each covers, prepared here, outside the timing. Returns the timed
 * closure; it is checked against requestKeys first.
 */
export function requestFloor(lib, bytes, opts) {
  const n = lib.normalizeRequest(JSON.parse(Buffer.from(bytes).toString('utf8')), opts);
  const want = lib.requestKeys(bytes, opts);
  const view = lib.canonicalize(n.view);
  const each = n.messages.map((m) => lib.canonicalize(m));
  const sig = lib.canonicalize(want.signature);
  const links = [];
  let path = want.messageHashes[0];
  for (let i = 1; i < each.length; i++) {
    links.push(Buffer.from(`${path}:${want.messageHashes[i]}`));
    path = want.pathHashes[i];
  }
  const h = (b) => nodeHash('sha256', b, 'hex');
  const fn = () => {
    const messageHashes = each.map(h);
    const pathHashes = [messageHashes[0], ...links.map(h)];
    return { key: h(view), messageHashes, pathHashes, signatureDigest: h(sig) };
  };
  const got = fn();
  if (got.key !== want.key || got.pathHashes.join() !== want.pathHashes.join() || got.signatureDigest !== want.signatureDigest) throw new Error('bench: the floor of requestDigests disagrees with requestKeys');
  return fn;
}

export function jsKeyAndChain(lib, bytes, opts) {
  const n = lib.normalizeRequest(JSON.parse(Buffer.from(bytes).toString('utf8')), opts);
  const key = hex(stringify(n.view));
  const paths = [];
  for (const m of n.messages) {
    const h = hex(stringify(m));
    paths.push(paths.length ? hex(`${paths[paths.length - 1]}:${h}`) : h);
  }
  return [key, paths];
}
