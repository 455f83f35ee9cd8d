// RecordCollection.open given a record kind's factory instead of the kind (`kind: cacheRecords`,
// as its own doc examples wrote it): the record run went through, and every later open of that
// store failed with Node's "this.kind.keysOf is not a function". Now the open refuses the kind at
// once with E_ARG naming the option and the call that makes a kind, and writes nothing.
import { describe, expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { RecordCollection } from '../../src/store/collection.ts';
import { MemoryBackend } from '../../src/store/backends/memory.ts';
import { cacheRecords, httpRecords } from '../../src/store/records.ts';

async function openError(kind: unknown, mode: 'record' | 'replay' | 'passthrough' = 'record'): Promise<unknown> {
  const be = new MemoryBackend({ name: 'kinds' });
  return RecordCollection.open(be, { mode, kind } as never).then(async (col) => {
    await col.close();
    return undefined;
  }, (e: unknown) => e);
}

describe('RecordCollection.open with something that is not a record kind', () => {
  it('the cacheRecords factory itself: E_ARG saying to call it', async () => {
    const e = await openError(cacheRecords);
    expect(e).toBeInstanceOf(TapedeckError);
    expect((e as TapedeckError).code).toBe('E_ARG');
    expect((e as TapedeckError).message).toContain('got the function cacheRecords itself');
    expect((e as TapedeckError).hint).toContain('kind: cacheRecords([])');
    expect((e as TapedeckError).details.option).toBe('kind');
  });

  it('the httpRecords factory in replay and passthrough mode too: E_ARG saying httpRecords()', async () => {
    for (const mode of ['replay', 'passthrough'] as const) {
      const e = await openError(httpRecords, mode);
      expect((e as TapedeckError).code).toBe('E_ARG');
      expect((e as TapedeckError).hint).toContain('kind: httpRecords()');
    }
  });

  it('no kind at all: E_ARG naming what it got', async () => {
    const e = await openError(undefined);
    expect((e as TapedeckError).code).toBe('E_ARG');
    expect((e as TapedeckError).message).toContain('got undefined');
  });

  it('a kind the factory made opens as before', async () => {
    expect(await openError(cacheRecords([]))).toBeUndefined();
    expect(await openError(httpRecords(), 'replay')).toBeUndefined();
  });
});
