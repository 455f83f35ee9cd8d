// The conformance suite of the recording collection: every backend (src/store/backends/) must
// pass it. Record, replay, ordered repeats, the mode rules at close, two writers, a failed
// append, unused recordings; for backends that live in files also several processes, kill -9
// and damaged bytes. A new backend is done when it is added to `backends` and this passes.
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { RecordBackend } from '../../src/store/backend.ts';
import { MemoryBackend } from '../../src/store/backends/memory.ts';
import { RedisBackend } from '../../src/store/backends/redis-backend.ts';
import { TapeBackend } from '../../src/store/backends/tape.ts';
import { RecordCollection, type RecordKind } from '../../src/store/collection.ts';
import type { TapeMode } from '../../src/store/mode.ts';
import { tapeSuite } from './setup.ts';
import { rawCommand, redisMissing, startRedis, startRedisCluster } from '../redis/harness.mjs';
import '../redis/setup.ts';

const { fresh } = tapeSuite('collection');

interface Rec {
  v: 1;
  key: string;
  n: number;
  body?: Uint8Array;
}

const kind: RecordKind<Rec> = {
  name: 'test record',
  keysOf: (head) => (typeof head.key === 'string' && head.kind === undefined ? head.key : undefined),
  storedKey: (key) => ({ kind: 'cache', key }),
  is: (v): v is Rec => v !== null && typeof v === 'object' && typeof (v as Rec).key === 'string',
};

interface BackendCase {
  name: string;
  /** A new, empty store. */
  make(): RecordBackend;
  /** Another handle on the same store (another writer). */
  again(b: RecordBackend): RecordBackend;
  /** Makes every later append on this handle fail as a full or read-only store would. */
  breakAppends(b: RecordBackend): RecordBackend;
  /** Backends in files: processes, kill -9 and damaged bytes apply. */
  file?: (b: RecordBackend) => string;
  /** Stores shared while open (refresh): a reader sees what others record after it opened. */
  shared?: true;
}

const failing = (b: RecordBackend): RecordBackend => ({
  location: b.location,
  load: (o) => b.load(o),
  append: async () => {
    throw new Error('no space left on device');
  },
  rewrite: (s) => b.rewrite(s),
  close: () => b.close(),
});

const backends: BackendCase[] = [
  {
    name: 'tape',
    make: () => new TapeBackend(fresh()),
    again: (b) => new TapeBackend((b as TapeBackend).path),
    // The real thing where it can be had: the file made read-only (appends fail, a rename over
    // it still works). Root writes to read-only files, so there the appends fail by hand.
    breakAppends: (b) => {
      if (process.getuid?.() === 0) return failing(b);
      chmodSync((b as TapeBackend).path, 0o444);
      return b;
    },
    file: (b) => (b as TapeBackend).path,
  },
  {
    name: 'memory',
    make: () => new MemoryBackend(),
    again: (b) => b,
    breakAppends: failing,
  },
  {
    // A backend that gives its records by index (RecordTable), as a large tape read from its
    // file does: the collection must file from the table and never ask for the list.
    name: 'memory, records by index',
    make: () => byTable(new MemoryBackend()),
    again: (b) => b,
    breakAppends: (b) => byTable(failing(b)),
  },
];

/** `b` with its loads given as a RecordTable; asking a load for its `records` list fails the test. */
function byTable(b: RecordBackend): RecordBackend {
  return {
    location: b.location,
    load: async (o) => {
      const r = await b.load(o);
      if (r.table) return r; // wrapped twice (breakAppends)
      const list = r.records;
      return {
        exists: r.exists,
        warnings: r.warnings,
        table: { length: list.length, record: (i) => ({ ...list[i]!, head: list[i]!.head.bind(list[i]), value: list[i]!.value.bind(list[i]), id: list[i]!.id.bind(list[i]) }), at: (i) => list[i]!.at },
        get records(): never {
          throw new Error('the collection asked for the list of a load that gave a table');
        },
      };
    },
    append: (v, o) => b.append(v, o),
    rewrite: (s) => b.rewrite(s),
    close: () => b.close(),
    get salt() {
      return b.salt;
    },
    ...(b.openWriter ? { openWriter: (run: string) => b.openWriter!(run) } : {}),
    ...(b.refresh ? { refresh: (head: { kind?: string; key: string }) => b.refresh!(head) } : {}),
  };
}

