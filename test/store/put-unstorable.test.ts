// ReplayCache.put of a value that has no stored form: a Promise (`cache.put(request, res.json())`,
// the inner await forgotten), a WeakMap or WeakSet (whose contents cannot be read), or a function.
// The put resolved and recorded `{}` (or nothing) in its place, and every later replay served that
// silently. Now E_TYPE, naming where the value is and, for a Promise, the missing await; nothing
// is written, and the cache goes on working.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { ReplayCache } from '../../src/store/replay-cache.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-put-unstorable-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const req = (content: string) => ({ model: 'm', messages: [{ role: 'user', content }] });

describe('ReplayCache.put of a value with no stored form', () => {
  const cases: [string, () => unknown, string, RegExp][] = [
    ['a Promise (a forgotten await)', () => Promise.resolve({ answer: 'hi' }), 'value', /a Promise.*await/],
    ['a Promise inside the value', () => ({ choices: [{ message: Promise.resolve('hi') }] }), 'value.choices[0].message', /a Promise.*await/],
    ['a thenable', () => ({ then: (ok: (v: unknown) => void) => ok(1) }), 'value', /a Promise/],
    ['a function', () => () => 'hi', 'value', /a function/],
    ['a WeakMap', () => ({ cache: new WeakMap() }), 'value.cache', /a WeakMap/],
    ['a WeakSet', () => new WeakSet(), 'value', /a WeakSet/],
  ];
  it.each(cases)('%s: E_TYPE naming where it is, nothing written', async (_name, make, path, what) => {
    const tape = join(dir, `${path.replace(/\W/g, '_')}-${Math.random().toString(36).slice(2)}.tape`);
    const c = await ReplayCache.open(tape, { mode: 'record' });
    try {
      const err = await c.put(req('a'), make()).then(() => undefined, (e: unknown) => e);
      expect(err).toBeInstanceOf(TapedeckError);
      expect((err as TapedeckError).code).toBe('E_TYPE');
      expect((err as TapedeckError).message).toMatch(what);
      expect((err as TapedeckError).message.startsWith(`${path} is `)).toBe(true);
      expect((err as TapedeckError).hint).toBeTruthy();
      // Still usable.
      await c.put(req('b'), { answer: 'b' });
    } finally {
      await c.close();
    }
    const r = await ReplayCache.open(tape, { mode: 'replay' });
    try {
      expect(await r.get(req('b'))).toEqual({ answer: 'b' });
      await expect(r.get(req('a'))).rejects.toMatchObject({ code: 'E_MISS' });
    } finally {
      await r.close();
    }
  });

  it('a function member is dropped as JSON drops it, and a class instance is stored as its data', async () => {
    class Answer {
      constructor(readonly text: string) {}
      shout(): string {
        return this.text.toUpperCase();
      }
    }
    const tape = join(dir, 'members.tape');
    const c = await ReplayCache.open(tape, { mode: 'record' });
    try {
      await c.put(req('m'), { text: 'x', format: () => 'x', answer: new Answer('y') });
    } finally {
      await c.close();
    }
    const r = await ReplayCache.open(tape, { mode: 'replay' });
    try {
      const got = (await r.get(req('m'))) as Record<string, unknown>;
      expect(got.text).toBe('x');
      expect(got.format).toBeUndefined();
      expect(got.answer).toEqual({ text: 'y' });
    } finally {
      await r.close();
    }
  });
});
