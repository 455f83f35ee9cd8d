// Conversation tree and replay store rows, each against a baseline measured in the same
// run:
//   - findOrCreate on a 10,000-message conversation that matches all but its last message:
//     the tree walk after hashing (target <= 50 µs), against walking the prefix one Map lookup
//     per message;
//   - the same end to end from the request's raw bytes, against pathHashes on the same bytes
//     (target <= 1.2x: the tree adds almost nothing to hashing);
//   - ReplayStore get and put p50 with 1,000,000 entries, against a plain Map holding the same
//     keys and bodies (which has no LRU order, TTL or byte copies).
// Every ratio is this row's time over its baseline's time (lower is better).
// Run by bench/run.mjs after the tape rows (filter "tree"), or alone: node bench/tree.mjs [--quick].
import { makeTarget, targetLine } from './targets.mjs';
import { createHash } from 'node:crypto';

function percentile(sorted, p) {
  const idx = (sorted.length - 1) * p;
  const lo = Math.floor(idx);
  const hi = Math.ceil(idx);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (idx - lo);
}
const median = (xs) => percentile([...xs].sort((a, b) => a - b), 0.5);

/** A 10,000-message conversation: alternating user/assistant turns of realistic length. */
function conversation(n) {
  const out = [{ role: 'system', content: 'You are a careful assistant. Answer in one short paragraph.' }];
  for (let i = 1; i < n; i++) {
    out.push(
      i % 2
        ? { role: 'user', content: `Turn ${i}: and what about case ${i}? Keep it brief — ünïcödé ✓` }
        : { role: 'assistant', content: `For case ${i - 1}, the answer is ${(i * 7919) % 1000}. It follows from the previous step.` },
    );
  }
  return out;
}