// The Redis backend joins on a real redis-server when one is installed (test/redis/setup.ts
// says what to install otherwise, and fails instead under .ci/run).
const redis = redisMissing() ? undefined : await startRedis();
const cluster = redisMissing() ? undefined : await startRedisCluster();
afterAll(async () => {
  await redis?.stop();
  await cluster?.stop();
});
let redisStores = 0;
for (const [name, server] of [['redis', redis], ['redis cluster', cluster]] as const) {
  if (!server) continue;
  backends.push({
    name,
    make: () => new RedisBackend(server.url, { namespace: `conformance-${process.pid}-${redisStores++}` }),
    again: (b) => new RedisBackend(server.url, { namespace: (b as RedisBackend).namespace }),
    breakAppends: failing,
    shared: true,
  });
}

const open = (b: RecordBackend, mode: TapeMode, run?: string) => RecordCollection.open(b, { mode, kind, ...(run ? { run } : {}) });
const rec = (key: string, n: number): Rec => ({ v: 1, key, n });
async function stored(b: RecordBackend): Promise<unknown[]> {
  const { table, records } = await b.load({ create: false }).then((r) => (r.table ? { table: r.table, records: undefined } : { table: undefined, records: r.records }));
  return table ? Array.from({ length: table.length }, (_, i) => table.record(i).value()) : records!.map((r) => r.value());
}
const ns = async (b: RecordBackend) => (await stored(b)).map((v) => (v as Rec).n);

