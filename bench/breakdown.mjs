#!/usr/bin/env node
// Where the time of a core row goes: `node bench/breakdown.mjs [workload ...]` (after a build).
//
// For each path-hash workload it times, on the wasm-simd engine and interleaved so that the
// shared machine's noise hits every part alike, the stages of one pathHashes() call:
//   walk         writing the list's text into wasm memory by walking it (src/core/walk.ts:
//                strings copied as UTF-16 units), objects only
//   transfer     writing the bytes into wasm memory, raw bytes only
//   canonical    parse + canonicalize + element spans in wasm, no hashing (for objects: with
//                the strings' escaping and UTF-8 encoding)
//   sha lanes    the message digests, 4 SIMD lanes
//   chain        the path chain (3 sequential compressions per message)
//   whole        the whole canonical text's digest (node:crypto, SHA-NI)
//   js           what is left of the end-to-end call (hex to strings, checks)
// beside the floor of bench/run.mjs (node:crypto one-shot SHA-256 of the exact bytes each digest
// covers, prepared beforehand), timed in the same rounds, and each total's distance to it;
// and the row's limit on this machine: the baseline's time over the time of the parts no
// engine here can avoid (for objects, reading the value: every member visited and every string
// copied out of the JavaScript heap once, which is what the walk does; SHA-256 of the canonical
// bytes at the measured in-wasm lane and chain rates, the whole digest on node:crypto). For
// comparison it also times the JSON.stringify path that values the walk declines still take:
// JSON.stringify of the list in pieces, and that plus writing its text into memory. Medians of
// many runs.
//
// `node bench/breakdown.mjs requests` splits requestDigests() on the M request bodies of every
// shape (the chat family's, Gemini's, Converse's and Ollama's on their routes) the same way:
// indexing the body and the core's view of it (its kept tool list skipped, as the path does;
// the whole body's index apart; the view's messages are canonical as the core writes them, made so
// in place where the body's values were not), SHA-256 of what the key needs (each canonical
// message, the chain, the whole canonical view: node:crypto, as the path does), and the rest
// (the JavaScript around the calls: the result's strings, the kept top level and tool list,
// attachment holes filled), beside the floor of bench/match.mjs and against
// the JavaScript pipeline; a conversation's first request (its tool list never seen) apart.

import { hash as nodeHash } from 'node:crypto';
import canonicalizeRef from 'canonicalize';

import { buildWorkload } from './workloads.mjs';
import { BASELINES } from './baselines.mjs';

const lib = await import('../dist/index.js');
const { WasmEngine } = await import('../dist/core/wasm.js');
const { stringifyPieces, ArrayText } = await import('../dist/core/pieces.js');
const { ValueText } = await import('../dist/core/walk.js');

const H_MESSAGES = 2;
const H_CHAIN = 4;
const H_TRUSTED_UTF8 = 64;
const H_SPANS = 128;
const H_STRINGIFIED = 256;

const names = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const requests = names.includes('requests');
const workloads = names.length ? names.filter((n) => n !== 'requests') : ['M', 'L', 'L-intl', 'L-esc', 'SMALL10K-path', 'STR10K-path'];
const ROUNDS = Number(process.env.ROUNDS ?? 31);

lib.setBackend('wasm-simd');
const engine = new WasmEngine('wasm-simd');
const x = engine.x;
const r = engine.r;
const baseline = BASELINES[0];

function median(a) {
  const s = [...a].sort((p, q) => p - q);
  return s[s.length >> 1];
}

/** Times each stage ROUNDS times, interleaved; returns medians in ms. */
function timeStages(stages) {
  const out = Object.fromEntries(Object.keys(stages).map((k) => [k, []]));
  for (let i = 0; i < 3; i++) for (const f of Object.values(stages)) f();
  for (let round = 0; round < ROUNDS; round++) {
    for (const [k, f] of Object.entries(stages)) {
      const t0 = performance.now();
      f();
      out[k].push(performance.now() - t0);
    }
  }
  return Object.fromEntries(Object.entries(out).map(([k, v]) => [k, median(v)]));
}

const encoder = new TextEncoder();
/** The floor of bench/run.mjs for a path-hash row: every digest of the result from prepared bytes. */
function floorOf(msgs) {
  const each = msgs.map((m) => encoder.encode(canonicalizeRef(m)));
  const links = [];
  let path = nodeHash('sha256', each[0], 'hex');
  for (let i = 1; i < each.length; i++) {
    links.push(encoder.encode(`${path}:${nodeHash('sha256', each[i], 'hex')}`));
    path = nodeHash('sha256', links[i - 1], 'hex');
  }
  const whole = encoder.encode(canonicalizeRef(msgs));
  return () => {
    const m = new Array(each.length);
    for (let i = 0; i < each.length; i++) m[i] = nodeHash('sha256', each[i], 'hex');
    const p = new Array(each.length);
    p[0] = m[0];
    for (let i = 0; i < links.length; i++) p[i + 1] = nodeHash('sha256', links[i], 'hex');
    return [m, p, nodeHash('sha256', whole, 'hex')];
  };
}

