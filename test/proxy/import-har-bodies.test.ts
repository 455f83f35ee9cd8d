// HAR bodies that are not in `text`: Polly.js's node-http adapter keeps a content-encoded answer
// as the JSON array of its wire chunks, base64 each (gzip bytes, not the decoded text), and
// Playwright's recordHar with content: 'attach' keeps request bodies, like answers, in files
// beside the HAR named by `postData._file` (with `text: ''`). The fixtures are small literal
// recordings in those tools' own shapes (as @pollyjs/persister and Playwright 1.65 wrote them
// in a trial run against a loopback fake of the OpenAI API).
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { importRecordings } from '../../src/proxy/import.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-import-har-bodies-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ORIGIN = 'http://127.0.0.1:4556';
const chat = (content: string, stream = false) => JSON.stringify({ model: 'gpt-4o-mini', ...(stream ? { stream: true } : {}), messages: [{ role: 'user', content }] });
const completion = (id: string, content: string) =>
  JSON.stringify({ id, object: 'chat.completion', created: 1700000000, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }], usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 } });

/** POSTs a body to a tape replayed by createFetch; the answer's status and text. */
async function replay(tape: string, body: string): Promise<{ status: number; text: string }> {
  const f = createFetch({ tape, mode: 'replay' });
  try {
    const r = await f(`${ORIGIN}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    return { status: r.status, text: await r.text() };
  } finally {
    await f.close();
  }
}

// ---- Polly.js, @pollyjs/adapter-node-http + @pollyjs/persister-fs ----

/** A Polly entry as its persister writes it; `content` is the response's content object. */
const pollyEntry = (body: string, content: Record<string, unknown>, responseHeaders: { name: string; value: string }[]) => ({
  _id: 'd391cc1119c349c38ee4ace13ead82e2',
  _order: 0,
  cache: {},
  request: {
    bodySize: body.length,
    cookies: [],
    headers: [
      { name: 'content-type', value: 'application/json' },
      { name: 'accept-encoding', value: 'gzip' },
      { name: 'host', value: '127.0.0.1:4556' },
    ],
    headersSize: 200,
    httpVersion: 'HTTP/1.1',
    method: 'POST',
    postData: { mimeType: 'application/json', params: [], text: body },
    queryString: [],
    url: `${ORIGIN}/v1/chat/completions`,
  },
  response: { bodySize: 256, content, cookies: [], headers: responseHeaders, headersSize: 170, httpVersion: 'HTTP/1.1', redirectURL: '', status: 200, statusText: 'OK' },
  startedDateTime: '2026-11-29T21:28:18.221Z',
  time: 17,
  timings: { blocked: -1, connect: -1, dns: -1, receive: 0, send: 0, ssl: -1, wait: 17 },
});

const gzipHeaders = (type: string) => [
  { name: 'content-type', value: type },
  { name: 'content-encoding', value: 'gzip' },
  { name: 'date', value: 'Sun, 29 Nov 2026 21:28:18 GMT' },
  { name: 'connection', value: 'keep-alive' },
  { name: 'transfer-encoding', value: 'chunked' },
];

/** Polly's form of a content-encoded answer: the wire bytes in chunks, as a JSON array of base64 strings. */
const pollyChunks = (wire: Buffer, cuts: number[]) => {
  const chunks: string[] = [];
  let at = 0;
  for (const end of [...cuts, wire.length]) {
    chunks.push(wire.subarray(at, end).toString('base64'));
    at = end;
  }
  return JSON.stringify(chunks);
};

const pollyHar = (entries: unknown[]) => JSON.stringify({ log: { _recordingName: 'node-http-gzip', browser: undefined, creator: { comment: 'persister:fs', name: 'Polly.JS', version: '6.0.6' }, entries, pages: [], version: '1.2' } }, null, 2);

describe('Polly.js node-http: a gzip answer kept as its base64 wire chunks', () => {
  it('imports: the chunks joined and gunzipped, plain and streamed, and replays the answer', async () => {
    const plain = completion('chatcmpl-16', 'echo: Hi');
    const sse = ['data: {"id":"s16","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"echo:"}}]}\n\n', 'data: {"id":"s16","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" Stream"}}]}\n\n', 'data: [DONE]\n\n'].join('');
    const gzPlain = gzipSync(plain);
    const gzSse = gzipSync(sse);
    const src = join(dir, 'polly-gzip.har');
    writeFileSync(
      src,
      pollyHar([
        // Three chunks, cut inside the gzip header and the deflate stream: only joined are they gzip.
        pollyEntry(chat('Hi'), { encoding: 'base64', mimeType: 'application/json', size: gzPlain.length, text: pollyChunks(gzPlain, [5, 40]) }, gzipHeaders('application/json')),
        pollyEntry(chat('Stream please', true), { encoding: 'base64', mimeType: 'text/event-stream', size: gzSse.length, text: pollyChunks(gzSse, [20]) }, gzipHeaders('text/event-stream')),
      ]),
    );
    const out = join(dir, 'polly-gzip.tape');
    const report = await importRecordings(src, out, { onWarning: () => {} });
    expect(report.records).toBe(2);
    expect(report.streams).toBe(1);
    expect(await replay(out, chat('Hi'))).toEqual({ status: 200, text: plain });
    expect(await replay(out, chat('Stream please', true))).toEqual({ status: 200, text: sse });
  });

  it('a chunk array whose bytes are not gzip although the header says so is taken as decoded (as for VCR.py and nock)', async () => {
    const plain = completion('chatcmpl-17', 'echo: plain');
    const src = join(dir, 'polly-decoded.har');
    writeFileSync(src, pollyHar([pollyEntry(chat('Hi'), { encoding: 'base64', mimeType: 'application/json', size: plain.length, text: pollyChunks(Buffer.from(plain), [10]) }, gzipHeaders('application/json'))]));
    const out = join(dir, 'polly-decoded.tape');
    expect((await importRecordings(src, out, { onWarning: () => {} })).records).toBe(1);
    expect(await replay(out, chat('Hi'))).toEqual({ status: 200, text: plain });
  });

  it('a chunk that is not base64, or gzip cut short: the entry and the field named, nothing written', async () => {
    const gz = gzipSync(completion('chatcmpl-18', 'x'));
    const cases: [string, string, RegExp][] = [
      ['not-base64', JSON.stringify([gz.toString('base64'), '%%%']), /field response\.content\.text\[1\]: is not valid base64/],
      ['cut-short', JSON.stringify([gz.subarray(0, 12).toString('base64')]), /field response\.content\.text: does not decode as gzip/],
      ['not-strings', '[1, 2]', /field response\.content\.text\[0\]: must be a base64 string/],
    ];
    for (const [name, text, message] of cases) {
      const src = join(dir, `polly-${name}.har`);
      writeFileSync(src, pollyHar([pollyEntry(chat('Hi'), { encoding: 'base64', mimeType: 'application/json', size: 10, text }, gzipHeaders('application/json'))]));
      const err = await importRecordings(src, join(dir, `polly-${name}.tape`)).catch((e: unknown) => e);
      expect(err, name).toBeInstanceOf(TapedeckError);
      expect(err, name).toMatchObject({ code: 'E_IMPORT_ENTRY', details: { entry: 0 } });
      expect((err as Error).message, name).toMatch(message);
    }
    expect(readdirSync(dir).filter((n) => /^polly-(not|cut).*\.tape/.test(n))).toEqual([]);
  });
});

// ---- Playwright, recordHar { content: 'attach' } ----

/** A Playwright entry of a POST whose request and response bodies are files beside the HAR. */
const attachEntry = (requestFile: string, responseFile: string, size: number, mimeType = 'application/json') => ({
  startedDateTime: '2026-11-29T20:58:10.011Z',
  time: 4.2,
  request: {
    method: 'POST',
    url: `${ORIGIN}/v1/chat/completions`,
    httpVersion: 'HTTP/1.1',
    cookies: [],
    headers: [
      { name: 'Accept', value: '*/*' },
      { name: 'Content-Type', value: 'application/json' },
      { name: 'Origin', value: ORIGIN },
    ],
    queryString: [],
    headersSize: -1,
    bodySize: 67,
    postData: { mimeType: 'application/json', text: '', params: [], _file: requestFile },
  },
  response: {
    status: 200,
    statusText: 'OK',
    httpVersion: 'HTTP/1.1',
    cookies: [],
    headers: [{ name: 'Content-Type', value: mimeType }],
    content: { size, mimeType, compression: 0, _file: responseFile },
    headersSize: -1,
    bodySize: -1,
    redirectURL: '',
    _transferSize: -1,
  },
  cache: {},
  timings: { dns: -1, connect: -1, ssl: -1, send: 0, wait: 3.1, receive: 1.1 },
  pageref: 'page@2b9b8c5cb0cb1b1f4b8b3fd8a1c3ad5b',
  serverIPAddress: '127.0.0.1',
  _serverPort: 4556,
  _securityDetails: {},
});

const playwrightHar = (entries: unknown[]) =>
  JSON.stringify({ log: { version: '1.2', creator: { name: 'Playwright', version: '1.65.1' }, browser: { name: 'chromium', version: '140.0.7339.16' }, pages: [{ startedDateTime: '2026-11-29T20:58:09.900Z', id: 'page@2b9b8c5cb0cb1b1f4b8b3fd8a1c3ad5b', title: 'chat', pageTimings: { onContentLoad: -1, onLoad: -1 } }], entries } }, null, 2);

describe("Playwright recordHar content: 'attach': request bodies in postData._file", () => {
  it('each POST body is read from its file: two requests, two recordings, each answering its own', async () => {
    const d = join(dir, 'attach');
    mkdirSync(d);
    const files: Record<string, string> = {
      'd52c9e53aac0027fd278fec202f4bcd0e523eebd.json': chat('Hi'),
      '421fa5ede1f61cf16aa45574315ed579741fc3e2.json': completion('chatcmpl-10', 'echo: Hi'),
      '561e4a48e87c4d96794f4484d454cfaaaba8c3a7.json': chat('Bye'),
      '398d765eeb3e27fa4e17324cb22fe8a25f647eda.json': completion('chatcmpl-11', 'echo: Bye'),
    };
    for (const [name, text] of Object.entries(files)) writeFileSync(join(d, name), text);
    const src = join(d, 'attach.har');
    writeFileSync(
      src,
      playwrightHar([
        attachEntry('d52c9e53aac0027fd278fec202f4bcd0e523eebd.json', '421fa5ede1f61cf16aa45574315ed579741fc3e2.json', 256),
        attachEntry('561e4a48e87c4d96794f4484d454cfaaaba8c3a7.json', '398d765eeb3e27fa4e17324cb22fe8a25f647eda.json', 256),
      ]),
    );
    const out = join(dir, 'attach.tape');
    const report = await importRecordings(src, out, { onWarning: () => {} });
    expect(report.records).toBe(2);
    expect(report.routes).toEqual([{ provider: 'openai', route: 'POST /v1/chat/completions', records: 2 }]);
    expect(await replay(out, chat('Hi'))).toEqual({ status: 200, text: files['421fa5ede1f61cf16aa45574315ed579741fc3e2.json'] });
    expect(await replay(out, chat('Bye'))).toEqual({ status: 200, text: files['398d765eeb3e27fa4e17324cb22fe8a25f647eda.json'] });
  });

  it('a postData._file that is missing is an error naming the entry and the file, never an empty body', async () => {
    const d = join(dir, 'attach-missing');
    mkdirSync(d);
    writeFileSync(join(d, 'a.json'), chat('Hi'));
    writeFileSync(join(d, 'r.json'), completion('chatcmpl-12', 'echo: Hi'));
    const src = join(d, 'missing.har');
    writeFileSync(src, playwrightHar([attachEntry('a.json', 'r.json', 256), attachEntry('gone.json', 'r.json', 256)]));
    const out = join(dir, 'attach-missing.tape');
    const err = await importRecordings(src, out).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TapedeckError);
    expect(err).toMatchObject({ code: 'E_IMPORT_ENTRY', details: { entry: 1, field: 'request.postData._file' } });
    expect((err as Error).message).toContain('missing.har: entry 1 (log.entries[1]), field request.postData._file');
    expect((err as Error).message).toContain(join(d, 'gone.json'));
    expect((err as Error).message).toContain('ENOENT');
    expect(readdirSync(dir).filter((n) => n.startsWith('attach-missing.tape'))).toEqual([]);
  });
});
