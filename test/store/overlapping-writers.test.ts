// Record writers open on one store at once number their recordings of a key (`repeat`) by what
// each of them saw: two that opened before either recorded both say 0, a third that opened after
// both says 2; one that counted a recording a later record run replaced says 1 where it is now
// the first. None of that is damage (docs/modes.md rules 16 and 18): a replay serves every
// acknowledged recording in the order it was acknowledged, and E_TAPE_DAMAGED stays for a
// recording that really is gone (a damaged record on the store, or one a single writer's numbers
// say was lost before the store was written). Before, the replay answered the 3rd call with a
// false E_TAPE_DAMAGED "is missing" and served the 3rd recording on the 4th call.
import { afterAll, describe, expect, it } from 'vitest';
import type { RecordBackend } from '../../src/store/backend.ts';
import { MemoryBackend } from '../../src/store/backends/memory.ts';
import { RedisBackend } from '../../src/store/backends/redis-backend.ts';
import { TapeBackend } from '../../src/store/backends/tape.ts';
import { RecordCollection, type RecordKind } from '../../src/store/collection.ts';
import { ReplayCache } from '../../src/store/replay-cache.ts';
import type { TapeMode } from '../../src/store/mode.ts';
import { tapeSuite } from './setup.ts';
import { redisMissing, startRedis } from '../redis/harness.mjs';
import '../redis/setup.ts';

const { fresh } = tapeSuite('overlapping-writers');

interface Rec {
  v: 1;
  key: string;
  n: number;
}

const kind: RecordKind<Rec> = {
  name: 'test record',
  keysOf: (head) => (typeof head.key === 'string' && head.kind === undefined ? head.key : undefined),
  storedKey: (key) => ({ kind: 'cache', key }),
  is: (v): v is Rec => v !== null && typeof v === 'object' && typeof (v as Rec).key === 'string',
};

const redis = redisMissing() ? undefined : await startRedis();
afterAll(async () => {
  await redis?.stop();
});
let namespaces = 0;

const backends: { name: string; make(): RecordBackend; again(b: RecordBackend): RecordBackend }[] = [
  { name: 'tape', make: () => new TapeBackend(fresh()), again: (b) => new TapeBackend((b as TapeBackend).path) },
  { name: 'memory', make: () => new MemoryBackend(), again: (b) => b },
];
if (redis) {
  backends.push({
    name: 'redis',
    make: () => new RedisBackend(redis.url, { namespace: `overlap-${process.pid}-${namespaces++}` }),
    again: (b) => new RedisBackend(redis.url, { namespace: (b as RedisBackend).namespace }),
  });
}

const open = (b: RecordBackend, mode: TapeMode, run?: string) => RecordCollection.open(b, { mode, kind, ...(run ? { run } : {}) });
const rec = (n: number, key = 'shared'): Rec => ({ v: 1, key, n });

/** The stored records of `key`, in store order: their `n` and `repeat`. */
async function stored(b: RecordBackend, key = 'shared'): Promise<{ n: number; repeat: unknown }[]> {
  const r = await b.load({ create: false });
  const list = r.table ? Array.from({ length: r.table.length }, (_, i) => r.table!.record(i)) : r.records;
  return list.map((x) => x.value() as Rec & { repeat?: unknown }).filter((v) => v.key === key).map((v) => ({ n: v.n, repeat: v.repeat }));
}

/** Every call of `key` a replay answers, `calls` times: the recording's `n`, or the error's code. */
async function replay(b: RecordBackend, calls: number, key = 'shared'): Promise<(number | string | undefined)[]> {
  const r = await open(b, 'replay');
  const got: (number | string | undefined)[] = [];
  try {
    for (let i = 0; i < calls; i++) {
      try {
        got.push(r.next(key)?.n);
      } catch (e) {
        got.push((e as { code?: string }).code ?? String(e));
      }
    }
  } finally {
    await r.close();
  }
  return got;
}

describe.each(backends)('writers open at once on one key ($name)', (bc) => {
  it('A and B open before either records, C opens after both recorded: the replay serves A, B, C', async () => {
    const b = bc.make();
    const a = await open(b, 'record');
    const w = await open(bc.again(b), 'record');
    await a.append('shared', rec(1));
    await w.append('shared', rec(2));
    const c = await open(bc.again(b), 'record'); // A and B still open: both are kept
    await c.append('shared', rec(3));
    await a.close();
    await w.close();
    await c.close();
    // The numbers the writers gave: each counted what it saw.
    expect((await stored(bc.again(b))).map((x) => x.repeat)).toEqual([0, 0, 2]);
    expect(await replay(bc.again(b), 4)).toEqual([1, 2, 3, undefined]);
  });

  it('a writer counted a recording a later record run replaced: its own is served first, not E_TAPE_DAMAGED', async () => {
    const b = bc.make();
    const r = await open(b, 'record', 'run-r');
    await r.append('shared', rec(1));
    const w = await open(bc.again(b), 'record', 'run-w'); // r is open: its recording is kept and counted
    await w.append('shared', rec(2));
    await r.close();
    const x = await open(bc.again(b), 'record', 'run-x'); // r has ended: x replaces its recording
    await x.append('shared', rec(3));
    expect((await x.close()).replaced.length).toBe(1);
    await w.close();
    expect(await stored(bc.again(b))).toEqual([
      { n: 2, repeat: 1 },
      { n: 3, repeat: 1 },
    ]);
    expect(await replay(bc.again(b), 3)).toEqual([2, 3, undefined]);
  });

  it('an update writer counted a recording a record run open at the same time replaced: both recordings are served', async () => {
    const b = bc.make();
    const first = await open(b, 'record', 'run-0');
    await first.append('shared', rec(1));
    await first.close();
    const u = await open(bc.again(b), 'update', 'run-u');
    expect(u.next('shared')?.n).toBe(1);
    await u.append('shared', rec(2)); // its second call: after the one it was served
    const x = await open(bc.again(b), 'record', 'run-x');
    await x.append('shared', rec(3));
    await x.close(); // replaces run-0's; u is open, its recording stays
    await u.close();
    expect((await stored(bc.again(b))).map((s) => s.n)).toEqual([2, 3]);
    expect(await replay(bc.again(b), 3)).toEqual([2, 3, undefined]);
  });
});

