// Defects a user trial of `tapedeck import` found, each against what docs/migrate.md promises:
// - --skip-bad leaving out one of several identical requests moved the later ones up a turn, so
//   a call was answered with the next call's answer, silently;
// - a POST re-sent after a 307/308 redirect, saved by Playwright with `postData.text: ""` though
//   `content-length` says bytes were sent, was imported as a bodiless POST that replay misses;
// - a gzip answer over the decoded-size limit was refused as "cut short or not gzip";
// - an empty nock.back fixture (`[]`) was "none of the formats" instead of "no entries";
// - a gzip file, a tape or UTF-16 text named .har / .yaml was "invalid JSON at byte 0 ... check
//   that the file is whole" instead of what it is.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { importRecordings } from '../../src/proxy/import.ts';
import { TAPE_MAGIC } from '../../src/store/tape-codec.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-import-trial-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const BODY = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'browser dup' }] });

/** A Playwright-like HAR entry of a chat completion answered with `answer`. */
function entry(answer: string, opts: { failure?: string; body?: string; postData?: unknown; contentLength?: number; bodySize?: number } = {}): unknown {
  const body = opts.body ?? BODY;
  const text = JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: answer }, finish_reason: 'stop' }] });
  return {
    startedDateTime: '2026-12-06T15:37:32.616Z',
    time: 5,
    request: {
      method: 'POST',
      url: 'http://127.0.0.1:7641/v1/chat/completions',
      httpVersion: 'HTTP/1.1',
      headers: [
        { name: 'Content-Length', value: String(opts.contentLength ?? Buffer.byteLength(body)) },
        { name: 'content-type', value: 'application/json' },
      ],
      queryString: [],
      bodySize: opts.bodySize ?? Buffer.byteLength(body),
      postData: opts.postData !== undefined ? opts.postData : { mimeType: 'application/json', text: body },
    },
    response: {
      status: 200,
      statusText: 'OK',
      headers: [{ name: 'content-type', value: 'application/json' }],
      content: { size: Buffer.byteLength(text), mimeType: 'application/json', text },
      ...(opts.failure ? { _failureText: opts.failure } : {}),
    },
    timings: { send: 0, wait: 2, receive: 3 },
  };
}

function har(name: string, entries: unknown[]): string {
  const file = join(dir, name);
  writeFileSync(file, JSON.stringify({ log: { version: '1.2', creator: { name: 'Playwright', version: '1.65.2' }, entries } }));
  return file;
}

async function refusal(p: Promise<unknown>): Promise<TapedeckError> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(TapedeckError);
  return e as TapedeckError;
}

