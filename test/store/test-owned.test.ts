// A store several tests share (a tape per test file, a `name` function giving tests one tape):
// a writer opened for a test stamps its records with the test, and a test replays its own
// recordings of a request, in the order it made them, whoever recorded before, beside or after
// it. Records that name no test (tapes written before) are served as before. All failed before
// the `test` option: every test got the first recording of a request the tests shared.
import { afterAll, describe, expect, it } from 'vitest';
import type { RecordBackend } from '../../src/store/backend.ts';
import { MemoryBackend } from '../../src/store/backends/memory.ts';
import { RedisBackend } from '../../src/store/backends/redis-backend.ts';
import { TapeBackend } from '../../src/store/backends/tape.ts';
import { RecordCollection, retryRun, type CollectionOptions, type RecordKind } from '../../src/store/collection.ts';
import type { TapeMode } from '../../src/store/mode.ts';
import { ReplayCache } from '../../src/store/replay-cache.ts';
import { tapeSuite } from './setup.ts';
import { redisMissing, startRedis } from '../redis/harness.mjs';
import '../redis/setup.ts';

const { fresh } = tapeSuite('test-owned');

interface Rec {
  v: 1;
  key: string;
  n: number;
}

const kind: RecordKind<Rec> = {
  name: 'test record',
  keysOf: (head) => (typeof head.key === 'string' && head.kind === undefined ? head.key : undefined),
  is: (v): v is Rec => v !== null && typeof v === 'object' && typeof (v as Rec).key === 'string',
};

const backends: { name: string; make(): RecordBackend; again(b: RecordBackend): RecordBackend }[] = [
  { name: 'tape', make: () => new TapeBackend(fresh()), again: (b) => new TapeBackend((b as TapeBackend).path) },
  { name: 'memory', make: () => new MemoryBackend(), again: (b) => b },
];

// A Redis namespace shared by tests (workers on one `per: 'file'` namespace), on a real
// redis-server when one is installed (test/redis/setup.ts says what to install otherwise).
const redis = redisMissing() ? undefined : await startRedis();
afterAll(async () => {
  await redis?.stop();
});
let namespaces = 0;
if (redis) {
  backends.push({
    name: 'redis',
    make: () => new RedisBackend(redis.url, { namespace: `test-owned-${process.pid}-${namespaces++}` }),
    again: (b) => new RedisBackend(redis.url, { namespace: (b as RedisBackend).namespace }),
  });
}

// Built as a variable: the same call compiles against a collection without the option.
const open = (b: RecordBackend, mode: TapeMode, test: string | undefined, run = 'run-1') => {
  const opts: CollectionOptions<Rec> = { mode, kind, run, ...(test !== undefined ? { test } : {}) };
  return RecordCollection.open(b, opts);
};
const rec = (key: string, n: number): Rec => ({ v: 1, key, n });
async function stored(b: RecordBackend): Promise<Record<string, unknown>[]> {
  const r = await b.load({ create: false });
  return r.table ? Array.from({ length: r.table.length }, (_, i) => r.table!.record(i).value() as Record<string, unknown>) : r.records.map((x) => x.value() as Record<string, unknown>);
}
/** What a replay serves each test for `key`, `calls` times. */
async function replayed(b: RecordBackend, tests: readonly string[], key: string, calls = 1, mode: TapeMode = 'replay'): Promise<Record<string, (number | undefined)[]>> {
  const out: Record<string, (number | undefined)[]> = {};
  for (const t of tests) {
    const r = await open(b, mode, t);
    out[t] = Array.from({ length: calls }, () => r.next(key)?.n);
    await r.close();
  }
  return out;
}

