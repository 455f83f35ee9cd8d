// The mode rules of docs/modes.md, as ReplayCache users meet them: a record run replaces only
// what it re-recorded, never another writer's records, keeps what it did not use (pruning is
// explicit and reported), and removes an old recording only once its replacement is on disk.
import { describe, expect, it } from 'vitest';
import { ReplayCache, type ReplayRecord } from '../../src/store/replay-cache.ts';
import { readTape, withTapeLock } from '../../src/store/tape-file.ts';
import { tapeSuite } from './setup.ts';

const { fresh } = tapeSuite('modes');

const q = (text: string) => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }] });
const answers = async (file: string) => (await readTape(file)).records.map((r) => (r.value as ReplayRecord).value).sort();

async function seed(file: string, pairs: [string, string][]): Promise<void> {
  const c = await ReplayCache.open(file, { mode: 'record' });
  for (const [question, answer] of pairs) await c.put(q(question), answer);
  await c.close();
}

describe('record mode with two writers', () => {
  it("never removes another writer's fsynced answer (B opened after A put it)", async () => {
    const file = fresh();
    const a = await ReplayCache.open(file, { mode: 'record' });
    await a.put(q('from A'), 'answer A'); // on disk now
    const b = await ReplayCache.open(file, { mode: 'record' });
    await b.put(q('from B'), 'answer B');
    await b.close();
    await a.close();
    expect(await answers(file)).toEqual(['answer A', 'answer B']);
  });

  it('two workers recording 10 tests each on one tape, opened at different moments: 20 records stay 20', async () => {
    const file = fresh();
    const a = await ReplayCache.open(file, { mode: 'record' });
    for (let i = 0; i < 4; i++) await a.put(q(`a${i}`), `A${i}`);
    const b = await ReplayCache.open(file, { mode: 'record' });
    for (let i = 4; i < 10; i++) await Promise.all([a.put(q(`a${i}`), `A${i}`), b.put(q(`b${i - 4}`), `B${i - 4}`)]);
    const c = await ReplayCache.open(file, { mode: 'record' }); // a worker that records the rest
    for (let i = 6; i < 10; i++) await c.put(q(`b${i}`), `B${i}`);
    await Promise.all([b.close(), a.close(), c.close()]);
    expect((await readTape(file)).records).toHaveLength(20);
  });
});

describe('record mode and recordings this run did not use', () => {
  it('keeps them; close({ pruneUnused: true }) removes them and reports which', async () => {
    const file = fresh();
    await seed(file, [
      ['used', 'old used'],
      ['unused', 'kept'],
    ]);
    const r = await ReplayCache.open(file, { mode: 'record' });
    await r.put(q('used'), 'new used');
    await r.close();
    expect(await answers(file)).toEqual(['kept', 'new used']);

    const p = await ReplayCache.open(file, { mode: 'replay' });
    expect(await p.get(q('used'))).toBe('new used');
    const report = await p.close({ pruneUnused: true });
    expect(report.pruned).toHaveLength(1);
    expect(report.pruned[0]!.key).toBe(p.cacheKey(q('unused')));
    expect(await answers(file)).toEqual(['new used']);
  });
});

describe('a replaced recording is removed only after its replacement is durable', () => {
  it('a re-record whose append fails keeps the old recording', async () => {
    const file = fresh();
    await seed(file, [['q', 'old answer']]);
    const r = await ReplayCache.open(file, { mode: 'record', lock: { timeoutMs: 50 } });
    // Another process holds the tape lock for longer than this cache waits: the append fails,
    // as it does on a read-only tape or a full disk.
    let release!: () => void;
    const held = new Promise<void>((r2) => (release = r2));
    let locked!: () => void;
    const isLocked = new Promise<void>((r2) => (locked = r2));
    const holder = withTapeLock(file, async () => {
      locked();
      await held;
    });
    await isLocked;
    await expect(r.put(q('q'), 'new answer')).rejects.toMatchObject({ code: 'E_TAPE_LOCKED' });
    release();
    await holder;
    await r.close();
    expect(await answers(file)).toEqual(['old answer']);
  });
});
