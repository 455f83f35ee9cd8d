// HAR in and out: a HAR saved by Playwright from Debian's Chromium and one written by Polly.js's
// own file persister, both recording a page or client calling a loopback fake OpenAI API (plain
// and streamed), import and replay through the OpenAI SDK with the answers the live calls got;
// `export --har` of such a tape imports back to the same answers and serves a page in
// Chromium through Playwright's routeFromHAR.
import { spawnSync } from 'node:child_process';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { importRecordings } from '../../src/proxy/import.ts';
import { exportTapeHar } from '../../src/store/export-har.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { chromiumPath, FLAGS, skipReason } from '../browser/chromium.ts';
import { startUpstream, type Upstream } from './fake-upstream.ts';
import { answersOf, ENCODED, encodedAsk, expectStoredAsNative, httpPost, nativeAnswers, PLAIN, replayAnswers, startEncodingUpstream, STREAMED, type Answers } from './import-helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-import-har-'));
let upstream: Upstream;
let front: { url: string; server: Server };

/** JSON with object keys sorted, as a tape stores request bodies. */
const sortedJson = (v: unknown): string => JSON.stringify(v, (_k, x: unknown) => (x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : 1))) : x));

// The page asks the API on its own origin (no CORS): plain, then streamed, and returns the texts.
// Its bodies have sorted keys: routeFromHAR matches a POST body byte for byte, and the exported
// HAR holds the body as the tape stores it (the SDK's own key order does not matter to tapedeck).
const PAGE = `<!doctype html><title>chat</title><script>
async function ask() {
  const post = (body) => fetch('/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-page-secret-0123456789abcdef' }, body }).then((r) => r.text());
  return { plain: await post(${JSON.stringify(sortedJson(PLAIN))}), sse: await post(${JSON.stringify(sortedJson(STREAMED))}) };
}
</script>`;