describe.each(backends)('recording collection on the $name backend', (bc) => {
  it('records, then replays each key in recorded order (ordered repeats)', async () => {
    const b = bc.make();
    const w = await open(b, 'record');
    await w.append('a', rec('a', 1));
    await Promise.all([w.append('b', rec('b', 2)), w.append('a', rec('a', 3))]);
    await w.close();
    const r = await open(bc.again(b), 'replay');
    expect(r.size).toBe(3);
    expect([r.next('a')?.n, r.next('a')?.n, r.next('a')?.n]).toEqual([1, 3, undefined]);
    expect(r.next('a', { repeatLast: true })?.n).toBe(3);
    expect(r.next('b')?.n).toBe(2);
    expect(r.next('zzz')).toBeUndefined();
    expect(r.count('a')).toEqual({ recorded: 2, served: 2 });
    await r.close();
  });

  it('keeps binary values, and what the caller later mutates never changes the store', async () => {
    const b = bc.make();
    const w = await open(b, 'record');
    const value = { v: 1 as const, key: 'bin', n: 1, body: Uint8Array.of(0, 255, 10) };
    await w.append('bin', value);
    value.n = 99;
    await w.close();
    const got = (await open(bc.again(b), 'replay')).next('bin')!;
    expect(got.n).toBe(1);
    expect([...got.body!]).toEqual([0, 255, 10]);
  });

  it('replay never writes and passthrough neither reads nor writes', async () => {
    const b = bc.make();
    const w = await open(b, 'record');
    await w.append('a', rec('a', 1));
    await w.close();
    const r = await open(bc.again(b), 'replay');
    await r.append('x', rec('x', 2));
    expect(await r.close({ pruneUnused: false })).toEqual({ replaced: [], pruned: [] });
    const p = await open(bc.again(b), 'passthrough');
    expect(p.next('a')).toBeUndefined();
    await p.append('y', rec('y', 3));
    await p.close({ pruneUnused: true });
    expect(await ns(b)).toEqual([1]);
  });

  it('record replaces only the keys it re-recorded, keeps unused ones and other kinds', async () => {
    const b = bc.make();
    await b.load({ create: true });
    await b.append([rec('a', 1), rec('a', 2), rec('b', 3), { v: 1, kind: 'other', key: 'a', n: 4 }], { durable: true });
    const w = await open(bc.again(b), 'record');
    expect(w.next('a')).toBeUndefined(); // record serves nothing
    await w.append('a', rec('a', 5));
    const report = await w.close();
    expect(report.replaced.map((x) => x.key)).toEqual(['a', 'a']);
    expect(report.pruned).toEqual([]);
    expect(await ns(b)).toEqual([3, 4, 5]);
  });

  it('records of another kind on the store are not counted or served, and what is appended after them is', async () => {
    const b = bc.make();
    await b.load({ create: true });
    const other = (n: number) => ({ v: 1, kind: 'other', key: 'a', n });
    await b.append([other(1), rec('a', 2), other(3), other(4), rec('b', 5), other(6), other(7)], { durable: true });
    const r = await open(bc.again(b), 'replay');
    expect(r.size).toBe(2);
    expect([r.next('a')?.n, r.next('a')?.n, r.next('b')?.n]).toEqual([2, undefined, 5]);
    await r.close();
    const u = await open(bc.again(b), 'update');
    expect(u.size).toBe(2);
    await u.append('c', rec('c', 8));
    expect(u.size).toBe(3);
    // The appended recording answered the call that made it: served again only as a repeat.
    expect([u.next('c')?.n, u.next('c', { repeatLast: true })?.n, u.next('a')?.n, u.next('b')?.n]).toEqual([undefined, 8, 2, 5]);
    await u.close();
  });

  it('names where each loaded recording is stored (forEachLoaded, loadedAt), runs covering the same ones (forEachLoadedRun)', async () => {
    const b = bc.make();
    await b.load({ create: true });
    await b.append([rec('a', 1), { v: 1, kind: 'other', key: 'x', n: 2 }, rec('b', 3), rec('a', 4)], { durable: true });
    const loaded = await bc.again(b).load({ create: false });
    const table = loaded.table;
    const ats = table ? Array.from({ length: table.length }, (_, i) => table.at(i)) : loaded.records.map((x) => x.at);
    expect(new Set(ats).size).toBe(4);
    const want = [ats[0], ats[2], ats[3]];
    const r = await open(bc.again(b), 'replay');
    const seen: number[] = [];
    r.forEachLoaded((_g, _k, at) => seen.push(at));
    const runs: number[] = [];
    r.forEachLoadedRun((_g, _k, from, to) => {
      for (let i = from; i < to; i++) runs.push(r.loadedAt(i)!);
    });
    expect(seen).toEqual(want);
    expect(runs).toEqual(want);
    expect([0, 1, 2].map((i) => r.loadedAt(i))).toEqual(want);
    // Looked at (served), the same places.
    expect([r.next('a')?.n, r.next('b')?.n]).toEqual([1, 3]);
    expect([0, 1, 2].map((i) => r.loadedAt(i))).toEqual(want);
    await r.close();
  });

  it('an unchanged re-recording keeps the old record (reuse), the rest of the key is replaced', async () => {
    const b = bc.make();
    await b.load({ create: true });
    await b.append([rec('a', 1), rec('a', 2)], { durable: true });
    const w = await open(bc.again(b), 'record');
    expect(w.previous('a', 0)?.n).toBe(1);
    w.reuse('a', 0);
    await w.close();
    expect(await ns(b)).toEqual([1]);
  });

  it('update serves what is there, records what is missing, removes nothing', async () => {
    const b = bc.make();
    await b.load({ create: true });
    await b.append([rec('a', 1)], { durable: true });
    const u = await open(bc.again(b), 'update');
    expect(u.next('a')?.n).toBe(1);
    expect(u.next('b')).toBeUndefined();
    await u.append('b', rec('b', 2));
    expect(u.next('b', { repeatLast: true })?.n).toBe(2);
    await u.append('a', rec('a', 3)); // a repeat past the recorded ones
    expect(await u.close()).toEqual({ replaced: [], pruned: [] });
    expect(await ns(b)).toEqual([1, 2, 3]);
  });

  it('update: a recording made for a call a fault stood in for waits for its retry, which takes it in turn, not as a repeat', async () => {
    const b = bc.make();
    const u = await open(b, 'update');
    // The request sent behind the fault looks for a recording, misses, and records the answer.
    expect(u.next('a')).toBeUndefined();
    await u.append('a', rec('a', 1), { forRetry: true });
    expect(u.count('a')).toEqual({ recorded: 1, served: 0 });
    // The faulted call's retry: its recording, in turn.
    expect(u.next('a', { repeatLast: true })?.n).toBe(1);
    expect(u.repeatsServed).toBe(0);
    // The request made once more: now a call past its recordings.
    expect(u.next('a', { repeatLast: true })?.n).toBe(1);
    expect(u.repeatsServed).toBe(1);
    await u.close();
    expect(await ns(b)).toEqual([1]);
  });

  it('two writers: neither removes what the other appended, before or after it opened', async () => {
    const b = bc.make();
    const a = await open(b, 'record');
    await a.append('from-a-1', rec('from-a-1', 1));
    const w2 = await open(bc.again(b), 'record'); // sees a's first record at open
    await a.append('from-a-2', rec('from-a-2', 2));
    await w2.append('from-b', rec('from-b', 3));
    await w2.close();
    await a.close();
    expect((await ns(b)).sort()).toEqual([1, 2, 3]);
  });

  it('same key, two writers: one opening after the other acknowledged never removes those recordings', async () => {
    const b = bc.make();
    const before = await open(b, 'record');
    await before.append('a', rec('a', 0)); // a run that ends before the others begin
    await before.close();
    const w1 = await open(bc.again(b), 'record');
    await w1.append('a', rec('a', 1));
    await w1.append('a', rec('a', 2));
    const w2 = await open(bc.again(b), 'record'); // loads w1's two, acknowledged, w1 still open
    await w2.append('a', rec('a', 3));
    const r1 = await w1.close();
    const r2 = await w2.close();
    // Each run replaced only the ended run's recording; repeats in acknowledgement order.
    expect([...r1.replaced, ...r2.replaced].map((x) => x.key)).toEqual(['a']);
    const r = await open(bc.again(b), 'replay');
    expect([r.next('a')?.n, r.next('a')?.n, r.next('a')?.n, r.next('a')?.n]).toEqual([1, 2, 3, undefined]);
    await r.close();
  });

  it('same key, one run (test workers): writers of the run never replace each other, a later run replaces them', async () => {
    const b = bc.make();
    const w1 = await open(b, 'record', 'run-1');
    await w1.append('a', rec('a', 1));
    await w1.close(); // worker 1 is done before worker 2 starts
    const w2 = await open(bc.again(b), 'record', 'run-1');
    await w2.append('a', rec('a', 2));
    expect((await w2.close()).replaced).toEqual([]);
    expect(await ns(b)).toEqual([1, 2]);
    const next = await open(bc.again(b), 'record', 'run-2');
    await next.append('a', rec('a', 3));
    expect((await next.close()).replaced.length).toBe(2);
    expect(await ns(b)).toEqual([3]);
  });

  it('same key, a record run and an update writer open at once: neither loses the other\'s recordings', async () => {
    const b = bc.make();
    const u = await open(b, 'update');
    await u.append('a', rec('a', 1));
    const w = await open(bc.again(b), 'record');
    await w.append('a', rec('a', 2));
    await w.close();
    await u.append('a', rec('a', 3));
    await u.close();
    expect(await ns(b)).toEqual([1, 2, 3]);
  });

  it('a failed append rejects and is never filed, served or counted (update mode)', async () => {
    const b = bc.make();
    await b.load({ create: true });
    await b.append([rec('a', 1)], { durable: true });
    const w = await open(bc.breakAppends(bc.again(b)), 'update');
    expect(w.next('a')?.n).toBe(1);
    await expect(w.append('a', rec('a', 2))).rejects.toThrow();
    await expect(w.append('b', rec('b', 3))).rejects.toThrow();
    expect(w.next('a')).toBeUndefined();
    expect(w.next('b')).toBeUndefined();
    expect(w.size).toBe(1);
    expect(w.count('b')).toEqual({ recorded: 0, served: 0 });
    await w.close();
    if (bc.file) chmodSync(bc.file(b), 0o644);
    expect(await ns(b)).toEqual([1]);
  });

  it('a replaced recording is removed only after its replacement is durable (failed append keeps it)', async () => {
    const b = bc.make();
    await b.load({ create: true });
    await b.append([rec('a', 1), rec('b', 2)], { durable: true });
    const w = await open(bc.breakAppends(bc.again(b)), 'record');
    await expect(w.append('a', rec('a', 3))).rejects.toThrow();
    const report = await w.close();
    expect(report.replaced).toEqual([]);
    if (bc.file) chmodSync(bc.file(b), 0o644);
    expect(await ns(b)).toEqual([1, 2]);
  });

  it('prunes unused recordings only when asked, and reports them', async () => {
    const b = bc.make();
    await b.load({ create: true });
    await b.append([rec('a', 1), rec('b', 2), rec('c', 3)], { durable: true });
    const r1 = await open(bc.again(b), 'replay');
    r1.next('a');
    await r1.close();
    expect(await ns(b)).toEqual([1, 2, 3]);
    const r2 = await open(bc.again(b), 'replay');
    r2.next('a');
    const report = await r2.close({ pruneUnused: true });
    expect(report.pruned.map((x) => x.key).sort()).toEqual(['b', 'c']);
    expect(await ns(b)).toEqual([1]);
  });

  it('record mode: a key asked for again and not recorded is not pruned; one re-recorded is replaced; one nobody asked for is', async () => {
    const b = bc.make();
    await b.load({ create: true });
    await b.append([rec('a', 1), rec('b', 2), rec('c', 3)], { durable: true });
    const w = await open(bc.again(b), 'record');
    w.ask('a'); // its call failed: nothing appended
    w.ask('b');
    await w.append('b', rec('b', 4));
    expect(w.keptAsked().map((r) => (r.value() as { n: number }).n)).toEqual([1]);
    const report = await w.close({ pruneUnused: true });
    expect(report.replaced.map((x) => x.key)).toEqual(['b']);
    expect(report.pruned.map((x) => x.key)).toEqual(['c']);
    expect(await ns(b)).toEqual([1, 4]);
  });

  it.runIf(bc.shared)('shared store: a reader opened first finds what another writer records later, in order, after refresh', async () => {
    const b = bc.make();
    await b.load({ create: true });
    const reader = await open(b, 'replay');
    const writer = await open(bc.again(b), 'update');
    await writer.append('a', rec('a', 1));
    await writer.append('a', rec('a', 2));
    await writer.append('b', rec('b', 3));
    expect(reader.next('a')).toBeUndefined();
    expect(await reader.refresh({ key: 'a' })).toBe(2);
    expect(await reader.refresh({ key: 'a' })).toBe(0); // nothing new: nothing filed twice
    expect([reader.next('a')?.n, reader.next('a')?.n]).toEqual([1, 2]);
    expect(reader.next('b')).toBeUndefined(); // only the key asked for
    // The writer's own appends are not handed back to it.
    expect(await writer.refresh({ key: 'a' })).toBe(0);
    await writer.close();
    await reader.close();
  });

  it('appends after close are refused; close is idempotent', async () => {
    const w = await open(bc.make(), 'record');
    const c1 = w.close();
    expect(w.close()).toBe(c1);
    await c1;
    await expect(w.append('a', rec('a', 1))).rejects.toMatchObject({ code: 'E_CLOSED' });
  });

  it.runIf(bc.file !== undefined)('4 processes recording one store lose nothing', async () => {
    const b = bc.make();
    await b.load({ create: true });
    await Promise.all(['p0', 'p1', 'p2', 'p3'].map((id) => child([bc.file!(b), 'record', id, '25'])));
    const keys = (await stored(b)).map((v) => (v as Rec).key);
    expect(keys).toHaveLength(100);
    expect(new Set(keys).size).toBe(100);
  }, 60_000);

  it.runIf(bc.file !== undefined)('4 processes of one run recording the same key lose nothing, in acknowledgement order per process', async () => {
    const b = bc.make();
    await b.load({ create: true });
    await Promise.all(['p0', 'p1', 'p2', 'p3'].map((id) => child([bc.file!(b), 'same', id, '5', 'one-run'])));
    const got = (await stored(b)) as { writer: string; i: number }[];
    expect(got).toHaveLength(20);
    for (const id of ['p0', 'p1', 'p2', 'p3']) expect(got.filter((v) => v.writer === id).map((v) => v.i)).toEqual([0, 1, 2, 3, 4]);
  }, 60_000);

  it.runIf(bc.file !== undefined)('a process still open keeps its recordings; once it is killed, a later run replaces them', async () => {
    const b = bc.make();
    const file = bc.file!(b);
    const holder = spawn(process.execPath, [WORKER, DIST, file, 'hold', 'k', '2'], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      await new Promise<void>((resolve, reject) => {
        holder.stdout.on('data', (d: Buffer) => d.toString().includes('held') && resolve());
        holder.on('exit', (code) => reject(new Error(`holder exited ${code}`)));
      });
      const w = await open(bc.again(b), 'record');
      await w.append('same', rec('same', 7));
      expect((await w.close()).replaced).toEqual([]);
      expect((await stored(b)).length).toBe(3);
    } finally {
      holder.kill('SIGKILL');
      await new Promise((r) => holder.once('exit', r));
    }
    // Its pid is gone: its run has ended, so a new record run replaces its recordings.
    const w = await open(bc.again(b), 'record');
    await w.append('same', rec('same', 8));
    expect((await w.close()).replaced.length).toBe(3);
    expect(await ns(b)).toEqual([8]);
  }, 60_000);

  it.runIf(bc.file !== undefined)('kill -9 at a random moment loses no acknowledged append', async () => {
    for (let round = 0; round < 3; round++) {
      const b = bc.make();
      await b.load({ create: true });
      const acked = await killAfter(bc.file!(b), 5 + Math.floor(Math.random() * 60));
      const got = new Set((await stored(b)).map((v) => (v as Rec).key));
      for (const i of acked) expect(got.has(`k-${i}`)).toBe(true);
    }
  }, 60_000);

  it.runIf(bc.file !== undefined)('damage never moves an answer to another call: the k-th call gets the k-th recording or E_TAPE_DAMAGED', async () => {
    for (const lost of [0, 1, 3]) {
      const b = bc.make();
      const w = await open(b, 'record');
      for (let i = 0; i < 4; i++) await w.append('a', rec('a', i));
      await w.append('b', rec('b', 9));
      await w.close();
      const file = bc.file!(b);
      const bytes = readFileSync(file);
      const at = (await b.load({ create: false })).records[lost]!.at + 20;
      bytes[at] = bytes[at]! ^ 0x5a;
      writeFileSync(file, bytes);
      const r = await open(bc.again(b), 'replay');
      const got: (number | string)[] = [];
      for (let i = 0; i < 4; i++) {
        try {
          got.push(r.next('a')?.n ?? 'miss');
        } catch (e) {
          expect(e).toMatchObject({ code: 'E_TAPE_DAMAGED', details: { key: 'a', repeat: lost } });
          expect((e as Error).message).toContain(`${['1st', '2nd', '3rd', '4th'][lost]} recording of a`);
          got.push('damaged');
        }
      }
      // The last recording damaged too: its call is E_TAPE_DAMAGED, never the one before again.
      expect(got).toEqual([0, 1, 2, 3].map((i) => (i === lost ? 'damaged' : i)));
      // Past the end, "the last one again" is the 4th: damaged when it is, else served.
      if (lost === 3) expect(() => r.next('a', { repeatLast: true })).toThrow(expect.objectContaining({ code: 'E_TAPE_DAMAGED', details: expect.objectContaining({ repeat: 3 }) }));
      else expect(r.next('a', { repeatLast: true })?.n).toBe(3);
      expect(r.next('b')?.n).toBe(9);
      expect(r.next('b', { repeatLast: true })?.n).toBe(9); // before the damage: not its
      await r.close();
    }
  });

  it.runIf(bc.name === 'redis')('the last recording malformed in Redis: its call is E_TAPE_DAMAGED, not the one before again', async () => {
    const b = bc.make() as RedisBackend;
    const w = await open(b, 'record');
    for (let i = 0; i < 3; i++) await w.append('a', rec('a', i));
    await w.append('b', rec('b', 9));
    await w.append('c', rec('c', 5));
    await w.close();
    const records = await (await b.records()).read('cache:a');
    const [onlyC] = await (await b.records()).read('cache:c');
    // Bytes that do not read as a record at all, in the place of the third.
    const ns = b.namespace;
    await rawCommand(redis!.port, ['HSET', `${ns}:{${ns}:cache:a}:r`, String(records[2]!.seq), 'not a record']);
    await rawCommand(redis!.port, ['HSET', `${ns}:{${ns}:cache:c}:r`, String(onlyC!.seq), 'not a record']);
    const r = await open(bc.again(b), 'replay');
    expect([r.next('a')?.n, r.next('a')?.n]).toEqual([0, 1]);
    expect(() => r.next('a')).toThrow(expect.objectContaining({ code: 'E_TAPE_DAMAGED', details: expect.objectContaining({ key: 'a', repeat: 2 }) }));
    expect(() => r.next('a', { repeatLast: true })).toThrow(expect.objectContaining({ code: 'E_TAPE_DAMAGED' }));
    // Another key's damage is not this one's: Redis says whose it is.
    expect([r.next('b')?.n, r.next('b', { repeatLast: true })?.n]).toEqual([9, 9]);
    // A key whose only recording is lost is not a miss either: Redis knows it was there.
    expect(() => r.next('c')).toThrow(expect.objectContaining({ code: 'E_TAPE_DAMAGED', details: expect.objectContaining({ key: 'c', repeat: 0 }) }));
    expect(r.next('d')).toBeUndefined(); // never recorded: a miss
    expect(r.warnings.map((x) => x.code)).toContain('E_TAPE_CORRUPT');
    await r.close();
  });

  it.runIf(bc.name === 'redis')('a malformed record in Redis keeps its turn: E_TAPE_DAMAGED for its call, a warning at open', async () => {
    const b = bc.make() as RedisBackend;
    const w = await open(b, 'record');
    for (let i = 0; i < 3; i++) await w.append('a', rec('a', i));
    await w.close();
    const [first] = await (await b.records()).read('cache:a');
    // Another tool wrote bytes that are not a record under the key's first place.
    const ns = b.namespace;
    await rawCommand(redis!.port, ['HSET', `${ns}:{${ns}:cache:a}:r`, String(first!.seq), first!.payload.subarray(0, 12).toString('latin1')]);
    const r = await open(bc.again(b), 'replay');
    expect(() => r.next('a')).toThrow(expect.objectContaining({ code: 'E_TAPE_DAMAGED' }));
    expect([r.next('a')?.n, r.next('a')?.n]).toEqual([1, 2]);
    expect(r.warnings.map((x) => x.code)).toContain('E_TAPE_CORRUPT');
    await r.close();
  });

  it.runIf(bc.file !== undefined)('damaged bytes cost only the damaged records', async () => {
    const b = bc.make();
    const w = await open(b, 'record');
    for (let i = 0; i < 50; i++) await w.append(`k${i}`, rec(`k${i}`, i));
    await w.close();
    const file = bc.file!(b);
    const bytes = readFileSync(file);
    const loaded = await b.load({ create: false });
    // Flip one byte inside record 20's payload.
    const at = loaded.records[20]!.at + 20;
    bytes[at] = bytes[at]! ^ 0x5a;
    writeFileSync(file, bytes);
    const r = await open(bc.again(b), 'replay');
    expect(r.size).toBe(49);
    expect(r.next('k20')).toBeUndefined();
    expect(r.next('k21')?.n).toBe(21);
    expect(r.warnings.map((x) => x.code)).toContain('E_TAPE_CORRUPT');
  });
});

