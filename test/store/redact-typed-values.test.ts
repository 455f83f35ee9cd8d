// A key inside a value of one of the types a tape keeps (a Map's key, a Set's item, an Error's
// message or cause, the text in a byte array) reached the tape in clear through ReplayCache.put,
// though the same key in a string or an object's member is masked, and `tapedeck scan` told the
// user "today's recorder redacts these". Each is masked now, the value keeping its type.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { ReplayCache } from '../../src/store/replay-cache.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-redact-typed-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const SK = 'sk-proj-K9b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0';
const q = (content: string) => ({ model: 'm', messages: [{ role: 'user', content }] });
const MASK = /\[REDACTED:[0-9a-f]{16}\]/;

it('masks a key in a Map key, a Set item, an Error, and byte arrays, keeping each type', async () => {
  const tape = join(dir, 'typed.tape');
  const err = new Error(`failed with key ${SK}`, { cause: { detail: `retry with ${SK}` } });
  const values = {
    inMap: new Map<unknown, unknown>([
      ['authorization', `Bearer ${SK}`],
      [SK, 'a key as a map key'],
      [1, `value ${SK}`],
    ]),
    inSet: new Set([SK, 'plain']),
    inError: err,
    inBytes: new TextEncoder().encode(`token ${SK}`),
    inBuffer: Buffer.from(`token=${SK}&x=1`),
    // A file's bytes (a NUL in them): masked at their own length, every other byte in place.
    inFile: Buffer.concat([Buffer.from([0x49, 0x44, 0x33, 0, 0, 0]), Buffer.from(` key ${SK} `), Buffer.from([0, 0xff, 0xfb])]),
    floats: Float64Array.of(1.5, 2.5),
    at: new Date(0),
  };
  const rec = await ReplayCache.open(tape, { mode: 'record' });
  try {
    for (const [name, v] of Object.entries(values)) await rec.put(q(name), v);
  } finally {
    await rec.close();
  }
  const disk = readFileSync(tape);
  expect(disk.includes(Buffer.from(SK.slice(8)))).toBe(false);

  const r = await ReplayCache.open(tape, { mode: 'replay' });
  try {
    const m = (await r.get(q('inMap'))) as Map<unknown, unknown>;
    expect(m).toBeInstanceOf(Map);
    expect([...m.keys()].filter((k) => typeof k === 'string' && MASK.test(k))).toHaveLength(1);
    expect(m.get(1)).toMatch(MASK);
    expect(m.get('authorization')).toMatch(MASK);
    const s = (await r.get(q('inSet'))) as Set<string>;
    expect(s).toBeInstanceOf(Set);
    expect([...s].some((x) => MASK.test(x)) && s.has('plain')).toBe(true);
    const e = (await r.get(q('inError'))) as Error;
    expect(e).toBeInstanceOf(Error);
    expect(e.message).toMatch(/^failed with key \[REDACTED:[0-9a-f]{16}\]$/);
    expect(JSON.stringify(e.cause)).toMatch(MASK);
    const b = (await r.get(q('inBytes'))) as Uint8Array;
    expect(b).toBeInstanceOf(Uint8Array);
    expect(new TextDecoder().decode(b)).toMatch(/^token \[REDACTED:[0-9a-f]{16}\]$/);
    expect(new TextDecoder().decode((await r.get(q('inBuffer'))) as Uint8Array)).toMatch(/^token=\[REDACTED:[0-9a-f]{16}\]&x=1$/);
    const file = (await r.get(q('inFile'))) as Uint8Array;
    expect(file.length).toBe(values.inFile.length);
    expect(Buffer.from(file.subarray(0, 6)).equals(values.inFile.subarray(0, 6))).toBe(true);
    expect(Buffer.from(file.subarray(-3)).equals(values.inFile.subarray(-3))).toBe(true);
    expect(Buffer.from(file).includes(Buffer.from(SK.slice(8)))).toBe(false);
    expect([...((await r.get(q('floats'))) as Float64Array)]).toEqual([1.5, 2.5]);
    expect(((await r.get(q('at'))) as Date).getTime()).toBe(0);
  } finally {
    await r.close();
  }
});
