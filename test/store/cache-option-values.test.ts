// ReplayCache's key options checked by value where they are given. `ignoredArgs: 'seed'` or a
// bare `volatileText: VOLATILE_PATTERNS.uuid` opened fine, then every get() threw an E_ARG about
// normalizeRequest's `ignoreArgs` (another function's option); following its example in open was
// refused as an unknown option. `put(req, v, { raw: 'abc' })` said "raw.body is a undefined".
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { VOLATILE_PATTERNS } from '../../src/index.ts';
import { ReplayCache } from '../../src/store/replay-cache.ts';
import { rejectionOf } from '../helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-cache-values-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const q = (content: string, seed = 1) => ({ model: 'm', seed, messages: [{ role: 'user', content }] });

it('open refuses ignoredArgs that is not a list of strings, naming its own option', async () => {
  const e = await rejectionOf(ReplayCache.open(join(dir, 'a.tape'), { mode: 'update', ignoredArgs: 'seed' as never }));
  expect(e.code).toBe('E_ARG');
  expect(e.message).toContain('ReplayCache.open: ignoredArgs must be an array of strings; got the string "seed".');
  expect(e.hint).toContain("{ ignoredArgs: ['seed'] }");
  expect(e.message).not.toContain('normalizeRequest');
  expect(e.message).not.toContain('ignoreArgs ');
  const mixed = await rejectionOf(ReplayCache.open(join(dir, 'a.tape'), { ignoredArgs: ['seed', 3] as never }));
  expect(mixed.message).toContain('got an array with something else in it');
});

it('open refuses a bare volatileText pattern and says to put it in a list', async () => {
  const e = await rejectionOf(ReplayCache.open(join(dir, 'b.tape'), { mode: 'update', volatileText: VOLATILE_PATTERNS.uuid as never }));
  expect(e.code).toBe('E_ARG');
  expect(e.message).toContain('ReplayCache.open: volatileText must be an array of patterns');
  expect(e.message).toContain('got VOLATILE_PATTERNS.uuid, a single regular expression.');
  expect(e.hint).toBe('Put it in a list: { volatileText: [VOLATILE_PATTERNS.uuid] }.');
  const own = await rejectionOf(ReplayCache.open(join(dir, 'b.tape'), { volatileText: /run-\w+/ as never }));
  expect(own.message).toContain('got a single regular expression.');
  expect(own.hint).toBe('Put it in a list: { volatileText: [/run-\\w+/] }.');
  const empty = await rejectionOf(ReplayCache.open(join(dir, 'b.tape'), { volatileText: [/\d*/] }));
  expect(empty.message).toContain('ReplayCache.open: volatileText: /\\d*/ matches the empty string.');
});

it('the right values open and key as asked; a per-call list and put options are checked too', async () => {
  const tape = join(dir, 'c.tape');
  const rec = await ReplayCache.open(tape, { mode: 'record', ignoredArgs: ['seed'], volatileText: [VOLATILE_PATTERNS.uuid] });
  try {
    expect(await rec.get(q('id 1f0c6a8e-3b7d-4c2a-9e51-0d2b7f4a6c13'))).toBeUndefined();
    await rec.put(q('id 1f0c6a8e-3b7d-4c2a-9e51-0d2b7f4a6c13'), 'answer');
    const put = await rejectionOf(rec.put(q('x'), 1, { ignoredArgs: 'seed' as never }));
    expect(put.message).toContain('ReplayCache.put: ignoredArgs must be an array of strings');
    const get = await rejectionOf(rec.get(q('x'), 'seed' as never));
    expect(get.code).toBe('E_ARG');
    expect(get.message).toContain('ignoredArgs after the request');
    expect(get.message).not.toContain('normalizeRequest');
  } finally {
    await rec.close();
  }
  const c = await ReplayCache.open(tape, { ignoredArgs: ['seed'], volatileText: [VOLATILE_PATTERNS.uuid] });
  try {
    expect(await c.get(q('id 00000000-3b7d-4c2a-9e51-0d2b7f4a6c13', 7))).toBe('answer');
  } finally {
    await c.close();
  }
});

it('put refuses raw given as the bytes themselves, saying raw is { body, contentType? }', async () => {
  const rec = await ReplayCache.open(join(dir, 'd.tape'), { mode: 'record' });
  try {
    const str = await rejectionOf(rec.put(q('s'), 1, { raw: 'abc' as never }));
    expect(str.code).toBe('E_ARG');
    expect(str.message).toContain('raw must be { body, contentType? }');
    expect(str.message).toContain('got the string "abc"');
    expect(str.message).not.toContain('a undefined');
    expect(str.hint).toContain('{ raw: { body: bytes');
    const bytes = await rejectionOf(rec.put(q('b'), 1, { raw: new Uint8Array([1]) as never }));
    expect(bytes.message).toContain('got a Uint8Array');
    const noBody = await rejectionOf(rec.put(q('n'), 1, { raw: { contentType: 'text/plain' } as never }));
    expect(noBody.message).toContain('got an object without `body`');
    await rec.put(q('ok'), 1, { raw: { body: 'abc', contentType: 'text/plain' } });
    expect(rec.recorded).toBe(1);
  } finally {
    await rec.close();
  }
});