describe('the tape backend under 200 random corruptions of a 1,000-record tape', () => {
  it('loses no record beyond the ones whose bytes were damaged', async () => {
    const file = fresh();
    const b = new TapeBackend(file);
    await b.load({ create: true });
    await b.append(Array.from({ length: 1000 }, (_, i) => rec(`k${i}`, i)), { durable: false });
    const pristine = readFileSync(file);
    const frames = (await b.load({ create: false })).records.map((r, i) => ({ i, at: r.at }));
    const ends = frames.map((f, j) => (j + 1 < frames.length ? frames[j + 1]!.at : pristine.length));
    const seed = Date.now() >>> 0;
    let state = seed;
    const rnd = (n: number) => ((state = (Math.imul(state, 1103515245) + 12345) >>> 0) % n);
    let lostBeyond = 0;
    for (let round = 0; round < 200; round++) {
      const bytes = Buffer.from(pristine);
      const len = 1 + rnd(64);
      const at = frames[0]!.at + rnd(pristine.length - frames[0]!.at - len);
      for (let k = 0; k < len; k++) bytes[at + k] = rnd(256);
      writeFileSync(file, bytes);
      const got = new Set<number>();
      for (const r of (await new TapeBackend(file).load({ create: false })).records) {
        try {
          got.add((r.value() as Rec).n);
        } catch {
          // a damaged payload whose CRC still matched cannot happen by chance; counted as lost
        }
      }
      for (const f of frames) {
        const damaged = at < ends[f.i]! && at + len > f.at;
        if (!damaged && !got.has(f.i)) lostBeyond++;
      }
    }
    expect(lostBeyond, `seed ${seed}`).toBe(0);
  }, 60_000);
});

