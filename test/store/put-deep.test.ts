// ReplayCache.put of a value nested deeper than a tape stores: a bare RangeError (no code, no
// hint) from the walk that boxes Maps, or an E_TYPE telling the user to pass "plain data", which
// the value was. Now E_DEPTH with the limit and where; nothing is written; up to the limit it is
// stored and replayed as it was.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { ReplayCache } from '../../src/store/replay-cache.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-put-deep-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const q = { model: 'm', messages: [{ role: 'user', content: 'deep' }] };

function nested(depth: number, withMap: boolean): unknown {
  const root: Record<string, unknown> = {};
  let cur = root;
  for (let i = 0; i < depth; i++) {
    const next: Record<string, unknown> = {};
    cur.n = withMap && i === 3 ? new Map([['m', next]]) : next;
    cur = next;
  }
  return root;
}

it.each([
  [900, false],
  [900, true],
  [1500, false],
  [1500, true],
  [3000, true],
  [20000, false],
])('a value %i levels deep (a Map inside: %s)', async (depth, withMap) => {
  const tape = join(dir, `deep-${depth}-${withMap}.tape`);
  const c = await ReplayCache.open(tape, { mode: 'record' });
  let err: unknown;
  try {
    err = await c.put(q, nested(depth, withMap)).then(() => undefined, (e: unknown) => e);
    await c.put({ ...q, messages: [{ role: 'user', content: 'after' }] }, 'still works');
  } finally {
    await c.close();
  }
  if (depth < 1000) {
    expect(err).toBeUndefined();
    const r = await ReplayCache.open(tape, { mode: 'replay' });
    try {
      let got = (await r.get(q)) as Record<string, unknown>;
      let levels = 0;
      while (got && typeof got === 'object' && 'n' in got) {
        const n = got.n;
        got = (n instanceof Map ? n.get('m') : n) as Record<string, unknown>;
        levels++;
      }
      expect(levels).toBe(depth);
    } finally {
      await r.close();
    }
  } else {
    expect(err).toBeInstanceOf(TapedeckError);
    expect((err as TapedeckError).code).toBe('E_DEPTH');
    expect((err as TapedeckError).message).toContain('nests deeper than the 1000 levels a tape stores');
    expect((err as TapedeckError).hint).toBeTruthy();
  }
});
