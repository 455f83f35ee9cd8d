// A key inside a base64 text file in a JSON body (OpenAI's `{type:'file', file:{file_data:
// 'data:text/plain;base64,…'}}`, Anthropic's document source `{type:'base64', media_type:
// 'text/plain', data}`) reached the tape, and `tapedeck scan` missed it: only multipart uploads
// were read. The file's text is decoded, masked (credential formats, a `.env`'s secret-named
// variables) and encoded again, so the stored file is base64 of the masked text; the request is
// keyed from that, so it replays, and two files with two keys stay two requests. An answer that
// repeats the file as sent is stored with the file as the request's copy is.
import { createServer, type Server } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { redactor } from '../../src/store/redact.ts';
import { secretsInValue } from '../../src/store/secret-scan.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-b64-file-'));
const KEY = 'sk-proj-PLANTEDB64FILE23abcdefghijklmnopqrstuv';
const OTHER = 'sk-proj-PLANTEDB64FILE24abcdefghijklmnopqrstuv';
const PW = 'Qz8vPLANTEDenvPw31xK';
const b64 = (s: string) => Buffer.from(s).toString('base64');
const envFile = (key: string) => `OPENAI_API_KEY=${key}\nDB_HOST=db.internal\nDB_PASSWORD=${PW}\n`;
let server: Server;
let base = '';
let calls = 0;

beforeAll(async () => {
  // Answers with the body it got, as a debugging or files endpoint might: the file's echo too.
  server = createServer(async (req, res) => {
    let got = '';
    for await (const c of req) got += c;
    calls++;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: `r${calls}`, answer: `call ${calls}`, received: got }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => {
  server.close();
  rmSync(dir, { recursive: true, force: true });
});

const openai = (key: string) => JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: [{ type: 'text', text: 'summarize' }, { type: 'file', file: { filename: '.env', file_data: `data:text/plain;base64,${b64(envFile(key))}` } }] }] });
const anthropic = (key: string) => JSON.stringify({ model: 'claude-x', max_tokens: 10, messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'base64', media_type: 'text/plain', data: b64(envFile(key)) } }] }] });
const post = (f: typeof fetch, path: string, body: string) => f(base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body });

describe('credentials inside base64 text files in JSON bodies', () => {
  it('never reach the tape; the same request replays, another key misses', async () => {
    const tape = join(dir, 'files.tape');
    const rec = createFetch({ tape, mode: 'record' });
    await (await post(rec, '/v1/chat/completions', openai(KEY))).text();
    await (await post(rec, '/v1/messages', anthropic(KEY))).text();
    await rec.close();
    const bytes = readFileSync(tape).toString('latin1');
    for (const s of [KEY, PW, b64(envFile(KEY)), 'PLANTED']) expect(bytes).not.toContain(s);
    const play = createFetch({ tape, mode: 'replay' });
    for (const [path, body] of [['/v1/chat/completions', openai], ['/v1/messages', anthropic]] as const) {
      const again = await post(play, path, body(KEY));
      expect(again.headers.get('x-tapedeck-match'), path).toBe('exact');
      const other = await post(play, path, body(OTHER));
      expect(other.headers.get('x-tapedeck-match'), path).toBe('miss');
    }
    await play.close();
  });

  it('the stored file is base64 of the masked text; other media types, and files without secrets, are kept as sent; scan reads the files', () => {
    const r = redactor({ salt: '0123456789abcdef0123456789abcdef' });
    const doc = JSON.parse(openai(KEY));
    const out = r.value(doc);
    const url: string = out.messages[0].content[1].file.file_data;
    expect(url.startsWith('data:text/plain;base64,')).toBe(true);
    expect(Buffer.from(url.slice('data:text/plain;base64,'.length), 'base64').toString()).toBe(`OPENAI_API_KEY=${r.mask(KEY)}\nDB_HOST=db.internal\nDB_PASSWORD=${r.mask(PW)}\n`);
    const src = r.value(JSON.parse(anthropic(KEY))).messages[0].content[0].source;
    expect(Buffer.from(src.data, 'base64').toString()).toContain(`OPENAI_API_KEY=${r.mask(KEY)}`);
    const gemini = r.value({ inlineData: { mimeType: 'application/json', data: b64(JSON.stringify({ key: KEY })) } });
    expect(Buffer.from(gemini.inlineData.data, 'base64').toString()).toBe(JSON.stringify({ key: r.mask(KEY) }));
    // An image is no text file; a text file with no secret is kept byte for byte.
    const image = { type: 'base64', media_type: 'image/png', data: b64(`x ${KEY}`) };
    expect(r.value(image)).toBe(image);
    const plain = { file_data: `data:text/plain;base64,${b64('hello\nworld\n')}` };
    expect(r.value(plain)).toBe(plain);
    expect(r.mayHaveSecrets(openai(KEY))).toBe(true);
    expect(r.mayHaveSecrets(JSON.stringify(plain))).toBe(false);
    // scan: finds the keys in the files sent, nothing once redacted.
    for (const body of [openai(KEY), anthropic(KEY)]) {
      const found = secretsInValue({ request: { body: JSON.parse(body) } });
      expect(found.map((f) => f.excerpt)).toEqual(expect.arrayContaining([`"sk-p…" (${KEY.length} chars)`, `"${PW.slice(0, 4)}…" (${PW.length} chars)`]));
      expect(secretsInValue({ request: { body: r.value(JSON.parse(body)) } })).toEqual([]);
    }
  });
});
