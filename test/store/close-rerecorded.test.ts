// The count of re-recordings in a record run's close report: how many of the run's recordings
// took the place of a replaced recording of their key. One per recording replaced; a key recorded
// more often than before has its extra recordings added, and one recorded less often replaces
// all its old ones with fewer. The run summaries (createFetch's, the test runners') say
// "re-recorded (replaced)" from it instead of reading the tape before and after the close.
import { describe, expect, it } from 'vitest';
import { MemoryBackend } from '../../src/store/backends/memory.ts';
import { RecordCollection, type RecordKind } from '../../src/store/collection.ts';

interface Rec {
  v: 1;
  key: string;
  n: number;
}

const kind: RecordKind<Rec> = {
  name: 'test record',
  keysOf: (head) => (typeof head.key === 'string' ? head.key : undefined),
  is: (v): v is Rec => v !== null && typeof v === 'object' && typeof (v as Rec).key === 'string',
  // As HTTP recordings filed under an origin replace those of their request filed without one.
  replaces: (key) => (key.startsWith('o:') ? key.slice(2) : undefined),
};
const rec = (key: string, n: number): Rec => ({ v: 1, key, n });

/** A store holding `keys` (recorded by a run that has ended), and a writer on it in `mode`. */
async function storeWith(keys: string[], mode: 'record' | 'update') {
  const b = new MemoryBackend();
  await b.load({ create: true });
  await b.append(keys.map((k, i) => rec(k, i)), { durable: true });
  return RecordCollection.open(b, { mode, kind });
}

describe('CloseReport.rerecorded', () => {
  it('one per recording replaced: extra recordings of a key are added, fewer replace all the old ones', async () => {
    const w = await storeWith(['a', 'b', 'b', 'c'], 'record');
    // a: 2 new for 1 old (1 re-recorded, 1 added); b: 1 new for 2 old (1 re-recorded); d: new; c untouched.
    for (const k of ['a', 'a', 'b', 'd']) await w.append(k, rec(k, 10));
    const report = await w.close();
    expect(report.replaced.map((x) => x.key)).toEqual(['a', 'b', 'b']);
    expect(report.rerecorded).toBe(2);
  });

  it('a recording filed under another key takes the place of the one it replaces', async () => {
    const w = await storeWith(['x'], 'record');
    await w.append('o:x', rec('o:x', 10));
    const report = await w.close();
    expect(report.replaced.map((x) => x.key)).toEqual(['x']);
    expect(report.rerecorded).toBe(1);
  });

  it('absent when nothing was replaced: new keys only, or update mode', async () => {
    const fresh = await storeWith(['a'], 'record');
    await fresh.append('b', rec('b', 10));
    expect(await fresh.close()).toEqual({ replaced: [], pruned: [] });
    const update = await storeWith(['a'], 'update');
    await update.append('b', rec('b', 10));
    expect(await update.close()).toEqual({ replaced: [], pruned: [] });
  });
});