describe('--skip-bad and identical requests', () => {
  it('refuses to leave out a bad entry whose request is repeated later (the repeats would answer the call before theirs)', async () => {
    const src = har('dup-middle-bad.har', [entry('ANSWER 1'), entry('ANSWER 2', { failure: 'net::ERR_ABORTED' }), entry('ANSWER 3')]);
    const e = await refusal(importRecordings(src, join(dir, 'dmb.tape'), { skipBad: true }));
    expect(e.code).toBe('E_IMPORT_ENTRY');
    expect(e.details).toMatchObject({ file: src, entry: 1, field: 'response._failureText' });
    expect(e.message).toMatch(/entry 2 \(log\.entries\[2\]\) repeats its request/);
    expect(e.message).toMatch(/move up a turn/);
    expect(e.hint).toMatch(/record/i);
  });

  it('refuses a repeat whose body differs from the bad one only in key order and spacing', async () => {
    const reordered = JSON.stringify({ messages: [{ content: 'browser dup', role: 'user' }], model: 'gpt-4o-mini' }, null, 1);
    const src = har('dup-reordered.har', [entry('ANSWER 1', { failure: 'net::ERR_ABORTED' }), entry('ANSWER 2', { body: reordered })]);
    const e = await refusal(importRecordings(src, join(dir, 'reordered.tape'), { skipBad: true }));
    expect(e.code).toBe('E_IMPORT_ENTRY');
    expect(e.details).toMatchObject({ entry: 0 });
  });

  it('refuses a repeat that only the request key makes identical (a volatile member, an ignored argument)', async () => {
    const withUser = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'browser dup' }], user: 'session-2' });
    const src = har('dup-volatile.har', [entry('ANSWER 1', { failure: 'net::ERR_ABORTED' }), entry('ANSWER 2', { body: withUser })]);
    const e = await refusal(importRecordings(src, join(dir, 'volatile.tape'), { skipBad: true }));
    expect(e.code).toBe('E_IMPORT_ENTRY');
    expect(e.details).toMatchObject({ entry: 0 });
    expect(e.message).toMatch(/entry 1 \(log\.entries\[1\]\) repeats its request/);
    expect(existsSync(join(dir, 'volatile.tape'))).toBe(false);

    const warm = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'browser dup' }], temperature: 0 });
    const src2 = har('dup-ignored.har', [entry('ANSWER 1', { failure: 'net::ERR_ABORTED' }), entry('ANSWER 2', { body: warm })]);
    const e2 = await refusal(importRecordings(src2, join(dir, 'ignored.tape'), { skipBad: true, ignoreArgs: ['temperature'] }));
    expect(e2.details).toMatchObject({ entry: 0 });
    // Without the option the two requests differ: the bad entry is left out and the other imported.
    const report = await importRecordings(src2, join(dir, 'not-ignored.tape'), { skipBad: true });
    expect(report.records).toBe(1);
  });

  it('refuses it in a VCR.py cassette too (an interaction whose answer has no body, between two repeats)', async () => {
    const one = (answer: string | undefined) =>
      [
        '- request:',
        `    body: '${BODY}'`,
        '    headers:',
        '      content-type: [application/json]',
        '    method: POST',
        '    uri: https://api.openai.com/v1/chat/completions',
        '  response:',
        ...(answer === undefined ? [] : ['    body:', `      string: '${answer}'`]),
        '    headers:',
        '      Content-Type: [application/json]',
        '    status: {code: 200, message: OK}',
      ].join('\n');
    const src = join(dir, 'dup-middle-bad.yaml');
    writeFileSync(src, ['interactions:', one('{"n":1}'), one(undefined), one('{"n":3}'), 'version: 1', ''].join('\n'));
    const e = await refusal(importRecordings(src, join(dir, 'dmb-vcr.tape'), { skipBad: true }));
    expect(e.code).toBe('E_IMPORT_ENTRY');
    expect(e.details).toMatchObject({ entry: 1, field: 'response.body' });
    expect(e.message).toMatch(/entry 2 \(interactions\[2\]\) repeats its request/);
  });

  it('refuses it in a nock recording too (a definition with no status, between two repeats)', async () => {
    const def = (n: number | undefined) => ({ scope: 'https://api.openai.com:443', method: 'POST', path: '/v1/chat/completions', body: JSON.parse(BODY) as unknown, ...(n === undefined ? {} : { status: 200 }), response: { n }, rawHeaders: ['Content-Type', 'application/json'] });
    const src = join(dir, 'dup-middle-bad.nock.json');
    writeFileSync(src, JSON.stringify([def(1), def(undefined), def(3)]));
    const e = await refusal(importRecordings(src, join(dir, 'dmb-nock.tape'), { skipBad: true, from: 'nock' }));
    expect(e.code).toBe('E_IMPORT_ENTRY');
    expect(e.details).toMatchObject({ entry: 1, field: 'status' });
    expect(e.message).toMatch(/repeats its request/);
  });

  it('still skips a bad entry that no later entry repeats, and a bad last repeat', async () => {
    const other = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'another' }] });
    const src = har('bad-alone.har', [entry('ANSWER 1'), entry('ANSWER 2', { failure: 'net::ERR_ABORTED', body: other }), entry('ANSWER 3'), entry('ANSWER 4', { failure: 'net::ERR_ABORTED' })]);
    const report = await importRecordings(src, join(dir, 'alone.tape'), { skipBad: true });
    expect(report.records).toBe(2);
    expect(report.skipped.map((s) => s.where)).toEqual(['log.entries[1].response._failureText', 'log.entries[3].response._failureText']);
  });
});

describe('a request body the HAR saved empty', () => {
  // Chromium's POST re-sent after a 307: `postData.text: ""`, `bodySize` and `content-length` 75.
  it('refuses a POST whose postData.text is empty though content-length says 75 bytes were sent', async () => {
    const src = har('redirect-body.har', [entry('ANSWER', { postData: { mimeType: 'application/json', text: '' }, contentLength: 75, bodySize: 75 })]);
    const e = await refusal(importRecordings(src, join(dir, 'redirect.tape')));
    expect(e.code).toBe('E_IMPORT_ENTRY');
    expect(e.details).toMatchObject({ entry: 0, field: 'request.postData.text' });
    expect(e.message).toMatch(/is empty although the request sent a 75-byte body \(content-length\)/);
    expect(e.message).toMatch(/307 or 308 redirect/);
  });

  it('refuses it by bodySize alone when no content-length is listed', async () => {
    const e0 = entry('ANSWER', { postData: { mimeType: 'application/json', text: '' }, bodySize: 75 }) as { request: { headers: { name: string }[] } };
    e0.request.headers = e0.request.headers.filter((h) => h.name !== 'Content-Length');
    const e = await refusal(importRecordings(har('redirect-bodysize.har', [e0]), join(dir, 'redirect2.tape')));
    expect(e.message).toMatch(/75-byte body \(request\.bodySize\)/);
  });

  it('still imports an empty body that was sent empty', async () => {
    const report = await importRecordings(har('empty-sent.har', [entry('ANSWER', { postData: { mimeType: 'text/plain', text: '' }, contentLength: 0, bodySize: 0 })]), join(dir, 'empty-sent.tape'));
    expect(report.records).toBe(1);
  });
});