const fmt = (ms) => (ms >= 1 ? `${ms.toFixed(2)} ms` : `${(ms * 1000).toFixed(1)} µs`);

for (const name of workloads) {
  const w = buildWorkload(name);
  const msgs = w.messages;
  const bytes = w.messagesBytes;
  // As the JSON.stringify path makes it: a long list in pieces, made as they are written.
  const textOf = () => stringifyPieces(msgs) ?? new ArrayText([JSON.stringify(msgs)]);
  const u32 = () => new Uint32Array(x.memory.buffer);
  const ignore = [];
  // Object path: walk the list once to learn its text's size, then time canonical() and digests().
  const walk = () => engine.load(new ValueText(msgs), ignore);
  const nObj = walk();
  const canonObj = () => x.canonical(nObj, 0, H_SPANS | H_TRUSTED_UTF8 | H_STRINGIFIED);
  if (canonObj() !== 0) throw new Error(`breakdown: ${name}: canonical failed`);
  const count = u32()[r + 5];
  const outLen = u32()[r + 4];
  const spans = u32()[r + 6] >>> 2;
  let blocks = 0;
  for (let i = 0; i < count; i++) blocks += Math.floor((u32()[spans + 2 * i + 1] + 8) / 64) + 1;
  const whole = () => {
    const m = new Uint8Array(x.memory.buffer);
    const ptr = u32()[r + 3];
    return nodeHash('sha256', m.subarray(ptr, ptr + outLen), 'hex');
  };
  const obj = timeStages({
    walk,
    canonical: () => {
      walk();
      canonObj();
    },
    stringify: () => textOf().each(() => {}),
    // Stringify and write, piece by piece: the JSON.stringify path's share.
    stringifyWrite: () => engine.load(textOf(), ignore),
    lanes: () => {
      walk();
      canonObj();
      x.digests(H_MESSAGES);
    },
    lanesChain: () => {
      walk();
      canonObj();
      x.digests(H_MESSAGES | H_CHAIN);
    },
    whole,
    total: () => lib.pathHashes(msgs),
    floor: floorOf(msgs),
    baseline: () => baseline.fullSet(msgs),
  });
  const raw = timeStages({
    transfer: () => engine.load(bytes, ignore),
    canonical: () => {
      engine.load(bytes, ignore);
      x.canonical(bytes.length, 0, H_SPANS);
    },
    total: () => lib.pathHashes(bytes),
    floor: floorOf(msgs),
    baseline: () => baseline.fullSetRaw(bytes),
  });
  const canonicalObj = obj.canonical - obj.walk;
  obj.lanes -= obj.canonical;
  obj.lanesChain -= obj.canonical;
  const canonicalRaw = raw.canonical - raw.transfer;
  const chain = obj.lanesChain - obj.lanes;
  // Elements on node:crypto (M's long messages) are hashed there, not in lanes: see wasm.ts.
  const sha = obj.lanes + chain + obj.whole;
  const limitObj = obj.walk + sha;
  const limitRaw = sha;
  console.log(`== ${name}: ${count} messages, ${(bytes.length / 1e3).toFixed(1)} KB in, ${(nObj / 1e3).toFixed(1)} KB walked, ${(outLen / 1e3).toFixed(1)} KB canonical, ${blocks} message blocks, ${3 * Math.max(0, count - 1)} chain compressions`);
  console.log(`  object: total ${fmt(obj.total)} = walk ${fmt(obj.walk)} + canonical ${fmt(canonicalObj)} + sha lanes ${fmt(obj.lanes)} + chain ${fmt(chain)} + whole ${fmt(obj.whole)} + js ${fmt(obj.total - obj.canonical - obj.lanesChain - obj.whole)}`);
  console.log(`          JSON.stringify path instead of the walk: stringify ${fmt(obj.stringify)}, + write into wasm ${fmt(obj.stringifyWrite)}`);
  console.log(`          baseline ${fmt(obj.baseline)}: ${(obj.baseline / obj.total).toFixed(2)}x now; limit (walk + SHA-256) ${fmt(limitObj)}: ${(obj.baseline / limitObj).toFixed(2)}x`);
  console.log(`  raw:    total ${fmt(raw.total)} = transfer ${fmt(raw.transfer)} + canonical ${fmt(canonicalRaw)} + SHA-256 ${fmt(sha)} + js ${fmt(raw.total - raw.canonical - sha)}`);
  console.log(`          baseline ${fmt(raw.baseline)}: ${(raw.baseline / raw.total).toFixed(2)}x now; limit (SHA-256 only) ${fmt(limitRaw)}: ${(raw.baseline / limitRaw).toFixed(2)}x`);
  console.log(`  floor:  ${fmt(obj.floor)} (object rounds), ${fmt(raw.floor)} (raw rounds): object ${(obj.total / obj.floor).toFixed(2)}x the floor, raw ${(raw.total / raw.floor).toFixed(2)}x`);
  console.log(`  rates:  ${((obj.lanes * 1e6) / blocks).toFixed(0)} ns per message block in 4 lanes; ${count > 1 ? ((chain * 1e6) / (3 * (count - 1))).toFixed(0) : '-'} ns per chain compression; node:crypto whole ${((outLen / 1e6) / (obj.whole / 1e3) / 1e3).toFixed(2)} GB/s`);
}


