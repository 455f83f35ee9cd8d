// Entries of a real Playwright HAR (Debian's Chromium) that hold no answer an HTTP recording can
// replay whole, refused as bad entries naming the entry and why (--skip-bad lists them, as it
// lists `_failureText` and status-0 entries), never imported as something else:
// - a WebSocket session (status 101, its frames in `_webSocketMessages`), which was imported as
//   a plain `GET /v1/realtime?...` with its messages gone;
// - an answer saved shorter than its `content.size` (a stream cut at an event boundary, a JSON
//   body cut short), which was imported whole and replayed through the OpenAI SDK as a complete
//   answer with half the text.
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { chromium, type Page } from 'playwright-core';
import { WebSocketServer } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { importRecordings } from '../../src/proxy/import.ts';
import { chromiumPath, FLAGS, skipReason } from '../browser/chromium.ts';
import { startUpstream, type Upstream } from './fake-upstream.ts';
import { PLAIN, STREAMED } from './import-helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-import-har-unreplayable-'));
let upstream: Upstream;
let front: { url: string; server: Server; wss: WebSocketServer };

// The page asks the API on its own origin: plain, streamed, and a realtime-like WebSocket.
const PAGE = `<!doctype html><title>chat</title><script>
const post = (body) => fetch('/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body }).then((r) => r.text());
async function ask() {
  return { plain: await post(${JSON.stringify(JSON.stringify(PLAIN))}), sse: await post(${JSON.stringify(JSON.stringify(STREAMED))}) };
}
function realtime() {
  return new Promise((resolve) => {
    const ws = new WebSocket(location.origin.replace('http', 'ws') + '/v1/realtime?model=gpt-realtime');
    ws.onopen = () => ws.send('{"type":"session.update"}');
    ws.onmessage = (e) => { resolve(e.data); ws.close(); };
  });
}
</script>`;

beforeAll(async () => {
  upstream = await startUpstream({ gapMs: 5 });
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
  // A realtime-like server: answers the client's first frame with session.created.
  const wss = new WebSocketServer({ server });
  wss.on('connection', (ws) => ws.on('message', (m) => ws.send(JSON.stringify({ type: 'session.created', echo: String(m) }))));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  front = { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, wss };
});