beforeAll(async () => {
  upstream = await startUpstream({ gapMs: 5 });
  // The page's server: / is the page, everything else goes to the fake API as it streams.
  const server = createServer((req, res) => {
    if (req.url === '/') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      return res.end(PAGE);
    }
    const up = httpRequest(upstream.url + req.url, { method: req.method, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    req.pipe(up);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  front = { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
});

afterAll(async () => {
  front?.server.closeAllConnections();
  await new Promise((r) => front?.server.close(r));
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

const skip = skipReason();
if (skip) console.warn(skip);

/**
 * Records into a HAR with Playwright what `act` makes the page (at the front server) do; resolves
 * to what `act` returns. The HAR is written when the context closes, after `act`.
 */
async function pageHar<T>(harPath: string, act: (page: Page) => Promise<T>): Promise<T> {
  const browser = await chromium.launch({ executablePath: chromiumPath!, headless: true, args: FLAGS });
  try {
    const context = await browser.newContext({ recordHar: { path: harPath, content: 'embed' } });
    const page = await context.newPage();
    await page.goto(`${front.url}/`);
    const out = await act(page);
    await context.close(); // writes the HAR
    return out;
  } finally {
    await browser.close();
  }
}

/** Records the page's two calls into a HAR with Playwright; resolves to the answers the page got. */
async function playwrightHar(harPath: string): Promise<Answers> {
  const got = await pageHar(harPath, (page) => page.evaluate(() => (globalThis as unknown as { ask(): Promise<{ plain: string; sse: string }> }).ask()));
  return answersOf(got.plain, got.sse);
}

describe.skipIf(skip !== undefined)('HAR saved by Playwright (Chromium)', () => {
  let live: Answers;
  const har = join(dir, 'playwright.har');
  const tape = join(dir, 'playwright.tape');

  it('imports and replays through the OpenAI SDK with the answers the page got, plain and streamed', async () => {
    live = await playwrightHar(har);
    expect(live.plain).toMatch(/^Echo \d+: Name a colour$/);
    expect(live.stream).toMatch(/^Echo \d+: Count to three $/);
    const report = await importRecordings(har, tape);
    expect(report.format).toBe('HAR');
    // The page itself is kept as a generic HTTP recording; the two API calls as OpenAI ones.
    expect(report.routes).toEqual(expect.arrayContaining([{ provider: 'openai', route: 'POST /v1/chat/completions', records: 2 }]));
    expect(report.streams).toBe(1);
    expect(report.masked).toBeGreaterThanOrEqual(2);
    const callsBefore = upstream.calls.length;
    expect(await replayAnswers(tape)).toEqual(live);
    expect(upstream.calls.length).toBe(callsBefore);
    expect(readFileSync(tape).includes('sk-page-secret-0123456789abcdef')).toBe(false);
  }, 60_000);

  it('export --har, then import: the same answers; the exported HAR serves the page through routeFromHAR', async () => {
    const { text, entries } = await exportTapeHar(tape, { origin: front.url });
    expect(entries).toBe(3);
    const out = join(dir, 'exported.har');
    writeFileSync(out, text);
    const back = join(dir, 'exported.tape');
    await importRecordings(out, back);
    expect(await replayAnswers(back)).toEqual(live);

    // Chromium, the API server gone from the picture: every request is answered from the HAR.
    const browser = await chromium.launch({ executablePath: chromiumPath!, headless: true, args: FLAGS });
    try {
      const context = await browser.newContext();
      await context.routeFromHAR(out, { notFound: 'abort' });
      const page = await context.newPage();
      const callsBefore = upstream.calls.length;
      await page.goto(`${front.url}/`);
      const got = await page.evaluate(() => (globalThis as unknown as { ask(): Promise<{ plain: string; sse: string }> }).ask());
      expect(answersOf(got.plain, got.sse)).toEqual(live);
      expect(upstream.calls.length).toBe(callsBefore);
      await context.close();
    } finally {
      await browser.close();
    }
  }, 60_000);
});

describe.skipIf(skip !== undefined)('HAR saved by Playwright with a stream the page aborted', () => {
  it('the aborted entry (its status and headers, no body, _failureText) is a bad entry, not an empty answer; --skip-bad lists it and keeps the rest', async () => {
    const har = join(dir, 'aborted.har');
    const plain = await pageHar(har, async (page) => {
      // The HAR gets the failure only once the browser has reported it: the context closes after.
      const failed = page.waitForEvent('requestfailed', (r) => r.url().endsWith('/v1/hang-body'));
      const text = await page.evaluate(async (body) => {
        const post = (path: string, signal?: AbortSignal) => fetch(path, { method: 'POST', signal, headers: { 'content-type': 'application/json' }, body });
        const answer = await (await post('/v1/chat/completions')).text();
        // The answer starts, then the page gives up on it.
        const ac = new AbortController();
        const reader = (await post('/v1/hang-body', ac.signal)).body!.getReader();
        await reader.read();
        ac.abort();
        return answer;
      }, JSON.stringify(PLAIN));
      await failed;
      return text;
    });
    const entries = (JSON.parse(readFileSync(har, 'utf8')) as { log: { entries: { request: { url: string }; response: { status: number; _failureText?: string } }[] } }).log.entries;
    const at = entries.findIndex((e) => e.request.url.endsWith('/v1/hang-body'));
    expect(entries[at]!.response).toMatchObject({ status: 200, _failureText: 'net::ERR_ABORTED' });
    const tape = join(dir, 'aborted.tape');
    const e = (await importRecordings(har, tape).then(
      () => undefined,
      (x: unknown) => x,
    )) as TapedeckError;
    expect(e).toBeInstanceOf(TapedeckError);
    expect(e).toMatchObject({ code: 'E_IMPORT_ENTRY', details: { file: har, entry: at, field: 'response._failureText' } });
    expect(e.message).toContain('"net::ERR_ABORTED": the request failed or was aborted before its answer was whole');
    expect(e.hint).toContain('--skip-bad');
    expect(existsSync(tape)).toBe(false);
    const report = await importRecordings(har, tape, { skipBad: true });
    expect(report.skipped).toEqual([{ where: `log.entries[${at}].response._failureText`, reason: expect.stringContaining('net::ERR_ABORTED') }]);
    expect(report.routes).toEqual(expect.arrayContaining([{ provider: 'openai', route: 'POST /v1/chat/completions', records: 1 }]));
    expect(report.routes.some((r) => r.route.includes('hang-body'))).toBe(false);
    const f = createFetch({ tape, mode: 'replay' });
    try {
      const client = new OpenAI({ apiKey: 'sk-replay-key-not-used', baseURL: 'http://127.0.0.1:9/v1', fetch: f, maxRetries: 0 });
      expect((await client.chat.completions.create(PLAIN)).choices[0]!.message.content).toBe((JSON.parse(plain) as { choices: { message: { content: string } }[] }).choices[0]!.message.content);
    } finally {
      await f.close();
    }
  }, 60_000);
});

describe.skipIf(skip !== undefined)('HAR saved by Playwright with an upload made of a Blob', () => {
  it('the upload, whose body Chromium did not save, is a bad entry naming postData and the bytes sent, not a recording of an empty body', async () => {
    const har = join(dir, 'upload.har');
    const status = await pageHar(har, (page) =>
      page.evaluate(async () => {
        const form = new FormData();
        form.append('model', 'whisper-1');
        form.append('file', new Blob([new Uint8Array([82, 73, 70, 70, 0, 255, 1, 2])], { type: 'audio/wav' }), 'clip.wav');
        return (await fetch('/v1/audio/transcriptions', { method: 'POST', body: form })).status;
      }),
    );
    expect(status).toBe(200);
    const entries = (JSON.parse(readFileSync(har, 'utf8')) as { log: { entries: { request: { url: string; postData?: unknown; headers: { name: string; value: string }[] } }[] } }).log.entries;
    const at = entries.findIndex((e) => e.request.url.endsWith('/v1/audio/transcriptions'));
    expect(entries[at]!.request.postData).toBeUndefined();
    const sent = Number(entries[at]!.request.headers.find((h) => h.name.toLowerCase() === 'content-length')!.value);
    expect(sent).toBeGreaterThan(0);
    const tape = join(dir, 'upload.tape');
    const e = (await importRecordings(har, tape).then(
      () => undefined,
      (x: unknown) => x,
    )) as TapedeckError;
    expect(e).toBeInstanceOf(TapedeckError);
    expect(e).toMatchObject({ code: 'E_IMPORT_ENTRY', details: { file: har, entry: at, field: 'request.postData' } });
    expect(e.message).toContain(`is missing although the request sent a ${sent}-byte body`);
    expect(existsSync(tape)).toBe(false);
    const report = await importRecordings(har, tape, { skipBad: true });
    expect(report.skipped).toEqual([{ where: `log.entries[${at}].request.postData`, reason: expect.stringContaining('record it with tapedeck') }]);
    expect(report.routes.some((r) => r.route.includes('transcriptions'))).toBe(false);
  }, 60_000);
});

describe.skipIf(skip !== undefined)('HAR saved by Playwright to a .zip path', () => {
  it('is refused as a zip archive with the fix (unzip it first) and the formats import reads, from the API and the command line', async () => {
    const zip = join(dir, 'app.zip');
    const browser = await chromium.launch({ executablePath: chromiumPath!, headless: true, args: FLAGS });
    try {
      const context = await browser.newContext({ recordHar: { path: zip } });
      const page = await context.newPage();
      await page.goto(`${front.url}/`);
      await page.evaluate(() => (globalThis as unknown as { ask(): Promise<unknown> }).ask());
      await context.close(); // writes the zip
    } finally {
      await browser.close();
    }
    expect(readFileSync(zip).subarray(0, 4).toString('latin1')).toBe('PK\x03\x04');
    const tape = join(dir, 'zip.tape');
    const e = (await importRecordings(zip, tape).then(
      () => undefined,
      (x: unknown) => x,
    )) as TapedeckError;
    expect(e).toBeInstanceOf(TapedeckError);
    expect(e).toMatchObject({ code: 'E_IMPORT_FORMAT', details: { file: zip } });
    expect(e.message).toContain(`${zip} is a zip archive`);
    expect(e.hint).toMatch(/^Unzip it and import the \.har inside/);
    expect(e.hint).toContain('--from har|vcr|nock|fixtures|talkback');
    const r = spawnSync(process.execPath, [join(import.meta.dirname, '..', '..', 'dist', 'cli.js'), 'import', zip, tape], { encoding: 'utf8' });
    expect(r.stderr).toMatch(/^tapedeck: E_IMPORT_FORMAT .*app\.zip is a zip archive.*\nhint: Unzip it and import the \.har inside.*--from har\|vcr\|nock\|fixtures\|talkback/);
    expect(r.status).toBe(1);
    expect(existsSync(tape)).toBe(false);
  }, 60_000);
});

describe('HAR written by Polly.js (node-http adapter, fs persister)', () => {
  it('imports and replays through the OpenAI SDK with the answers the client got', async () => {
    const { Polly } = await import('@pollyjs/core');
    const NodeHttpAdapter = (await import('@pollyjs/adapter-node-http')).default;
    const FSPersister = (await import('@pollyjs/persister-fs')).default;
    Polly.register(NodeHttpAdapter);
    Polly.register(FSPersister);
    const recordings = join(dir, 'polly');
    const polly = new Polly('openai-chat', { adapters: ['node-http'], persister: 'fs', persisterOptions: { fs: { recordingsDir: recordings } }, mode: 'record', logLevel: 'silent' });
    let live: Answers;
    try {
      const auth = { authorization: 'Bearer sk-polly-secret-0123456789abcdef' };
      const plain = await httpPost(`${upstream.url}/v1/chat/completions`, PLAIN, auth);
      const sse = await httpPost(`${upstream.url}/v1/chat/completions`, STREAMED, auth);
      live = answersOf(plain.text, sse.text);
    } finally {
      await polly.stop(); // persists recording.har
    }
    const harDir = readdirSync(recordings).find((d) => d.startsWith('openai-chat'))!;
    const har = join(recordings, harDir, 'recording.har');
    expect(existsSync(har)).toBe(true);
    const tape = join(dir, 'polly.tape');
    const report = await importRecordings(har, tape);
    expect(report).toMatchObject({ format: 'HAR', records: 2, streams: 1, routes: [{ provider: 'openai', route: 'POST /v1/chat/completions', records: 2 }] });
    expect(await replayAnswers(tape)).toEqual(live);
    expect(readFileSync(tape).includes('sk-polly-secret')).toBe(false);
  }, 60_000);
});

describe('a Polly.js HAR with header values a client set as numbers', () => {
  it("imports them as their text (Polly keeps `content-length: 42` as the number it was given); before, each entry was refused", async () => {
    const { Polly } = await import('@pollyjs/core');
    const NodeHttpAdapter = (await import('@pollyjs/adapter-node-http')).default;
    const FSPersister = (await import('@pollyjs/persister-fs')).default;
    Polly.register(NodeHttpAdapter);
    Polly.register(FSPersister);
    const recordings = join(dir, 'polly-numbers');
    const polly = new Polly('numeric-headers', { adapters: ['node-http'], persister: 'fs', persisterOptions: { fs: { recordingsDir: recordings } }, mode: 'record', logLevel: 'silent' });
    let live: Answers;
    try {
      const numeric = (body: unknown) => ({ 'content-length': Buffer.byteLength(JSON.stringify(body)), 'x-attempt': 0 });
      const plain = await httpPost(`${upstream.url}/v1/chat/completions`, PLAIN, numeric(PLAIN));
      const sse = await httpPost(`${upstream.url}/v1/chat/completions`, STREAMED, numeric(STREAMED));
      live = answersOf(plain.text, sse.text);
    } finally {
      await polly.stop();
    }
    const harDir = readdirSync(recordings).find((d) => d.startsWith('numeric-headers'))!;
    const har = join(recordings, harDir, 'recording.har');
    // The premise: Polly wrote the numbers as numbers.
    const entries = (JSON.parse(readFileSync(har, 'utf8')) as { log: { entries: { request: { headers: { name: string; value: unknown }[] } }[] } }).log.entries;
    expect(entries[0]!.request.headers.find((h) => h.name === 'x-attempt')?.value).toBe(0);
    const tape = join(dir, 'polly-numbers.tape');
    expect(await importRecordings(har, tape)).toMatchObject({ format: 'HAR', records: 2, streams: 1 });
    expect(await replayAnswers(tape)).toEqual(live);
    const stored = (await readTape(tape)).records.map((r) => (r.value as { request: { headers: Record<string, unknown> } }).request.headers['x-attempt']);
    expect(stored).toEqual(['0', '0']);
  }, 60_000);
});

describe('repeats Polly.js recorded in two sessions', () => {
  it("answer in Polly's _order, not in their place in the file (a call added later with disableSortingHarEntries comes first there)", async () => {
    const { Polly } = await import('@pollyjs/core');
    const NodeHttpAdapter = (await import('@pollyjs/adapter-node-http')).default;
    const FSPersister = (await import('@pollyjs/persister-fs')).default;
    Polly.register(NodeHttpAdapter);
    Polly.register(FSPersister);
    const recordings = join(dir, 'polly-order');
    const session = (mode: 'record' | 'replay') =>
      new Polly('repeats', { adapters: ['node-http'], persister: 'fs', persisterOptions: { fs: { recordingsDir: recordings }, disableSortingHarEntries: true }, mode, recordIfMissing: true, logLevel: 'silent' });
    const ask = async () => (JSON.parse((await httpPost(`${upstream.url}/v1/chat/completions`, PLAIN)).text) as { choices: { message: { content: string } }[] }).choices[0]!.message.content;
    // The first session asks once; the second asks twice: its first call replays, its second is recorded.
    let polly = session('record');
    const first = await ask().finally(() => polly.stop());
    polly = session('replay');
    const live = [await ask(), await ask()];
    await polly.stop();
    expect(live[0]).toBe(first);
    expect(live[1]).not.toBe(first);
    const har = join(recordings, readdirSync(recordings).find((d) => d.startsWith('repeats'))!, 'recording.har');
    const orders = (JSON.parse(readFileSync(har, 'utf8')) as { log: { entries: { _order: number }[] } }).log.entries.map((e) => e._order);
    expect(orders).toEqual([1, 0]);
    // Polly itself answers the calls in _order.
    polly = session('replay');
    const pollyReplay = [await ask(), await ask()];
    await polly.stop();
    expect(pollyReplay).toEqual(live);
    const tape = join(dir, 'polly-order.tape');
    expect((await importRecordings(har, tape)).records).toBe(2);
    const f = createFetch({ tape, mode: 'replay' });
    try {
      const client = new OpenAI({ apiKey: 'sk-replay-key-not-used', baseURL: 'http://127.0.0.1:9/v1', fetch: f, maxRetries: 0 });
      const replayed = [];
      for (let i = 0; i < 2; i++) replayed.push((await client.chat.completions.create(PLAIN)).choices[0]!.message.content);
      expect(replayed).toEqual(live);
    } finally {
      await f.close();
    }
  }, 60_000);
});

describe('compressed answers recorded by Polly.js (node-http adapter)', () => {
  it('gzip, br and deflate answers kept as their wire chunks are stored decoded, as a native recording of the same answers stores them, and replay exactly', async () => {
    const { Polly } = await import('@pollyjs/core');
    const NodeHttpAdapter = (await import('@pollyjs/adapter-node-http')).default;
    const FSPersister = (await import('@pollyjs/persister-fs')).default;
    Polly.register(NodeHttpAdapter);
    Polly.register(FSPersister);
    const api = await startEncodingUpstream();
    try {
      const recordings = join(dir, 'polly-encoded');
      const polly = new Polly('encoded', { adapters: ['node-http'], persister: 'fs', persisterOptions: { fs: { recordingsDir: recordings } }, mode: 'record', logLevel: 'silent' });
      try {
        for (const coding of ENCODED) expect((await httpPost(`${api.url}/v1/chat/completions`, encodedAsk(coding), { 'accept-encoding': coding.split(' ')[0]! })).headers['content-encoding']).toBe(coding.split(' ')[0]);
      } finally {
        await polly.stop();
      }
      const har = join(recordings, readdirSync(recordings).find((d) => d.startsWith('encoded'))!, 'recording.har');
      // Polly's form of an encoded answer: the wire chunks, base64 each, in a JSON array.
      expect(readFileSync(har, 'utf8')).toMatch(/"text": "\[\\"/);
      const tape = join(dir, 'polly-encoded.tape');
      expect((await importRecordings(har, tape)).records).toBe(ENCODED.length);
      await expectStoredAsNative(tape, await nativeAnswers(api.url, join(dir, 'polly-encoded-native.tape')), api);
    } finally {
      await api.close();
    }
  }, 60_000);
});