describe('ReplayCache writers open at once on one tape', () => {
  it('A and B open before either puts, C opens after both put: get serves A, B, C', async () => {
    const tape = fresh();
    const request = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'shared' }] };
    const a = await ReplayCache.open(tape, { mode: 'record' });
    const w = await ReplayCache.open(tape, { mode: 'record' });
    await a.put(request, 'A');
    await w.put(request, 'B');
    const c = await ReplayCache.open(tape, { mode: 'record' });
    await c.put(request, 'C');
    await a.close();
    await w.close();
    await c.close();
    const r = await ReplayCache.open(tape, { mode: 'replay' });
    try {
      const got: unknown[] = [];
      for (let i = 0; i < 3; i++) got.push(await r.get(request).catch((e: { code?: string }) => e.code));
      expect(got).toEqual(['A', 'B', 'C']);
    } finally {
      await r.close();
    }
  });
});

/** A seeded generator, so a failing interleaving can be run again. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

describe('random schedules of four writers on one key (memory backend)', () => {
  it('every acknowledged recording is served, in store order, with no E_TAPE_DAMAGED', async () => {
    const next = rng(0x201);
    let failures = 0;
    let first = '';
    for (let round = 0; round < 300; round++) {
      const b = new MemoryBackend();
      // A recording made before the writers, by a run that has ended.
      const before = await open(b, 'record', 'before');
      await before.append('shared', rec(0));
      await before.close();
      let n = 1;
      const open4: (RecordCollection<Rec> | undefined)[] = [undefined, undefined, undefined, undefined];
      const done = [false, false, false, false];
      const schedule: string[] = [];
      while (done.some((d) => !d)) {
        const i = Math.floor(next() * 4);
        if (done[i]) continue;
        const w = open4[i];
        if (!w) {
          const mode: TapeMode = next() < 0.25 ? 'update' : 'record';
          open4[i] = await open(b, mode, `run-${round}-${i}`);
          schedule.push(`open ${i} ${mode}`);
        } else if (next() < 0.7) {
          // An update writer is served what it has first, then records the calls past them.
          let served: Rec | undefined;
          try {
            served = w.mode === 'update' ? w.next('shared') : undefined;
          } catch (e) {
            failures++;
            first ||= `${schedule.join(', ')}: update writer ${i} was answered ${(e as Error).message}`;
            break;
          }
          if (served !== undefined) {
            schedule.push(`served ${i}`);
            continue;
          }
          await w.append('shared', rec(n++));
          schedule.push(`append ${i}`);
        } else {
          await w.close();
          done[i] = true;
          schedule.push(`close ${i}`);
        }
      }
      for (const [j, w] of open4.entries()) if (!done[j]) await w?.close();
      const want = (await stored(b)).map((s) => s.n);
      const got = await replay(b, want.length + 1);
      if (JSON.stringify(got) !== JSON.stringify([...want, undefined])) {
        failures++;
        first ||= `${schedule.join(', ')}: stored ${JSON.stringify(await stored(b))}, replayed ${JSON.stringify(got)}`;
      }
    }
    expect(first).toBe('');
    expect(failures).toBe(0);
  });
});

describe('recordings that really are gone are still E_TAPE_DAMAGED', () => {
  /** Records as a writer stamps them, written straight to the store (what an import writes). */
  async function write(b: RecordBackend, records: { n: number; repeat: number; run: string; test?: string }[]): Promise<void> {
    await b.load({ create: true });
    await b.append(records.map((r) => ({ v: 1, key: 'shared', n: r.n, run: r.run, repeat: r.repeat, ...(r.test ? { test: r.test } : {}) })), { durable: true });
  }

  it('one run numbered 0, 2: the 2nd call is E_TAPE_DAMAGED (missing), the 3rd gets the 3rd recording', async () => {
    const b = new MemoryBackend();
    await write(b, [
      { n: 0, repeat: 0, run: 'r' },
      { n: 2, repeat: 2, run: 'r' },
    ]);
    expect(await replay(b, 3)).toEqual([0, 'E_TAPE_DAMAGED', 2]);
  });

  it('one run whose first recording is gone (numbered 1, 2): the 1st call is E_TAPE_DAMAGED', async () => {
    const b = new MemoryBackend();
    await write(b, [
      { n: 1, repeat: 1, run: 'r' },
      { n: 2, repeat: 2, run: 'r' },
    ]);
    expect(await replay(b, 3)).toEqual(['E_TAPE_DAMAGED', 1, 2]);
  });

  it('two tests of one key, the second test\'s 2nd recording gone: a reader of every recording gets E_TAPE_DAMAGED in its turn', async () => {
    const b = new MemoryBackend();
    await write(b, [
      { n: 0, repeat: 0, run: 'r', test: 'a' },
      { n: 1, repeat: 1, run: 'r', test: 'a' },
      { n: 2, repeat: 0, run: 'r', test: 'b' },
      { n: 4, repeat: 2, run: 'r', test: 'b' },
    ]);
    expect(await replay(b, 5)).toEqual([0, 1, 2, 'E_TAPE_DAMAGED', 4]);
  });
});