describe.each(backends)('a store tests share, on the $name backend', (bc) => {
  it('three tests record the same request one after the other: each replays its own answer', async () => {
    const b = bc.make();
    for (const [t, n] of [['one', 61], ['two', 62], ['three', 63]] as const) {
      const w = await open(bc.again(b), 'record', t);
      await w.append('q', rec('q', n));
      await w.close();
    }
    // Each record names its test; its repeat counts that test's recordings of the request.
    expect((await stored(b)).map((r) => [r.test, r.repeat, r.n])).toEqual([['one', 0, 61], ['two', 0, 62], ['three', 0, 63]]);
    expect(await replayed(bc.again(b), ['one', 'two', 'three'], 'q')).toEqual({ one: [61], two: [62], three: [63] });
    // The order the tests replay in does not matter.
    expect(await replayed(bc.again(b), ['three', 'one', 'two'], 'q')).toEqual({ three: [63], one: [61], two: [62] });
  });

  it('tests recording at the same time, each a request twice: each replays its own two, in its own order', async () => {
    const b = bc.make();
    const ws = await Promise.all(['one', 'two', 'three'].map((t) => open(bc.again(b), 'record', t)));
    // Interleaved appends, as concurrent tests (or workers) make them.
    await Promise.all(ws.map((w, i) => w.append('q', rec('q', 10 * (i + 1) + 1))));
    await Promise.all(ws.map((w, i) => w.append('q', rec('q', 10 * (i + 1) + 2))));
    await Promise.all(ws.map((w) => w.close()));
    expect(await replayed(bc.again(b), ['one', 'two', 'three'], 'q', 3)).toEqual({ one: [11, 12, undefined], two: [21, 22, undefined], three: [31, 32, undefined] });
  });

  it('records that name no test (tapes written before) replay as before: in recorded order', async () => {
    const b = bc.make();
    const old = await open(b, 'record', undefined);
    await old.append('q', rec('q', 1));
    await old.append('q', rec('q', 2));
    await old.close();
    expect((await stored(b)).map((r) => 'test' in r)).toEqual([false, false]);
    expect(await replayed(bc.again(b), ['one', 'two'], 'q', 2)).toEqual({ one: [1, 2], two: [1, 2] });
  });

  it('record mode re-records one test: only that test\'s recordings (and those naming no test) are replaced', async () => {
    const b = bc.make();
    const old = await open(b, 'record', undefined, 'run-0');
    await old.append('q', rec('q', 0));
    await old.close();
    for (const [t, n] of [['one', 1], ['two', 2], ['three', 3]] as const) {
      const w = await open(bc.again(b), 'record', t, 'run-1');
      await w.append('q', rec('q', n));
      await w.close();
    }
    // The first test of the run replaced the record of the ended run that named no test.
    expect((await stored(b)).map((r) => r.n)).toEqual([1, 2, 3]);
    // `-t two` in record mode: a later run that re-records the second test alone.
    const two = await open(bc.again(b), 'record', 'two', 'run-2');
    await two.append('q', rec('q', 22));
    expect((await two.close()).replaced).toHaveLength(1);
    expect((await stored(b)).map((r) => r.n)).toEqual([1, 3, 22]);
    expect(await replayed(bc.again(b), ['one', 'two', 'three'], 'q')).toEqual({ one: [1], two: [22], three: [3] });
  });

  it('record mode compares a re-recording with the test\'s own recording only', async () => {
    const b = bc.make();
    const old = await open(b, 'record', undefined, 'run-0');
    await old.append('q', rec('q', 0));
    await old.close();
    const one = await open(bc.again(b), 'record', 'one', 'run-1');
    await one.append('q', rec('q', 1));
    await one.close();
    // One that names no test would be kept naming none, so it is never offered for reuse.
    const two = await open(bc.again(b), 'record', 'two', 'run-2');
    expect(two.previous('q', 0)).toBeUndefined();
    await two.close();
    const again = await open(bc.again(b), 'record', 'one', 'run-3');
    expect(again.previous('q', 0)?.n).toBe(1);
    again.reuse('q', 0);
    await again.close();
    expect((await stored(b)).map((r) => [r.test, r.n])).toEqual([['one', 1]]);
  });

  it('update mode: a request another test recorded is replayed from its recording (nothing added), and so in replay', async () => {
    const b = bc.make();
    const one = await open(b, 'update', 'one');
    expect(one.next('q')).toBeUndefined();
    await one.append('q', rec('q', 1));
    await one.close();
    const two = await open(bc.again(b), 'update', 'two');
    expect(two.next('q')?.n).toBe(1);
    await two.close();
    expect((await stored(b)).map((r) => [r.test, r.n])).toEqual([['one', 1]]);
    expect(await replayed(bc.again(b), ['one', 'two'], 'q')).toEqual({ one: [1], two: [1] });
  });

  it('update mode, past the other test\'s recordings (strict order): the test\'s recording continues theirs, so replay serves the same sequence', async () => {
    const b = bc.make();
    const one = await open(b, 'record', 'one');
    await one.append('q', rec('q', 1));
    await one.close();
    const two = await open(bc.again(b), 'update', 'two');
    expect(two.next('q')?.n).toBe(1);
    expect(two.next('q')).toBeUndefined();
    await two.append('q', rec('q', 2));
    await two.close();
    expect((await stored(b)).map((r) => [r.test, r.repeat, r.n])).toEqual([['one', 0, 1], [undefined, 1, 2]]);
    expect(await replayed(bc.again(b), ['one', 'two'], 'q', 2)).toEqual({ one: [1, undefined], two: [1, 2] });
  });

  it('a test\'s own recordings number their repeats among its own, from 0, whoever recorded the request before', async () => {
    const b = bc.make();
    const one = await open(b, 'record', 'one');
    await one.append('q', rec('q', 1));
    await one.close();
    const two = await open(bc.again(b), 'record', 'two');
    await two.append('q', rec('q', 21));
    await two.append('q', rec('q', 22));
    await two.close();
    expect((await stored(b)).map((r) => [r.test, r.repeat])).toEqual([['one', 0], ['two', 0], ['two', 1]]);
  });

  it('a retry of a test in the same run replaces what its earlier attempts recorded, and no other test\'s', async () => {
    const b = bc.make();
    // Another test's writer of the run stays open throughout: the run is live, so only the retry
    // rule can replace the failed attempts' recordings.
    const other = await open(b, 'record', 'two');
    await other.append('q', rec('q', 5));
    const first = await open(bc.again(b), 'record', 'one');
    await first.append('q', rec('q', 1));
    await first.close();
    const retry = await open(bc.again(b), 'record', 'one', retryRun('run-1', 1));
    await retry.append('q', rec('q', 2));
    await retry.append('q', rec('q', 3));
    await retry.close();
    expect(await replayed(bc.again(b), ['one'], 'q', 2)).toEqual({ one: [2, 3] });
    const again = await open(bc.again(b), 'record', 'one', retryRun('run-1', 2));
    await again.append('q', rec('q', 4));
    await again.close();
    await other.close();
    expect(await replayed(bc.again(b), ['one', 'two'], 'q')).toEqual({ one: [4], two: [5] });
    expect((await stored(b)).map((r) => [r.test, r.n])).toEqual([['two', 5], ['one', 4]]);
  });

  it('an earlier attempt is one of the same run: a retry leaves a run still open for the test alone', async () => {
    const b = bc.make();
    const elsewhere = await open(b, 'record', 'one', 'run-0');
    await elsewhere.append('q', rec('q', 7));
    const retry = await open(bc.again(b), 'record', 'one', retryRun('run-1', 1));
    await retry.append('q', rec('q', 8));
    await retry.close();
    await elsewhere.close();
    expect((await stored(b)).map((r) => r.n)).toEqual([7, 8]);
  });

  it('a retry\'s recordings belong to its run: a writer of that run for no test leaves them alone', async () => {
    const b = bc.make();
    const plain = await open(b, 'record', undefined);
    const retry = await open(bc.again(b), 'record', 'one', retryRun('run-1', 1));
    await retry.append('q', rec('q', 2));
    await retry.close();
    const again = await open(bc.again(b), 'record', undefined);
    await again.append('q', rec('q', 9));
    await again.close();
    await plain.close();
    expect((await stored(b)).map((r) => r.n)).toEqual([2, 9]);
  });
});

describe('ReplayCache for a test on a shared tape', () => {
  it('each test replays its own value of a shared request', async () => {
    const path = fresh();
    const request = { model: 'm', messages: [{ role: 'user', content: 'shared q' }] };
    for (const [t, v] of [['one', '#61'], ['two', '#62'], ['three', '#63']] as const) {
      const c = await ReplayCache.open(path, { mode: 'record', run: 'run-1', test: t });
      await c.put(request, v);
      await c.close();
    }
    const got: Record<string, unknown> = {};
    for (const t of ['one', 'two', 'three']) {
      const c = await ReplayCache.open(path, { mode: 'replay', test: t });
      got[t] = await c.get(request);
      await c.close();
    }
    expect(got).toEqual({ one: '#61', two: '#62', three: '#63' });
  });
});
