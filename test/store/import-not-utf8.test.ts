// A recording with a byte that is no UTF-8 (a Latin-1 `é` an old tool wrote) was imported with
// exit 0, the byte turned into U+FFFD in the answer (a user trial: VCR.py and talkback; a HAR too).
// docs/migrate.md: "A file that is no UTF-8 text is E_IMPORT_FORMAT saying what it is, whatever
// its name": refused now, naming the byte's offset; in a talkback directory, the file's entry.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { importRecordings } from '../../src/proxy/import.ts';
import { firstNonUtf8 } from '../../src/store/import/exchange.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-not-utf8-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const CASSETTE = `interactions:
- request:
    body: '{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}'
    headers:
      Content-Type: [application/json]
    method: POST
    uri: https://api.openai.com/v1/chat/completions
  response:
    body: {string: '{"id":"x","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"OLD FORM"},"finish_reason":"stop"}]}'}
    headers:
      Content-Type: [application/json]
    status: {code: 200, message: OK}
version: 1
`;

/** `text` with `OLD FORM` followed by a Latin-1 é (0xe9, no UTF-8), and the offset of that byte. */
function latin1(text: string): { bytes: Buffer; at: number } {
  const at = Buffer.byteLength(text.slice(0, text.indexOf('OLD FORM') + 'OLD FORM'.length));
  return { bytes: Buffer.concat([Buffer.from(text.slice(0, text.indexOf('OLD FORM') + 8)), Buffer.from([0xe9]), Buffer.from(text.slice(text.indexOf('OLD FORM') + 8))]), at };
}

async function refusal(p: Promise<unknown>): Promise<TapedeckError> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(TapedeckError);
  return e as TapedeckError;
}

describe('a recording with a byte that is no UTF-8', () => {
  it('refuses a VCR.py cassette, naming the byte', async () => {
    const { bytes, at } = latin1(CASSETTE);
    const src = join(dir, 'latin1.yaml');
    writeFileSync(src, bytes);
    const e = await refusal(importRecordings(src, join(dir, 'latin1.tape')));
    expect(e.code).toBe('E_IMPORT_FORMAT');
    expect(e.message).toContain(`${src} is not UTF-8 text: byte ${at} (0xe9) is no UTF-8, and a VCR.py cassette is read as UTF-8 text; no tape written.`);
    expect(e.details).toMatchObject({ file: src, offset: at });
    expect(e.hint).toMatch(/iconv -f LATIN1 -t UTF-8/);
  });

  it('refuses a HAR read in chunks, naming the byte', async () => {
    const text = JSON.stringify({ id: 'x', content: 'OLD FORM' });
    const har = `{"log":{"version":"1.2","creator":{"name":"t","version":"1"},"entries":[\n${JSON.stringify({
      startedDateTime: '2026-01-01T00:00:00.000Z',
      time: 1,
      request: { method: 'GET', url: 'https://api.openai.com/v1/models', httpVersion: 'HTTP/1.1', headers: [], queryString: [], bodySize: 0 },
      response: { status: 200, statusText: 'OK', httpVersion: 'HTTP/1.1', headers: [{ name: 'content-type', value: 'application/json' }], content: { size: text.length, mimeType: 'application/json', text } },
      timings: { send: 0, wait: 1, receive: 0 },
    })}\n]}}`;
    const { bytes, at } = latin1(har);
    const src = join(dir, 'latin1.har');
    writeFileSync(src, bytes);
    const e = await refusal(importRecordings(src, join(dir, 'latin1-har.tape'), {}, { chunkBytes: 64 }));
    expect(e.code).toBe('E_IMPORT_FORMAT');
    expect(e.details).toMatchObject({ file: src, offset: at });
  });

  it('refuses a talkback tape in a directory as that entry', async () => {
    const tapes = join(dir, 'tb');
    mkdirSync(tapes);
    const tape = `{ meta: { createdAt: '2026-12-06T21:00:09.000Z', host: 'https://api.openai.com/' }, req: { headers: {}, url: '/v1/models', method: 'GET', body: '' }, res: { status: 200, headers: { 'content-type': ['text/plain'] }, body: 'OLD FORM' } }`;
    const { bytes, at } = latin1(tape);
    writeFileSync(join(tapes, 'unnamed-1.json5'), bytes);
    const e = await refusal(importRecordings(tapes, join(dir, 'tb.tape')));
    expect(e.code).toBe('E_IMPORT_ENTRY');
    expect(e.message).toContain(`is not UTF-8 text: byte ${at} (0xe9) is no UTF-8`);
  });

  it('finds the first byte that is no UTF-8, past valid multi-byte characters', () => {
    expect(firstNonUtf8(Buffer.from('plain'))).toBe(-1);
    expect(firstNonUtf8(Buffer.from('é€😀'))).toBe(-1);
    const long = Buffer.concat([Buffer.from('é'.repeat(5000)), Buffer.from([0xe9, 0x41]), Buffer.from('€'.repeat(10))]);
    expect(firstNonUtf8(long)).toBe(10000);
    expect(firstNonUtf8(Buffer.concat([Buffer.from('ab'), Buffer.from('€').subarray(0, 2)]))).toBe(2);
  });
});