describe.each(backends)('ReplayCache on the $name backend', (bc) => {
  it('secrets never reach the backend', async () => {
    const { ReplayCache } = await import('../../src/store/replay-cache.ts');
    const b = bc.make();
    const key = 'sk-proj-' + 'Zq8vN3mT6pL1rX4wK7yB2cF5hJ9dG0sA';
    const cache = await ReplayCache.open(b, { mode: 'record' });
    await cache.put(
      { model: 'gpt-4o-mini', messages: [{ role: 'user', content: `my key is ${key}` }], api_key: key },
      { answer: `echo ${key}`, headers: { authorization: `Bearer ${key}` } },
      { meta: { access_token: 'tok-very-secret-123456' } },
    );
    await cache.close();
    const text = bc.file
      ? readFileSync(bc.file(b)).toString('latin1')
      : JSON.stringify(await stored(b), (_k, v: unknown) => (v instanceof Uint8Array ? Buffer.from(v).toString('latin1') : v));
    expect(text).toContain('gpt-4o-mini'); // the record is there
    for (const secret of [key, key.slice(8), 'tok-very-secret-123456']) expect(text.includes(secret), secret).toBe(false);
  });
});

const DIST = pathToFileURL(join(import.meta.dirname, '../../dist/')).href;
const WORKER = join(import.meta.dirname, 'collection-worker.mjs');

function child(args: string[]): Promise<string> {
  if (!existsSync(join(import.meta.dirname, '../../dist/store/collection.js'))) throw new Error('dist is missing: run `npm run build` (npm test does it first)');
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, [WORKER, DIST, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    c.stdout.on('data', (d: Buffer) => (out += d));
    c.stderr.on('data', (d: Buffer) => (err += d));
    c.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`worker exited ${code}: ${err}`))));
  });
}

/** Runs an `ack` writer, kills it with SIGKILL after `after` acknowledgements; returns them. */
function killAfter(file: string, after: number): Promise<number[]> {
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, [WORKER, DIST, file, 'ack', 'k', '100000'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    c.stdout.on('data', (d: Buffer) => {
      out += d;
      if (out.split('\n').length > after) c.kill('SIGKILL');
    });
    c.on('error', reject);
    c.on('exit', () => resolve(out.split('\n').filter((l) => /^\d+$/.test(l)).map(Number)));
  });
}
