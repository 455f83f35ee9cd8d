// The index a collection files a large store's recordings in at open without a string or an
// object per recording (src/store/head-index.ts): against a Map as the oracle, with keys made
// to share their hash, and through a collection of HTTP records on a tape file, where every
// key must still find its own recordings in order.
import { describe, expect, it } from 'vitest';
import { TapeBackend } from '../../src/store/backends/tape.ts';
import { RecordCollection } from '../../src/store/collection.ts';
import { HeadIndex, keyHash } from '../../src/store/head-index.ts';
import { inRecordOrder, sortedKeys } from '../../src/store/record-order.ts';
import { httpRecordKey, httpRecords, type HttpRecord } from '../../src/store/records.ts';
import { appendRecords, createTape } from '../../src/store/tape-file.ts';
import { KEY_SPEC_VERSION } from '../../src/providers/normalize.ts';
import { tapeSuite } from './setup.ts';

const { fresh } = tapeSuite('head-index');

/** A 64-hex key; `tail` fixes its last 16 digits, so keys that share it share their hash. */
function hexKey(i: number, tail?: string): string {
  const head = (i.toString(16).padStart(8, '0') + 'ab'.repeat(28)).slice(0, tail === undefined ? 64 : 48);
  return tail === undefined ? head : head + tail;
}

describe('HeadIndex', () => {
  it('finds every key it filed and no other, with a Map as the oracle, when many keys share a hash', () => {
    const keys: string[] = [];
    for (let i = 0; i < 3000; i++) keys.push(i % 3 === 0 ? hexKey(i, 'fedcba9876543210') : hexKey(i * 7919));
    const shared = keys.filter((k) => k.endsWith('fedcba9876543210'));
    expect(new Set(shared.map(keyHash)).size).toBe(1); // they do collide
    const index = new HeadIndex(keys.length);
    const oracle = new Map<string, number>();
    keys.forEach((k, i) => {
      const is = (j: number) => keys[j] === k;
      if (index.find(keyHash(k), is) >= 0) return;
      expect(index.add(keyHash(k), i)).toBe(true);
      if (!oracle.has(k)) oracle.set(k, i);
    });
    for (const [k, i] of oracle) expect(index.find(keyHash(k), (j) => keys[j] === k)).toBe(i);
    for (const absent of [hexKey(999_999, 'fedcba9876543210'), hexKey(123_456_789), 'not a key']) expect(index.find(keyHash(absent), (j) => keys[j] === absent)).toBe(-1);
  });

  it('refuses to fill past half of its table', () => {
    const index = new HeadIndex(4); // 16 slots
    let added = 0;
    for (let i = 0; i < 20; i++) if (index.add(keyHash(hexKey(i)), i)) added++;
    expect(added).toBe(8);
  });
});

describe('a collection of HTTP records filed by their heads', () => {
  const routeA = 'POST /v1/chat/completions';
  const routeB = 'POST /v1/responses';
  function record(route: string, key: string, repeat: number, n: number): unknown {
    const rec: HttpRecord & { repeat: number } = {
      v: 1,
      kind: 'http',
      match: 'llm',
      route,
      key,
      keyVersion: KEY_SPEC_VERSION,
      trace: key.split('').reverse().join(''),
      repeat,
      request: { method: 'POST', url: route.slice(5), headers: {}, body: { n } },
      response: { status: 200, headers: { 'content-type': 'application/json' }, body: new TextEncoder().encode(JSON.stringify({ n })) },
      recordedAt: new Date(Date.UTC(2026, 0, 1) + n * 1000).toISOString(),
      durationMs: 1,
    };
    return inRecordOrder(sortedKeys(rec));
  }

  it('serves each key its own recordings in order, when keys share a hash, repeat, or appear on two routes', async () => {
    const tape = fresh();
    await createTape(tape);
    // 400 keys sharing one hash, 400 others; every 10th recorded three times; every 7th also on routeB.
    const keys = Array.from({ length: 800 }, (_, i) => (i % 2 === 0 ? hexKey(i, '0123456789abcdef') : hexKey(i * 104729)));
    const records: unknown[] = [];
    const expected = new Map<string, number[]>();
    let n = 0;
    const add = (route: string, key: string, repeat: number) => {
      records.push(record(route, key, repeat, n));
      const list = expected.get(httpRecordKey(route, 'llm', key)) ?? [];
      list.push(n++);
      expected.set(httpRecordKey(route, 'llm', key), list);
    };
    keys.forEach((k, i) => {
      add(routeA, k, 0);
      if (i % 7 === 0) add(routeB, k, 0);
    });
    keys.forEach((k, i) => {
      if (i % 10 === 0) {
        add(routeA, k, 1);
        add(routeA, k, 2);
      }
    });
    await appendRecords(tape, records, { durable: false });
    const col = await RecordCollection.open(new TapeBackend(tape), { mode: 'replay', kind: httpRecords() });
    try {
      expect(col.size).toBe(records.length);
      for (const [key, ns] of expected) {
        expect(col.count(key)).toEqual({ recorded: ns.length, served: 0 });
        const served = ns.map(() => (col.next(key)?.request.body as { n: number }).n);
        expect(served).toEqual(ns);
        expect(col.next(key)).toBeUndefined(); // strict: past the last one
      }
      for (const absent of [hexKey(1, '0123456789abcdef'), hexKey(77)]) expect(col.next(httpRecordKey(routeA, 'llm', absent))).toBeUndefined();
      expect(col.next(httpRecordKey(routeB, 'llm', keys[1]!))).toBeUndefined(); // only every 7th is on routeB
      // Every recording loaded is found again by its index, with its own key.
      const seen: string[] = [];
      col.forEachLoaded((group, key, _at, i) => seen.push(group + (key ?? col.loadedKey(i))));
      expect(seen.length).toBe(records.length);
      expect(new Set(seen)).toEqual(new Set(expected.keys()));
    } finally {
      await col.close();
    }
  });
});