describe('a compressed answer larger than 32 MB decoded', () => {
  /** A VCR.py cassette of one embeddings call answered with `answer` gzip-encoded, as VCR.py keeps it. */
  function cassette(name: string, answer: Buffer): string {
    const file = join(dir, name);
    const b64 = gzipSync(answer).toString('base64');
    writeFileSync(
      file,
      [
        'interactions:',
        '- request:',
        `    body: '{"model":"text-embedding-3-small","input":["doc"]}'`,
        '    headers:',
        '      content-type: [application/json]',
        '    method: POST',
        '    uri: https://api.openai.com/v1/embeddings',
        '  response:',
        '    body:',
        `      string: !!binary ${b64}`,
        '    headers:',
        '      Content-Type: [application/json]',
        '      Content-Encoding: [gzip]',
        '    status: {code: 200, message: OK}',
        'version: 1',
        '',
      ].join('\n'),
    );
    return file;
  }

  it('imports a whole gzip answer of 40 MB decoded, as recording it does', async () => {
    // An embeddings batch: 40 MB of JSON numbers, a few hundred KB gzipped.
    const n = 5_000_000;
    const answer = Buffer.from(`{"object":"list","data":[{"object":"embedding","index":0,"embedding":[${'0.1234567,'.repeat(n)}0]}]}`);
    expect(answer.length).toBeGreaterThan(40 * 1024 * 1024);
    const report = await importRecordings(cassette('emb-gz.yaml', answer), join(dir, 'emb-gz.tape'));
    expect(report.records).toBe(1);
  }, 60_000);

  it('still says a gzip body cut short is cut short', async () => {
    const file = join(dir, 'cut-gz.yaml');
    writeFileSync(file, readFileSync(cassette('cut-src.yaml', Buffer.from('{"a":1}')), 'utf8').replace(/!!binary (\S+)/, (_m, b: string) => `!!binary ${Buffer.from(b, 'base64').subarray(0, 12).toString('base64')}`));
    const e = await refusal(importRecordings(file, join(dir, 'cut-gz.tape')));
    expect(e.message).toMatch(/does not decode as gzip/);
  });
});

describe('an empty nock.back fixture', () => {
  // nock.back writes `[]` for a test that made no HTTP call.
  it('is E_IMPORT_ENTRY (no entries), detected or with --from nock, and writes no tape', async () => {
    const src = join(dir, 'no-calls.json');
    writeFileSync(src, '[]');
    for (const from of [undefined, 'nock' as const]) {
      const e = await refusal(importRecordings(src, join(dir, 'no-calls.tape'), from ? { from } : {}));
      expect(e.code).toBe('E_IMPORT_ENTRY');
      expect(e.message).toMatch(/has no entries \(its array is empty\)/);
      expect(existsSync(join(dir, 'no-calls.tape'))).toBe(false);
    }
  });
});

describe('a binary file under a recording name', () => {
  const harText = JSON.stringify({ log: { version: '1.2', entries: [entry('ANSWER')] } });
  const cases: [string, Buffer, RegExp, RegExp][] = [
    ['gz.har', gzipSync(harText), /gz\.har is gzip-compressed data, not a HAR/, /gzip -dc/],
    ['tape.har', Buffer.concat([Buffer.from(TAPE_MAGIC), Buffer.alloc(64, 1)]), /tape\.har is a tapedeck tape, not a HAR/, /tapedeck export/],
    ['u16.har', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(harText, 'utf16le')]), /u16\.har is UTF-16 text, not a HAR: import reads UTF-8 text/, /iconv/],
    ['gz.yaml', gzipSync('interactions: []\nversion: 1\n'), /gz\.yaml is gzip-compressed data, not a VCR\.py cassette/, /gzip -dc/],
    ['bin.har', Buffer.from([0x00, 0x01, 0x02, 0xfe, 0x7b, 0x00]), /bin\.har is binary data, not a HAR/, /HAR/],
  ];
  it('is E_IMPORT_FORMAT saying what the file is (gzip, a tape, UTF-16), not a JSON error asking whether the file is whole', async () => {
    for (const [name, bytes, message, hint] of cases) {
      const src = join(dir, name);
      writeFileSync(src, bytes);
      const e = await refusal(importRecordings(src, join(dir, `${name}.tape`)));
      expect(e.code, `${name}: ${e.message}`).toBe('E_IMPORT_FORMAT');
      expect(e.message, name).toMatch(message);
      expect(e.message).not.toMatch(/invalid JSON|whole/);
      expect(e.hint, name).toMatch(hint);
    }
  });
});
