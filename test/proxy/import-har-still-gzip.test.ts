// HAR 1.2 keeps an answer's body decoded in content.text. A writer that breaks that saves base64
// of the gzip-compressed bytes beside `content-encoding: gzip`; the import took those bytes for
// the answer, and the replay served gzip bytes as JSON with no content-encoding, so the client
// could not read it. Such a body is now decoded, with a warning naming the entry; a body that is
// not gzip at all is still refused as one that does not decode, and a gzip file served as such
// (content type application/gzip) is kept as its bytes.
import OpenAI from 'openai';
import { gzipSync } from 'node:zlib';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { importRecordings } from '../../src/proxy/import.ts';
import { createFetch } from '../../src/proxy/fetch.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-import-har-still-gzip-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ASK = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'Say hi' }] };
const ANSWER = JSON.stringify({ id: 'chatcmpl-gz', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: 'hi there' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } });

/** A Playwright-style HAR of one chat call whose answer content is base64 of `body`, with the headers given. */
function har(name: string, body: Buffer, mimeType: string, headers: { name: string; value: string }[]): string {
  const file = join(dir, name);
  writeFileSync(
    file,
    JSON.stringify({
      log: {
        version: '1.2',
        creator: { name: 'Playwright', version: '1.65.2' },
        entries: [
          {
            startedDateTime: '2026-12-07T03:41:50.496Z',
            time: 5,
            request: { method: 'POST', url: 'https://api.openai.com/v1/chat/completions', httpVersion: 'HTTP/1.1', cookies: [], headers: [{ name: 'content-type', value: 'application/json' }], queryString: [], headersSize: -1, bodySize: -1, postData: { mimeType: 'application/json', text: JSON.stringify(ASK) } },
            response: { status: 200, statusText: 'OK', httpVersion: 'HTTP/1.1', cookies: [], headers: [{ name: 'content-type', value: mimeType }, ...headers, { name: 'content-length', value: String(body.length) }], content: { size: body.length, mimeType, encoding: 'base64', text: body.toString('base64') }, redirectURL: '', headersSize: -1, bodySize: body.length },
            cache: {},
            timings: { send: 0, wait: 1, receive: 0 },
          },
        ],
      },
    }),
  );
  return file;
}

describe('a HAR answer saved as base64 of its gzip bytes', () => {
  it('is imported decoded, with a warning naming the entry, and replays through the OpenAI SDK', async () => {
    const file = har('raw-gzip.har', gzipSync(ANSWER), 'application/json', [{ name: 'content-encoding', value: 'gzip' }]);
    const tape = join(dir, 'raw-gzip.tape');
    const warnings: string[] = [];
    await importRecordings(file, tape, { onWarning: (m) => warnings.push(m) });
    const still = warnings.filter((w) => w.includes('log.entries[0]'));
    expect(still).toHaveLength(1);
    expect(still[0]).toContain(file);
    expect(still[0]).toContain('gzip');
    expect(warnings.some((w) => w.includes('upstream'))).toBe(false);
    const f = createFetch({ tape, mode: 'replay' });
    try {
      const client = new OpenAI({ apiKey: 'sk-replay-key-not-used', baseURL: 'https://api.openai.com/v1', fetch: f, maxRetries: 0 });
      const got = await client.chat.completions.create(ASK);
      expect(got.choices[0]!.message.content).toBe('hi there');
      expect(got.id).toBe('chatcmpl-gz');
    } finally {
      await f.close();
    }
  });

  it('a gzip file served as one (application/gzip) is kept as its bytes, without a warning', async () => {
    const gz = gzipSync('a file');
    const file = har('gz-file.har', gz, 'application/gzip', [{ name: 'content-encoding', value: 'gzip' }]);
    const tape = join(dir, 'gz-file.tape');
    const warnings: string[] = [];
    await importRecordings(file, tape, { onWarning: (m) => warnings.push(m) });
    expect(warnings.filter((w) => w.includes('log.entries[0]'))).toEqual([]);
    const f = createFetch({ tape, mode: 'replay' });
    try {
      const r = await f('https://api.openai.com/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ASK) });
      expect(Buffer.from(await r.arrayBuffer()).equals(gz)).toBe(true);
    } finally {
      await f.close();
    }
  });
});