if (requests) {
  const { coreRequestView, jsonTape } = await import('../dist/core/index.js');
  const { findKeptTools } = await import('../dist/match/raw-keys/tools-cache.js');
  const { jsKeyAndChain, requestFloor } = await import('./match.mjs');
  const { converseBody, geminiBody, newToolLists, ollamaChatBody, requestBodies } = await import('./workloads.mjs');
  // The core's view of each shape as the path asks for it (its kept root tools skipped where it
  // keeps them).
  const bodies = [
    ...Object.entries(requestBodies()).map(([shape, { bytes }]) => [shape, bytes, undefined, (b) => coreRequestView(b, 0, findKeptTools(b)?.skip)]),
    ['gemini', geminiBody().bytes, { endpoint: geminiBody().endpoint }, (b) => coreRequestView(b, 7, findKeptTools(b)?.skip)],
    ['bedrock-converse', converseBody().bytes, { endpoint: converseBody().endpoint }, (b) => coreRequestView(b, 6)],
    ['ollama-chat', ollamaChatBody().bytes, { endpoint: ollamaChatBody().endpoint }, (b) => coreRequestView(b, 8, findKeptTools(b)?.skip)],
  ];
  for (const [shape, bytes, opts, view] of bodies) {
    const ref = lib.requestKeys(bytes, opts);
    const messages = ref.messages.map((m) => lib.canonicalize(m));
    const canonicalView = lib.canonicalize(ref.view);
    const sha = () => {
      let prev = '';
      for (let i = 0; i < messages.length; i++) {
        const m = nodeHash('sha256', messages[i], 'hex');
        prev = i === 0 ? m : nodeHash('sha256', `${prev}:${m}`, 'hex');
      }
      return nodeHash('sha256', canonicalView, 'hex');
    };
    const fresh = shape === 'openai-chat' || shape === 'openai-chat-tools' ? newToolLists(shape, 16) : null;
    let k = 0;
    // The stages interleaved with each other; the baseline apart, interleaved with the total
    // alone: its ~1 MB of garbage per run would leave every stage after it a cold cache.
    const t = timeStages({
      total: () => lib.requestDigests(bytes, opts),
      ...(fresh ? { first: () => lib.requestDigests(fresh[(k = (k + 1) % fresh.length)]) } : {}),
      index: () => jsonTape(bytes),
      // As the path calls it once the tool list is kept: the list skipped by both.
      indexViewKept: () => view(bytes),
      sha,
      floor: requestFloor(lib, bytes, opts),
    });
    const against = timeStages({ total: () => lib.requestDigests(bytes, opts), baseline: () => jsKeyAndChain(lib, bytes, opts) });
    // The baseline on the stages' time scale (the same ratio to the total), for the limits.
    t.baseline = (against.baseline * t.total) / against.total;
    const viewLabel = "index and the core's view";
    console.log(`== requestDigests, raw M ${shape} body: ${(bytes.length / 1e3).toFixed(1)} KB, ${messages.length} messages, canonical view ${(canonicalView.length / 1e3).toFixed(1)} KB`);
    console.log(`  total ${fmt(t.total)} = ${viewLabel}, kept tools skipped ${fmt(t.indexViewKept)} + SHA-256 ${fmt(t.sha)} + the rest (JavaScript) ${fmt(t.total - t.indexViewKept - t.sha)}${fresh ? `; tool list never seen ${fmt(t.first)}` : ''}`);
    console.log(`  floor ${fmt(t.floor)}: total ${(t.total / t.floor).toFixed(2)}x the floor; the whole body's index alone ${fmt(t.index)}`);
    console.log(`  baseline ${fmt(against.baseline)} (interleaved with the total: ${fmt(against.total)}): ${(against.baseline / against.total).toFixed(2)}x now${fresh ? ` (${(t.baseline / t.first).toFixed(2)}x on a first request)` : ''}; limit (SHA-256 only) ${(t.baseline / t.sha).toFixed(2)}x, with the index and view as now ${(t.baseline / (t.sha + t.indexViewKept)).toFixed(2)}x`);
  }
}