export async function treeBench(lib, _store, { quick = false } = {}) {
  const rows = [];
  const targets = [];
  const N = 10_000;
  const base = conversation(N);
  const prefix = base.slice(0, N - 1);
  const variants = quick ? 10 : 60;
  // Each variant differs only in its last message, so each findOrCreate walks 9,999 messages and
  // attaches one new node (a fresh branch every time, never a repeat of the previous call).
  const last = (k) => ({ role: 'user', content: `A different last question, number ${k}.` });
  const bodies = Array.from({ length: variants }, (_, k) => new TextEncoder().encode(JSON.stringify([...prefix, last(k)])));
  const hashes = bodies.map((b) => lib.pathHashes(b));
  const prefixHashes = lib.pathHashes(prefix);

  const freshTree = () => {
    const tree = new lib.ConversationTree();
    tree.findOrCreate(prefixHashes);
    return tree;
  };

  // --- the walk after hashing
  {
    const rounds = quick ? 3 : 15;
    const walk = [];
    const naive = [];
    for (let r = 0; r < rounds; r++) {
      const tree = freshTree();
      // Baseline: the O(depth) walk, one path-hash Map lookup per message, on the same index.
      const index = new Map();
      for (let i = 0; i < prefixHashes.pathHashes.length; i++) index.set(prefixHashes.pathHashes[i], i);
      // The two loops run apart, so neither pays for the other's cache footprint.
      for (let k = 0; k < variants; k++) {
        const t0 = performance.now();
        const res = tree.findOrCreate(hashes[k]);
        walk.push(performance.now() - t0);
        if (res.matched !== N - 1 || res.created !== 1) throw new Error(`bench: findOrCreate matched ${res.matched}, created ${res.created}`);
      }
      for (let k = 0; k < variants; k++) {
        const h = hashes[k];
        const t0 = performance.now();
        let i = 0;
        while (i < h.pathHashes.length && index.get(h.pathHashes[i]) === i) i++;
        naive.push(performance.now() - t0);
        if (i !== N - 1) throw new Error('bench: naive walk disagrees');
      }
    }
    const w = median(walk) * 1000;
    const b = median(naive) * 1000;
    rows.push({ label: `findOrCreate after hashing, ${N.toLocaleString('en-US')} msgs, all but last known (µs)`, us: w, baseline: 'walk: one Map lookup per message', ratio: w / b });
    rows.push({ label: 'walk: one Map lookup per message', us: b, baseline: 'walk: one Map lookup per message', ratio: 1 });
    targets.push(makeTarget({ label: `findOrCreate tree walk after hashing, ${N.toLocaleString('en-US')} messages, median`, unit: 'µs', value: w, op: '<=', goal: 50, baseline: `one Map lookup per message ${b.toFixed(1)} µs` }));
  }

  // --- end to end from raw bytes vs pathHashes on the same bytes, interleaved
  {
    const rounds = quick ? 2 : 6;
    const e2e = [];
    const hashOnly = [];
    // Warm both paths before timing.
    for (let k = 0; k < Math.min(variants, 5); k++) {
      lib.pathHashes(bodies[k]);
      freshTree().findOrCreate(bodies[k]);
    }
    for (let r = 0; r < rounds; r++) {
      const tree = freshTree();
      for (let k = 0; k < variants; k++) {
        const order = (k + r) % 2;
        for (let s = 0; s < 2; s++) {
          const t0 = performance.now();
          if ((s ^ order) === 0) {
            const res = tree.findOrCreate(bodies[k]);
            e2e.push(performance.now() - t0);
            if (res.matched !== N - 1) throw new Error('bench: end-to-end findOrCreate did not match the prefix');
          } else {
            lib.pathHashes(bodies[k]);
            hashOnly.push(performance.now() - t0);
          }
        }
      }
    }
    const e = median(e2e);
    const h = median(hashOnly);
    const mb = (bodies[0].length / 1e6).toFixed(2);
    rows.push({ label: `findOrCreate(raw bytes, ${mb} MB, ${N.toLocaleString('en-US')} msgs) (ms)`, ms: e, baseline: 'pathHashes(same bytes)', ratio: e / h });
    rows.push({ label: 'pathHashes(same bytes)', ms: h, baseline: 'pathHashes(same bytes)', ratio: 1 });
    targets.push(makeTarget({ label: 'findOrCreate end to end, time / time of pathHashes on the same bytes (lower is faster)', unit: 'x', value: e / h, op: '<=', goal: 1.2, baseline: `pathHashes(same bytes) ${h.toFixed(2)} ms` }));
  }

  // --- ReplayStore with 1,000,000 entries
  {
    const M = quick ? 100_000 : 1_000_000;
    const tokens = new Array(M);
    for (let i = 0; i < M; i++) tokens[i] = createHash('sha256').update(`doc-${i}`).digest('hex');
    const body = new TextEncoder().encode('{"answer":"The same small JSON body, 64 bytes long, ünïcödé"}\n');
    const query = 'What does section 4 say about retention?';
    const store = new lib.ReplayStore({ maxEntries: M, ttlMs: 0, env: {} });
    const map = new Map();
    for (let i = 0; i < M; i++) {
      store.put({ token: tokens[i], documentId: `doc-${i}`, query, body });
      map.set(tokens[i] + query, body.slice());
    }
    if (store.size !== M) throw new Error(`bench: replay store holds ${store.size}, expected ${M}`);
    // p50 of per-operation time over batches of 1,000 operations (a single operation is below
    // the timer's resolution); keys picked pseudo-randomly so caches do not flatter either side.
    const B = 1_000;
    const batches = quick ? 40 : 200;
    const pick = (j) => (j * 7919 + 17) % M;
    const time = (fn) => {
      const per = [];
      for (let b = 0; b < batches; b++) {
        const t0 = performance.now();
        for (let j = 0; j < B; j++) fn(b * B + j);
        per.push(((performance.now() - t0) * 1000) / B);
      }
      return median(per);
    };
    let found = 0;
    const get = time((j) => {
      const t = tokens[pick(j)];
      if (store.get(t, query)) found++;
    });
    const mapGet = time((j) => {
      const t = tokens[pick(j)];
      if (map.get(t + query)) found++;
    });
    let next = 0;
    // Puts at capacity: each one evicts the least recently used entry.
    const put = time(() => {
      const i = next++;
      store.put({ token: createTokenFast(i), documentId: `new-${i}`, query, body });
    });
    next = 0;
    // The baseline evicts by key (it knows the oldest from the insertion order of `tokens`):
    // what LRU bookkeeping costs on top of a Map is then the difference.
    const mapPut = time(() => {
      const i = next++;
      map.set(createTokenFast(i) + query, body.slice());
      map.delete(tokens[i % M] + query);
    });
    if (found === 0) throw new Error('bench: no replay hits');
    const label = `${M.toLocaleString('en-US')} entries`;
    rows.push({ label: `ReplayStore.get p50, ${label} (µs)`, us: get, baseline: 'Map.get, same keys', ratio: get / mapGet });
    rows.push({ label: 'Map.get, same keys', us: mapGet, baseline: 'Map.get, same keys', ratio: 1 });
    rows.push({ label: `ReplayStore.put p50 at capacity, ${label} (µs)`, us: put, baseline: 'Map.set + Map.delete', ratio: put / mapPut });
    rows.push({ label: 'Map.set + Map.delete', us: mapPut, baseline: 'Map.set + Map.delete', ratio: 1 });
    targets.push(makeTarget({ label: `ReplayStore get p50 with ${label}`, unit: 'µs', value: get, baseline: `Map.get ${mapGet.toFixed(2)} µs` }));
    targets.push(makeTarget({ label: `ReplayStore put p50 with ${label}`, unit: 'µs', value: put, baseline: `Map.set + Map.delete ${mapPut.toFixed(2)} µs` }));
  }
  return { rows, targets };
}

// Token-shaped keys for new puts, precomputed outside the timed region would cost memory for
// every iteration; a hex string of the counter padded to 64 characters is as cheap as it gets
// and still a valid token.
function createTokenFast(i) {
  return `e${i.toString(16)}`.padStart(64, 'f');
}

export function formatRow(r) {
  const v = r.ms !== undefined ? `${r.ms.toFixed(2)} ms` : `${r.us.toFixed(2)} µs`;
  return [r.label, v, r.label === r.baseline ? '(baseline)' : `${r.ratio.toFixed(2)}x`, r.baseline];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const lib = await import('../dist/index.js');
  const store = await import('../dist/store/index.js');
  const { rows, targets } = await treeBench(lib, store, { quick: process.argv.includes('--quick') });
  for (const r of rows) console.log(formatRow(r).join('  '));
  for (const t of targets) console.log(targetLine(t));
}
