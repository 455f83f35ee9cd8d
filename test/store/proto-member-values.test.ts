// ReplayCache values read back from a tape: a member named "__proto__" (JSON.parse makes one from
// model or user text) came back renamed "__proto_" (msgpackr's guard against prototype pollution
// renames it), and an object inside a Map was exported sorted but written in its own order, so
// tape -> export -> import was not byte for byte. Now the member is an own data member again (the
// prototype untouched) and the export keeps the stored order of objects inside Maps and Sets.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ReplayCache } from '../../src/store/replay-cache.ts';
import { exportTapeJSON, importTapeJSON } from '../../src/store/export.ts';
import { readTape } from '../../src/store/tape-file.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-proto-member-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const q = (c: string) => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: c }] });

async function tapeOf(name: string, puts: [string, unknown][]): Promise<string> {
  const tape = join(dir, name);
  const cache = await ReplayCache.open(tape, { mode: 'record' });
  for (const [k, v] of puts) await cache.put(q(k), v);
  await cache.close();
  return tape;
}

describe('ReplayCache values with a "__proto__" member or objects inside Maps', () => {
  it('replays a "__proto__" member as an own member, the prototype untouched', async () => {
    const tape = await tapeOf('proto.tape', [
      ['proto', JSON.parse('{"__proto__":{"role":"admin"},"x":1,"nested":[{"__proto__":2}]}')],
      ['genuine', { __proto_: 'kept', y: 2 }],
    ]);
    const cache = await ReplayCache.open(tape, { mode: 'replay' });
    const v = (await cache.get(q('proto'))) as Record<string, unknown>;
    const g = (await cache.get(q('genuine'))) as Record<string, unknown>;
    await cache.close();
    expect(Object.keys(v)).toEqual(['__proto__', 'nested', 'x']);
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(v, '__proto__')?.value).toEqual({ role: 'admin' });
    expect(Object.keys((v.nested as object[])[0]!)).toEqual(['__proto__']);
    expect(({} as { role?: string }).role).toBeUndefined();
    expect(Object.keys(g)).toEqual(['__proto_', 'y']);
    expect(g.__proto_).toBe('kept');
  });

  it('tape -> export -> import gives the same bytes', async () => {
    const tape = await tapeOf('roundtrip.tape', [
      ['map', new Map<string, unknown>([['k', { z: 1, a: 2, inner: { d: 1, c: 2 } }]])],
      ['set', new Set([{ y: 1, b: 2 }])],
      ['proto', JSON.parse('{"__proto__":{"role":"admin"},"x":1}')],
    ]);
    const json = await exportTapeJSON(tape);
    expect(json).toContain('"__proto__"');
    expect(json).not.toContain('"__proto_"');
    const back = join(dir, 'back.tape');
    await importTapeJSON(json, back);
    expect(readFileSync(back).equals(readFileSync(tape))).toBe(true);
    expect(await exportTapeJSON(back)).toBe(json);
    const map = (await readTape(back)).records[0]!.value as { value: Map<string, Record<string, unknown>> };
    expect(Object.keys(map.value.get('k')!)).toEqual(['z', 'a', 'inner']);
  });
});
