// `tapedeck paths` on a request object hashes its `messages` array. A request without one, or
// whose `messages` is not an array, once printed the digest of [] (exit 0) or hashed a string's
// text as if it were the list: now it is E_NOT_ARRAY naming the file and the member.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { coreCommand, messagesOf, readInput } from '../../src/cli/core.ts';
import { pathHashes } from '../../src/index.ts';
import { errorOf } from '../helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-paths-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string) => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};

describe('tapedeck paths: the messages member', () => {
  it('a request without "messages" is E_NOT_ARRAY naming the file and member, not the digest of []', () => {
    const p = file('responses.json', '{"model":"gpt-4.1","input":"What is 2+2?"}');
    const e = errorOf(() => coreCommand('paths', p, undefined));
    expect(e.code).toBe('E_NOT_ARRAY');
    expect(e.message).toContain(p);
    expect(e.message).toContain('"messages"');
    expect(e.path).toBe('$.messages');
    expect(e.details.file).toBe(p);
    expect(e.hint).toMatch(/tapedeck key/);
  });

  it('"messages" holding a string (even the JSON text of a list) is refused at the member, not hashed as the list', () => {
    const p = file('msgs-as-text.json', '{"model":"m","messages":"[{\\"role\\":\\"user\\",\\"content\\":\\"hi\\"}]"}');
    const e = errorOf(() => coreCommand('paths', p, undefined));
    expect(e.code).toBe('E_NOT_ARRAY');
    expect(e.message).toContain('is a string');
    const q = file('msgstr.json', '{"model":"m","messages":"hi"}');
    const f = errorOf(() => coreCommand('paths', q, undefined));
    expect(f.code).toBe('E_NOT_ARRAY');
    expect(f.offset).toBe(24); // the member's value, not byte 0 of the file
    expect(errorOf(() => messagesOf(Buffer.from('{"messages":null}'), '-')).message).toMatch(/^stdin: .* is null/);
  });

  it('a request with a messages array, and a bare array, hash as before', () => {
    const msgs = [{ role: 'user', content: 'hi' }];
    const p = file('req.json', JSON.stringify({ model: 'm', messages: msgs }));
    expect(messagesOf(readInput(p), p)).toEqual(msgs);
    const a = file('arr.json', JSON.stringify(msgs));
    expect(pathHashes(messagesOf(readInput(a), a) as Uint8Array)).toEqual(pathHashes(msgs));
  });
});