afterAll(async () => {
  front?.wss.close();
  front?.server.closeAllConnections();
  await new Promise((r) => front?.server.close(r));
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

const skip = skipReason();
if (skip) console.warn(skip);

/** Records into a HAR with Playwright what `act` makes the page do; the HAR is written when the context closes. */
async function pageHar<T>(harPath: string, act: (page: Page) => Promise<T>): Promise<T> {
  const browser = await chromium.launch({ executablePath: chromiumPath!, headless: true, args: FLAGS });
  try {
    const context = await browser.newContext({ recordHar: { path: harPath, content: 'embed' } });
    const page = await context.newPage();
    await page.goto(`${front.url}/`);
    const out = await act(page);
    await context.close();
    return out;
  } finally {
    await browser.close();
  }
}

interface HarEntry {
  request: { url: string; method: string };
  response: { status: number; content: { size: number; text?: string; mimeType?: string } };
  _webSocketMessages?: unknown[];
}
const entriesOf = (har: string) => (JSON.parse(readFileSync(har, 'utf8')) as { log: { entries: HarEntry[] } }).log.entries;

/** What an import that refuses rejects with. */
const refusal = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (x: unknown) => x,
  ) as Promise<TapedeckError>;

describe.skipIf(skip !== undefined)('a WebSocket session in a Playwright HAR', () => {
  it('is a bad entry naming _webSocketMessages (realtime sessions are not imported from a HAR), not a plain GET with its messages gone; --skip-bad lists it', async () => {
    const har = join(dir, 'ws.har');
    const got = await pageHar(har, (page) => page.evaluate(() => (globalThis as unknown as { realtime(): Promise<string> }).realtime()));
    expect(JSON.parse(got)).toMatchObject({ type: 'session.created' });
    const entries = entriesOf(har);
    const at = entries.findIndex((e) => e.request.url.includes('/v1/realtime'));
    expect(entries[at]).toMatchObject({ response: { status: 101 }, _webSocketMessages: expect.arrayContaining([expect.objectContaining({ type: 'send' })]) });

    const tape = join(dir, 'ws.tape');
    const e = await refusal(importRecordings(har, tape));
    expect(e).toBeInstanceOf(TapedeckError);
    expect(e).toMatchObject({ code: 'E_IMPORT_ENTRY', details: { file: har, entry: at, field: '_webSocketMessages' } });
    expect(e.message).toContain(`entry ${at} (log.entries[${at}]), field _webSocketMessages: is a WebSocket session (2 messages in _webSocketMessages): realtime sessions are not imported from a HAR`);
    expect(e.hint).toContain('--skip-bad');
    expect(existsSync(tape)).toBe(false);

    const report = await importRecordings(har, tape, { skipBad: true });
    expect(report.skipped).toEqual([{ where: `log.entries[${at}]._webSocketMessages`, reason: expect.stringContaining('realtime sessions are not imported from a HAR') }]);
    // The page itself is still imported; nothing answers the realtime path.
    expect(report.routes.some((r) => r.route.includes('/v1/realtime'))).toBe(false);
    expect(report.records).toBe(1);
  }, 60_000);
});

describe.skipIf(skip !== undefined)('a Playwright HAR answer shorter than its content.size', () => {
  const har = join(dir, 'whole.har');
  let whole: HarEntry[];
  beforeAll(async () => {
    await pageHar(har, (page) => page.evaluate(() => (globalThis as unknown as { ask(): Promise<unknown> }).ask()));
    whole = entriesOf(har);
  }, 60_000);

  /** The HAR with one entry's text cut to `cut(text)`, the rest as Playwright wrote it. */
  function cutHar(name: string, which: (e: HarEntry) => boolean, cut: (text: string) => string): { file: string; at: number; size: number; kept: number } {
    const doc = JSON.parse(readFileSync(har, 'utf8')) as { log: { entries: HarEntry[] } };
    const at = doc.log.entries.findIndex(which);
    const content = doc.log.entries[at]!.response.content;
    content.text = cut(content.text!);
    const file = join(dir, name);
    writeFileSync(file, JSON.stringify(doc));
    return { file, at, size: content.size, kept: Buffer.byteLength(content.text) };
  }

  it('Playwright sets content.size to the bytes it saves: the whole HAR imports and its stream replays whole', async () => {
    for (const e of whole.filter((x) => x.response.content.text !== undefined)) expect(Buffer.byteLength(e.response.content.text!)).toBe(e.response.content.size);
    const tape = join(dir, 'whole.tape');
    expect((await importRecordings(har, tape)).streams).toBe(1);
  });

  it('a stream cut at an event boundary is a bad entry naming the entry, its bytes and content.size; --skip-bad lists it and the SDK then misses instead of getting half the answer', async () => {
    const { file, at, size, kept } = cutHar('cut-stream.har', (e) => e.response.content.mimeType?.startsWith('text/event-stream') === true, (t) => t.slice(0, t.indexOf('data:', t.length / 2)));
    expect(kept).toBeLessThan(size);
    const tape = join(dir, 'cut-stream.tape');
    const e = await refusal(importRecordings(file, tape));
    expect(e).toBeInstanceOf(TapedeckError);
    expect(e).toMatchObject({ code: 'E_IMPORT_ENTRY', details: { file, entry: at, field: 'response.content.text' } });
    expect(e.message).toContain(`entry ${at} (log.entries[${at}]), field response.content.text: holds ${kept} bytes of an answer content.size says had ${size} (an event stream saved before it ended)`);
    expect(existsSync(tape)).toBe(false);

    const report = await importRecordings(file, tape, { skipBad: true });
    expect(report.skipped).toEqual([{ where: `log.entries[${at}].response.content.text`, reason: expect.stringContaining(`content.size says had ${size}`) }]);
    expect(report.streams).toBe(0);
    const f = createFetch({ tape, mode: 'replay', onWarning: () => {} });
    try {
      const client = new OpenAI({ apiKey: 'sk-replay-key-not-used', baseURL: 'http://127.0.0.1:9/v1', fetch: f, maxRetries: 0 });
      await expect(
        (async () => {
          let text = '';
          for await (const c of await client.chat.completions.create(STREAMED)) text += c.choices[0]?.delta.content ?? '';
          return text;
        })(),
      ).rejects.toMatchObject({ status: 400 });
    } finally {
      await f.close();
    }
  });

  it('a JSON answer cut short is a bad entry too (it was blamed on "the upstream" before)', async () => {
    const { file, at, size } = cutHar('cut-json.har', (e) => e.response.content.mimeType?.startsWith('application/json') === true && e.request.method === 'POST', (t) => t.slice(0, Math.floor(t.length / 2)));
    const warnings: string[] = [];
    const e = await refusal(importRecordings(file, join(dir, 'cut-json.tape'), { onWarning: (m) => warnings.push(m) }));
    expect(e).toMatchObject({ code: 'E_IMPORT_ENTRY', details: { entry: at, field: 'response.content.text' } });
    expect(e.message).toContain(`content.size says had ${size} (the body was saved cut short)`);
    expect(warnings).toEqual([]);
  });
});
