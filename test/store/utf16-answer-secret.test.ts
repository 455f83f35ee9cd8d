// A key in an answer written in UTF-16 (its charset declared, or a byte order mark): every check
// read the bytes as UTF-8 or Latin-1, where a UTF-16 key is its characters with a NUL between
// them, so the key reached the tape in clear (ReplayCache's raw body). It is now masked, and the
// body written back in its own encoding.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { ReplayCache } from '../../src/store/replay-cache.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-utf16-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const SK = `sk-proj-${'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0'}`;
const q = (content: string) => ({ model: 'm', messages: [{ role: 'user', content }] });
const be = (s: string) => Buffer.from(s, 'utf16le').swap16();

it.each([
  ['utf-16le, declared', Buffer.from(JSON.stringify({ text: `key ${SK}` }), 'utf16le'), 'application/json; charset=utf-16le', 'utf16le'],
  ['utf-16be, declared', be(JSON.stringify({ text: `key ${SK}` })), 'text/plain; charset=UTF-16BE', 'be'],
  ['utf-16 with a byte order mark', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(`key ${SK} here`, 'utf16le')]), 'text/plain; charset=utf-16', 'utf16le'],
  ['a byte order mark, no charset', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(`key ${SK} here`, 'utf16le')]), 'text/plain', 'utf16le'],
] as const)('%s: the key is masked, the body stays in its encoding', async (name, body, contentType, enc) => {
  const tape = join(dir, `${name.replace(/\W/g, '_')}.tape`);
  const c = await ReplayCache.open(tape, { mode: 'record' });
  try {
    await c.put(q(name), { ok: 1 }, { raw: { body, contentType } });
  } finally {
    await c.close();
  }
  const disk = readFileSync(tape);
  const wide = (s: string) => (enc === 'be' ? be(s) : Buffer.from(s, 'utf16le'));
  expect(disk.includes(wide(SK.slice(8, 30)))).toBe(false);
  const r = await ReplayCache.open(tape, { mode: 'replay' });
  try {
    const raw = Buffer.from((await r.getRecord(q(name)))!.raw!.body);
    const text = new TextDecoder(enc === 'be' ? 'utf-16be' : 'utf-16le').decode(raw);
    expect(text).toContain('key [REDACTED:');
    expect(text).not.toContain(SK);
  } finally {
    await r.close();
  }
});

it('an audio body that opens with the same two bytes is kept byte for byte', async () => {
  const tape = join(dir, 'audio.tape');
  const body = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(`sk-proj-${'x'.repeat(40)}`, 'utf16le')]);
  const c = await ReplayCache.open(tape, { mode: 'record' });
  try {
    await c.put(q('audio'), { ok: 1 }, { raw: { body, contentType: 'audio/mpeg' } });
  } finally {
    await c.close();
  }
  const r = await ReplayCache.open(tape, { mode: 'replay' });
  try {
    expect(Buffer.from((await r.getRecord(q('audio')))!.raw!.body).equals(body)).toBe(true);
  } finally {
    await r.close();
  }
});
