// RecordCollection.append of a record with a reference cycle: the key sort recursed until the
// stack overflowed, a bare RangeError (ReplayCache.put said E_CYCLE). Now the same E_CYCLE, with
// where the record refers back; nothing is written, and the collection goes on recording.
import { describe, expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { RecordCollection, type RecordKind } from '../../src/store/collection.ts';
import { MemoryBackend } from '../../src/store/backends/memory.ts';

type Mine = { kind: 'mine'; key: string; [k: string]: unknown };
const kind: RecordKind<Mine> = {
  name: 'mine',
  keysOf: (_head, value) => {
    const v = value();
    return v?.kind === 'mine' ? v.key : undefined;
  },
  is: (v): v is Mine => (v as Mine | undefined)?.kind === 'mine',
} as RecordKind<Mine>;

describe('RecordCollection.append of a record with a cycle', () => {
  it('E_CYCLE naming where it refers back; nothing written, later appends still work', async () => {
    const be = new MemoryBackend({ name: 'cycles' });
    const col = await RecordCollection.open(be, { mode: 'record', kind });
    const cyc: Mine = { kind: 'mine', key: 'k3', nested: { list: [] as unknown[] } };
    ((cyc.nested as { list: unknown[] }).list).push(cyc);
    const err = await col.append('k3', cyc).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(TapedeckError);
    expect((err as TapedeckError).code).toBe('E_CYCLE');
    expect((err as TapedeckError).message).toContain('record.nested.list[0] refers back to record');
    await col.append('k1', { kind: 'mine', key: 'k1', ok: true });
    await col.close();
    const { records } = await be.load({ create: false });
    expect(records.map((r) => (r.value() as Mine).key)).toEqual(['k1']);
  });

  it('a deep record without a cycle is not mistaken for one', async () => {
    const col = await RecordCollection.open(new MemoryBackend({ name: 'deep' }), { mode: 'record', kind });
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 200; i++) deep = { d: deep };
    await col.append('k', { kind: 'mine', key: 'k', deep });
    await col.close();
  });
});
