// A page of this machine (vitest's browser mode, a dev server on localhost) recording through
// tapedeck serve from a provider that takes no calls from pages: an OpenAI-compatible server
// of one's own, which sends no CORS headers. The page's preflight went on to the provider,
// which answered 404, and its answers carried no CORS headers: the browser stopped the call
// ("TypeError: Failed to fetch", the OpenAI SDK's "Connection error."), though the same tape,
// once recorded, replays to that page. The proxy now answers such a page's preflight itself
// and lets it read the live answer, as it does in replay; a page of any other origin still
// gets nothing.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxy } from '../../src/proxy/index.ts';
import { chromiumPath, FLAGS, skipReason } from '../browser/chromium.ts';
import { upstreamSuite } from './upstream-suite.ts';

const suite = upstreamSuite('page-records-no-cors');
const skip = skipReason();
let page: Server;
let browser: Browser | undefined;

beforeAll(async () => {
  page = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>app</title>'));
  await new Promise<void>((r) => page.listen(0, '127.0.0.1', r));
  if (!skip) browser = await chromium.launch({ executablePath: chromiumPath!, headless: true, args: [...FLAGS, '--host-resolver-rules=MAP app.test 127.0.0.1'] });
});
afterAll(async () => {
  await browser?.close();
  await new Promise<void>((r) => page.close(() => r()));
});

/** What a page at `host` gets for a chat completion through the proxy: status and body, or the error fetch threw. */
async function fromPage(host: string, proxyUrl: string, content: string): Promise<string> {
  const p = await browser!.newPage();
  await p.goto(`http://${host}:${(page.address() as AddressInfo).port}/`);
  const got = await p.evaluate(
    async ([base, text]) => {
      try {
        const r = await fetch(`${base}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }] }) });
        return `${r.status} ${await r.text()}`;
      } catch (e) {
        return `threw ${(e as Error).message}`;
      }
    },
    [proxyUrl, content] as const,
  );
  await p.close();
  return got;
}

describe.skipIf(skip !== undefined)('a page on this machine recording through tapedeck serve', () => {
  it('records from a provider that sends no CORS headers, and replays it', async () => {
    const tape = join(suite.dir, 'page.tape');
    const rec = await startProxy({ tape, mode: 'update', upstream: suite.upstream.url, port: 0 });
    try {
      expect(await fromPage('localhost', rec.url, 'from the page')).toMatch(/^200 .*Echo \d+: from the page/);
      // The preflight was the proxy's to answer: the provider got the call alone.
      expect(suite.upstream.calls.filter((c) => c.method === 'OPTIONS')).toHaveLength(0);
      expect(rec.handler.stats().recorded).toBe(1);
    } finally {
      await rec.close();
    }
    const replay = await startProxy({ tape, mode: 'replay', port: 0 });
    try {
      expect(await fromPage('localhost', replay.url, 'from the page')).toMatch(/^200 .*Echo \d+: from the page/);
    } finally {
      await replay.close();
    }
  });

  it("reads the proxy's stats, to fail its own test on a miss the component caught", async () => {
    const rec = await startProxy({ tape: join(suite.dir, 'stats.tape'), mode: 'replay', port: 0, onMiss: () => {} });
    try {
      expect(await fromPage('localhost', rec.url, 'never recorded')).toMatch(/^400 /);
      const p = await browser!.newPage();
      await p.goto(`http://localhost:${(page.address() as AddressInfo).port}/`);
      const got = await p.evaluate(async (base) => {
        try {
          const s = (await (await fetch(`${base}/__tapedeck/stats`)).json()) as { misses: number; missed: string[] };
          return `${s.misses} ${s.missed.length}`;
        } catch (e) {
          return `threw ${(e as Error).message}`;
        }
      }, rec.url);
      await p.close();
      expect(got).toBe('1 1');
    } finally {
      await rec.close();
    }
  });

  it('a page of another origin still reads nothing of a live answer', async () => {
    const rec = await startProxy({ tape: join(suite.dir, 'other.tape'), mode: 'update', upstream: suite.upstream.url, port: 0 });
    try {
      // app.test (resolved to this machine by the browser alone): another site's origin.
      expect(await fromPage('app.test', rec.url, 'from another origin')).toBe('threw Failed to fetch');
    } finally {
      await rec.close();
    }
  });
});
