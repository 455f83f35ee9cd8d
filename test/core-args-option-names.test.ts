// Misspelt option names given from plain JavaScript to the main entry's hashing functions,
// createMatcher and the tape JSON export and import are E_ARG naming the option, the nearest
// real name and where the options are described. Before, each was dropped without a word:
// `hashValue(v, { ignorekeys: ['ts'] })` hashed `ts` in, `createMatcher({ allowRepeat: true })`
// missed every repeated request, `exportTapeJSON(tape, { reveiw: true })` exported the plain form.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { backend, canonicalize, canonicalizeJSON, createMatcher, hashJSON, hashMany, hashValue, pathHashes } from '../src/index.ts';
import { exportTapeJSON, importTapeJSON } from '../src/store/index.ts';
import { errorOf } from './helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-option-names-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What a promise rejects with (undefined if it resolves). */
const rejection = (p: Promise<unknown>): Promise<unknown> => p.then(() => undefined, (e: unknown) => e);

describe(`option names (${backend()})`, () => {
  it('each hashing function of the main entry refuses a misspelt option, naming the right one', () => {
    const v = { ts: 1, role: 'user' };
    for (const [name, f] of [
      ['canonicalize', () => canonicalize(v, { ignorekeys: ['ts'] } as never)],
      ['canonicalizeJSON', () => canonicalizeJSON('{"ts":1}', { ignorekeys: ['ts'] } as never)],
      ['hashValue', () => hashValue(v, { ignorekeys: ['ts'] } as never)],
      ['hashJSON', () => hashJSON('{"ts":1}', { ignorekeys: ['ts'] } as never)],
      ['hashMany', () => hashMany([v], { ignorekeys: ['ts'] } as never)],
      ['pathHashes', () => pathHashes([v], { ignorekeys: ['ts'] } as never)],
    ] as const) {
      const e = errorOf(f);
      expect(e.code, name).toBe('E_ARG');
      expect(e.message).toContain(`Unknown ${name} option "ignorekeys".`);
      expect(e.hint).toContain('Did you mean ignoreKeys?');
    }
    expect(errorOf(() => pathHashes({ messages: [v] }, { memberr: 'messages' } as never)).hint).toContain('Did you mean member?');
    expect(errorOf(() => hashValue(v, { rootonly: true } as never)).hint).toContain('Did you mean rootOnly?');
    // Right names still work, on the same object every call (checked once).
    const opts = { ignoreKeys: ['ts'], rootOnly: true };
    for (let i = 0; i < 3; i++) expect(hashValue(v, opts)).toBe(hashValue({ role: 'user' }));
    expect(pathHashes({ messages: [v] }, { member: 'messages', ignoreKeys: ['ts'] }).messageHashes).toEqual([hashValue({ role: 'user' })]);
  });

  it('createMatcher refuses a misspelt option; the right one works', () => {
    const body = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };
    const recordings = [{ request: body, response: 'recorded' }];
    const e = errorOf(() => createMatcher({ recordings, allowRepeat: true } as never));
    expect(e.code).toBe('E_ARG');
    expect(e.message).toContain('Unknown createMatcher option "allowRepeat".');
    expect(e.hint).toContain('Did you mean allowRepeats?');
    expect(e.hint).toContain('docs/matching.md');
    expect(errorOf(() => createMatcher({ recordings, matchMode: 'exact' } as never)).message).toContain('"matchMode"');
    const m = createMatcher({ recordings, allowRepeats: true, mode: 'exact' });
    expect(m.match(body).recording.response).toBe('recorded');
    expect(m.match(body).recording.response).toBe('recorded');
  });

  it("a matcher's match() refuses a misspelt option; the right one works", () => {
    const body = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };
    const m = createMatcher({ recordings: [{ request: body, response: 'recorded' }], allowRepeats: true, mode: 'exact' });
    const e = errorOf(() => m.match(body, { diagnoze: false } as never));
    expect(e.code).toBe('E_ARG');
    expect(e.message).toContain('Unknown match option "diagnoze".');
    expect(e.hint).toContain('Did you mean diagnose?');
    expect(m.match(body, { diagnose: false }).recording.response).toBe('recorded');
    expect(m.mode).toBe('exact');
    expect(m.keys()).toHaveLength(1);
  });

  it('exportTapeJSON and importTapeJSON refuse a misspelt option', async () => {
    const json = JSON.stringify({ tapedeck: 'tape', version: 1, records: [] });
    const imported = await rejection(importTapeJSON(json, join(dir, 'a.tape'), { forse: true } as never));
    expect((imported as { code?: string }).code).toBe('E_ARG');
    expect((imported as Error).message).toContain('Unknown importTapeJSON option "forse".');
    const exported = await rejection(exportTapeJSON(join(dir, 'a.tape'), { reveiw: true } as never));
    expect((exported as { code?: string }).code).toBe('E_ARG');
    expect((exported as Error).message).toContain('Unknown exportTapeJSON option "reveiw".');
    expect((exported as { hint?: string }).hint).toContain('Did you mean review?');
  });
});
