// A HAR, VCR.py cassette or nock recording piped to `tapedeck import - <tape>` has no file name
// to tell its format by. Without --from it was refused as "none of the formats import reads:
// found an object with keys log" (a HAR, by the key that makes it one) or as invalid JSON (a
// cassette); now the error names what stdin holds and the flag that reads it, and --from reads it.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { vcrCassette, vcrInteraction } from './vcr-cassette.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-import-stdin-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const CLI = join(import.meta.dirname, '..', '..', 'dist', 'cli.js');

const ask = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] });
const answer = JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: 'Hello' }, finish_reason: 'stop' }] });
const HAR = JSON.stringify({
  log: {
    version: '1.2',
    creator: { name: 'test', version: '1' },
    entries: [
      {
        startedDateTime: '2026-01-01T00:00:00.000Z',
        time: 5,
        request: { method: 'POST', url: 'https://api.openai.com/v1/chat/completions', httpVersion: 'HTTP/1.1', headers: [{ name: 'content-type', value: 'application/json' }], postData: { mimeType: 'application/json', text: ask } },
        response: { status: 200, statusText: 'OK', headers: [{ name: 'content-type', value: 'application/json' }], content: { size: answer.length, mimeType: 'application/json', text: answer } },
        timings: { send: 1, wait: 3, receive: 1 },
      },
    ],
  },
});
const CASSETTE = vcrCassette(vcrInteraction(ask, answer));
// Recorded with enable_reqheaders_recording (docs/migrate.md): without `reqheaders` the import warns.
const NOCK = JSON.stringify([{ scope: 'https://api.openai.com:443', method: 'POST', path: '/v1/chat/completions', body: JSON.parse(ask), status: 200, response: JSON.parse(answer), rawHeaders: { 'content-type': 'application/json' }, reqheaders: { 'content-type': 'application/json' } }]);

const run = (input: string, ...args: string[]) => spawnSync(process.execPath, [CLI, 'import', '-', ...args], { input, encoding: 'utf8' });

describe('a recording piped to tapedeck import -', () => {
  it.each([
    ['har', 'a HAR', HAR],
    ['vcr', 'a VCR.py cassette', CASSETTE],
    ['nock', 'a nock recording', NOCK],
  ])('%s without --from: names what stdin holds and the flag; exit 1, no stack, no tape', (format, what, input) => {
    const tape = join(dir, `${format}.tape`);
    const r = run(input, tape);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`E_IMPORT_FORMAT stdin holds ${what}, and a recording read from stdin needs its format named; no tape written.`);
    expect(r.stderr).toContain(`tapedeck import - ${tape} --from ${format}`);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(existsSync(tape)).toBe(false);
  });

  it.each([['har', HAR], ['vcr', CASSETTE], ['nock', NOCK]])('%s with --from is imported', (format, input) => {
    const tape = join(dir, `${format}-from.tape`);
    const r = run(input, tape, '--from', format);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/^wrote .*: 1 record from /);
    expect(existsSync(tape)).toBe(true);
  });
});
