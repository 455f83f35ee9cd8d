// ReplayCache.put of an answer with a reference cycle: redaction copied it without end (the
// process ran out of memory after ~48 s and 4 GB), and with secrets kept the key sort overflowed
// the stack with a bare RangeError. Now E_CYCLE, at once, naming where the value refers back;
// nothing is written, and the cache goes on working. A value that shares an object in two places
// (no cycle) is stored as before.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ReplayCache } from '../../src/store/replay-cache.ts';
import { assertNoCycle } from '../../src/store/cycle.ts';
import { TapedeckError } from '../../src/errors.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-put-cycle-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const req = { model: 'm', messages: [{ role: 'user', content: 'c' }] };

describe('ReplayCache.put of a value with a cycle', () => {
  it.each([false, true])('E_CYCLE with its path, nothing written (keepSecrets: %s)', async (keepSecrets) => {
    const tape = join(dir, `c-${keepSecrets}.tape`);
    const c = await ReplayCache.open(tape, { mode: 'record', ...(keepSecrets ? { redact: { keepSecrets: true } } : {}) });
    try {
      const o: Record<string, unknown> = { a: 1, list: [{ b: 2 }] };
      (o.list as Record<string, unknown>[])[0]!.up = o;
      const err = await c.put(req, o).then(() => undefined, (e: unknown) => e);
      expect(err).toBeInstanceOf(TapedeckError);
      expect((err as TapedeckError).code).toBe('E_CYCLE');
      expect((err as TapedeckError).message.startsWith('value.list[0].up refers back to value: a value with a reference cycle cannot be stored.')).toBe(true);
      // Still usable, and the failed put wrote nothing.
      const shared = { x: 1 };
      await c.put(req, { first: shared, second: shared });
    } finally {
      await c.close();
    }
    const r = await ReplayCache.open(tape, { mode: 'replay' });
    try {
      expect(await r.get(req)).toEqual({ first: { x: 1 }, second: { x: 1 } });
    } finally {
      await r.close();
    }
  });

  it('finds cycles through Maps and Sets, and none in deep or shared values', () => {
    const m = new Map<string, unknown>();
    m.set('k', { back: m });
    expect(() => assertNoCycle({ m }, 'value')).toThrow('value.m.entries[0][1].back refers back to value.m');
    const s = new Set<unknown>();
    s.add([s]);
    expect(() => assertNoCycle(s, 'meta')).toThrow('meta.values[0][0] refers back to meta');
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(() => assertNoCycle(deep, 'value')).not.toThrow();
    const shared = [1, 2];
    expect(() => assertNoCycle({ a: shared, b: [shared, shared] }, 'value')).not.toThrow();
  });
});
