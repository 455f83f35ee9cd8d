// A page of a dev server on this machine (http://localhost:5173) that calls tapedeck serve: the
// API answers it with CORS headers, which are recorded and replayed; tapedeck's own answers (a
// miss) had none, so the browser hid the miss and the page saw "TypeError: Failed to fetch" (the
// OpenAI SDK in a page says "Connection error." and retries). A miss to a page on this machine is
// readable by it; a page of another site still reads nothing of it (misses quote the tape).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxy } from '../../src/proxy/index.ts';
import { chromiumPath, FLAGS, skipReason } from '../browser/chromium.ts';
import { listenLoopback } from './fake-upstream.ts';
import { upstreamSuite } from './upstream-suite.ts';

const suite = upstreamSuite('page-miss-cors');
const skip = skipReason();
let api: Awaited<ReturnType<typeof listenLoopback>>;
let page: Server;
let pageUrl: string;
let browser: Browser | undefined;

beforeAll(async () => {
  // The API as it answers a browser: preflights and answers with access-control headers.
  api = await listenLoopback(
    createServer((req, res) => {
      // CORS headers for a browser's request only (one with an Origin), as many servers send them.
      const cors = req.headers.origin === undefined ? {} : { 'access-control-allow-origin': '*', 'access-control-allow-headers': 'authorization, content-type', 'access-control-allow-methods': 'POST, OPTIONS' };
      if (req.method === 'OPTIONS') {
        res.writeHead(204, cors).end();
        return;
      }
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { ...cors, 'content-type': 'application/json' });
        res.end(JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: 'hello page' }, finish_reason: 'stop' }] }));
      });
    }),
  );
  page = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>app</title>'));
  await new Promise<void>((r) => page.listen(0, '127.0.0.1', r));
  pageUrl = `http://localhost:${(page.address() as AddressInfo).port}/`;
  if (!skip) browser = await chromium.launch({ executablePath: chromiumPath!, headless: true, args: FLAGS });
});
afterAll(async () => {
  await browser?.close();
  await api.close();
  await new Promise<void>((r) => page.close(() => r()));
});

/** What the page gets for a chat completion through the proxy: status and body, or the error fetch threw. */
async function fromPage(proxyUrl: string, content: string): Promise<string> {
  const p = await browser!.newPage();
  await p.goto(pageUrl);
  const got = await p.evaluate(
    async ([base, text]) => {
      try {
        const r = await fetch(`${base}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }] }) });
        return `${r.status} ${r.headers.get('x-tapedeck-error') ?? ''} ${await r.text()}`;
      } catch (e) {
        return `threw ${(e as Error).message}`;
      }
    },
    [proxyUrl, content] as const,
  );
  await p.close();
  return got;
}

describe.skipIf(skip !== undefined)('a page on this machine calling tapedeck serve', () => {
  it('reads a miss as the miss, not as a failed fetch', async () => {
    const tape = join(suite.dir, 'page.tape');
    const rec = await startProxy({ tape, mode: 'record', upstream: api.url, port: 0 });
    expect(await fromPage(rec.url, 'Hi')).toContain('hello page');
    await rec.close();
    const replay = await startProxy({ tape, port: 0, onMiss: () => {} });
    try {
      expect(await fromPage(replay.url, 'Hi')).toContain('hello page');
      const miss = await fromPage(replay.url, 'Hi there');
      expect(miss).toMatch(/^400 E_MISS /);
      expect(miss).toContain('tapedeck miss: message 0 (user) text differs from the closest recording');
    } finally {
      await replay.close();
    }
  });

  it('replays to the page a tape recorded from Node (no preflight, no CORS headers recorded)', async () => {
    const tape = join(suite.dir, 'node.tape');
    // Recorded by a Node client through the proxy: it sends no Origin, so no preflight is recorded.
    const rec = await startProxy({ tape, mode: 'record', upstream: api.url, port: 0 });
    const live = await fetch(`${rec.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'From Node' }] }) });
    expect(live.status).toBe(200);
    await rec.close();
    const replay = await startProxy({ tape, port: 0, onMiss: () => {} });
    try {
      expect(await fromPage(replay.url, 'From Node')).toContain('hello page');
      const miss = await fromPage(replay.url, 'From the page');
      expect(miss).toMatch(/^400 E_MISS /);
      expect(miss).toContain('tapedeck miss: message 0 (user) text differs');
      // A preflight answered by the proxy is no miss.
      expect(replay.handler.stats().misses).toBe(1);
    } finally {
      await replay.close();
    }
  });

  it("a page of another site gets no access to the miss (it quotes the tape's text)", async () => {
    const tape = join(suite.dir, 'page.tape');
    const replay = await startProxy({ tape, port: 0, onMiss: () => {} });
    try {
      const res = await fetch(`${replay.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', origin: 'https://example.com' }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi again' }] }) });
      expect(res.status).toBe(400);
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
    } finally {
      await replay.close();
    }
  });
});
