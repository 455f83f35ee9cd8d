// Service-worker mode (replayInServiceWorker): what a page learns when the worker cannot serve
// (a misspelt option, a tape that cannot be loaded), and which recording each page load gets.
// First in Node, with a stand-in for a worker's global scope (fast, every branch), then in real
// headless Chromium (Debian's package, see chromium.ts) with the documented registration snippet
// and the OpenAI SDK, as a user's Playwright test meets it.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replayInServiceWorker } from '../../src/browser/index.ts';
import { TapedeckError } from '../../src/errors.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { launchChromium, skipReason } from './chromium.ts';

const root = join(import.meta.dirname, '../..');
const reason = skipReason();
if (reason) console.log(reason);

const chat = (content: string) => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] });

/** A tape holding `Hello` twice, answered `Answer #1` then `Answer #2`, recorded in Node. */
async function helloTwice(): Promise<Uint8Array> {
  const dir = mkdtempSync(join(tmpdir(), 'tapedeck-sw-'));
  try {
    const file = join(dir, 'chat.tape');
    let n = 0;
    const live = (async () => {
      n++;
      return Response.json({ id: `c${n}`, object: 'chat.completion', created: 0, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: `Answer #${n}` }, finish_reason: 'stop' }] });
    }) as typeof fetch;
    const rec = createFetch({ tape: file, mode: 'record', summary: false, fetch: live });
    for (let i = 0; i < 2; i++) await rec('https://api.openai.com/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(chat('Hello')) });
    await rec.close();
    return new Uint8Array(readFileSync(file));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

type Handler = (e: object) => void;

/**
 * A stand-in for a service worker's global scope (and the network, serving `files`) for the
 * length of `run`: the listeners replayInServiceWorker adds, the clients that are open.
 */
async function inWorker(files: Record<string, Uint8Array>, run: (w: { listeners: Map<string, Handler>; open: Set<string>; install(): Promise<unknown>; ask(clientId: string): Promise<Response> }) => Promise<void>): Promise<void> {
  const scope = globalThis as unknown as Record<string, unknown>;
  const names = ['skipWaiting', 'clients', 'addEventListener', 'location', 'fetch'];
  const had = new Map(names.map((n) => [n, Object.getOwnPropertyDescriptor(scope, n)]));
  const listeners = new Map<string, Handler>();
  const open = new Set<string>();
  Object.assign(scope, {
    skipWaiting: async () => {},
    clients: { claim: async () => {}, get: async (id: string) => (open.has(id) ? { id } : undefined) },
    addEventListener: (type: string, fn: Handler) => listeners.set(type, fn),
    location: { href: 'http://127.0.0.1:9/sw.js' },
    fetch: async (u: string | URL) => {
      const body = files[new URL(String(u)).pathname];
      return body ? new Response(body) : new Response('not found', { status: 404, statusText: 'Not Found' });
    },
  });
  try {
    await run({
      listeners,
      open,
      install() {
        let p: Promise<unknown> | undefined;
        listeners.get('install')!({ waitUntil: (x: Promise<unknown>) => (p = x) });
        return p!;
      },
      async ask(clientId) {
        let p: Promise<Response> | undefined;
        const request = new Request('https://api.openai.com/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(chat('Hello')) });
        listeners.get('fetch')!({ request, clientId, respondWith: (r: Promise<Response>) => (p = r) });
        if (!p) throw new Error('the worker did not answer: the request went to the network');
        return p;
      },
    });
  } finally {
    for (const [n, d] of had) {
      if (d) Object.defineProperty(scope, n, d);
      else delete scope[n];
    }
  }
}

const errorOf = (f: () => unknown): TapedeckError => {
  try {
    f();
  } catch (e) {
    return e as TapedeckError;
  }
  throw new Error('accepted');
};

const content = async (r: Response) => ((await r.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content;

describe('replayInServiceWorker, in a stand-in worker scope', () => {
  it('refuses a misspelt option, a hook or a bad value when the worker script runs, naming itself and its options (urls among them)', async () => {
    await inWorker({}, async ({ listeners }) => {
      const typo = errorOf(() => replayInServiceWorker({ tape: '/tapes/chat.tape', timming: 30 } as never));
      expect(typo).toBeInstanceOf(TapedeckError);
      expect(typo.code).toBe('E_ARG');
      expect(typo.message).toMatch(/^Unknown replayInServiceWorker option "timming"\. /);
      expect(typo.hint).toBe('The options are tape, mode, match, strictOrder, timing, ignoreArgs, volatileKeys, volatileText, matchHeaders, redact, missStatus, fetch, onWarning, urls (docs/browser.md).');
      const hook = errorOf(() => replayInServiceWorker({ tape: '/tapes/chat.tape', beforeReplay: (r: unknown) => r } as never));
      expect(hook.code).toBe('E_ARG');
      expect(hook.message).toMatch(/^replayInServiceWorker does not take beforeReplay: hooks and custom matchers run in Node/);
      // Values are checked now too (by the replay fetch the first page will use).
      expect(errorOf(() => replayInServiceWorker({ tape: '/tapes/chat.tape', timing: 'fast' as never }))).toMatchObject({ code: 'E_ARG', message: expect.stringMatching(/^Invalid timing "fast"\. /) });
      expect(errorOf(() => replayInServiceWorker({ tape: '/tapes/chat.tape', mode: 'record' as never })).code).toBe('E_MODE');
      // Nothing was set up: the script fails, and so does the page's register().
      expect([...listeners.keys()]).toEqual([]);
    });
  });

  it('installs when the tape cannot be loaded, and answers every request it covers with the error, naming the URL and the HTTP status', async () => {
    await inWorker({}, async (w) => {
      const { ready } = replayInServiceWorker({ tape: '/tapes/missing.tape' });
      await expect(w.install()).resolves.toBeUndefined();
      await expect(ready).rejects.toMatchObject({ code: 'E_TAPE_NOT_FOUND' });
      for (const client of ['a', 'b']) {
        const r = await w.ask(client);
        expect(r.status).toBe(500);
        // Raised at once by the OpenAI and Anthropic SDKs, not retried: the same answer every time.
        expect(r.headers.get('x-should-retry')).toBe('false');
        expect(r.headers.get('x-tapedeck-error')).toBe('E_TAPE_NOT_FOUND');
        const { error } = (await r.json()) as { error: { code: string; message: string } };
        expect(error.code).toBe('E_TAPE_NOT_FOUND');
        expect(error.message).toContain('The tape at http://127.0.0.1:9/tapes/missing.tape answered HTTP 404 Not Found.');
      }
    });
  });

  it('replays each client from the first recording, and forgets the positions of a client that is gone', async () => {
    const tape = await helloTwice();
    await inWorker({ '/tapes/chat.tape': tape }, async (w) => {
      const { ready } = replayInServiceWorker({ tape: '/tapes/chat.tape' });
      await w.install();
      expect((await ready).records.length).toBe(2);
      w.open.add('a').add('b');
      expect(await content(await w.ask('a'))).toBe('Answer #1');
      expect(await content(await w.ask('a'))).toBe('Answer #2');
      // Another page (a reload is a new client) starts again from the first recording.
      expect(await content(await w.ask('b'))).toBe('Answer #1');
      expect(await content(await w.ask('a'))).toBe('Answer #2');
      // A new client comes: the worker looks for the clients it keeps positions for, and drops
      // the gone one's. Only a stand-in can ask again for a client that is gone: from the start.
      w.open.delete('a');
      w.open.add('c');
      expect(await content(await w.ask('c'))).toBe('Answer #1');
      await new Promise((r) => setTimeout(r, 10));
      expect(await content(await w.ask('a'))).toBe('Answer #1');
      // An open client keeps its own.
      expect(await content(await w.ask('b'))).toBe('Answer #2');
    });
  });
});

describe.skipIf(reason !== undefined)('replayInServiceWorker in headless Chromium', () => {
  const files = new Map<string, { body: Uint8Array | string; type: string }>();
  let server: Server;
  let base = '';
  let browser: Awaited<ReturnType<typeof launchChromium>>;

  /** A worker script as a user bundles it, calling replayInServiceWorker with `options` (JS source). */
  const worker = async (options: string) =>
    (
      await build({
        stdin: { contents: `import { replayInServiceWorker } from './dist/browser/index.js';\nreplayInServiceWorker(${options});`, resolveDir: root, loader: 'js' },
        bundle: true,
        write: false,
        format: 'esm',
        platform: 'browser',
        target: 'es2022',
        logLevel: 'silent',
      })
    ).outputFiles[0]!.contents;

  beforeAll(async () => {
    files.set('/tapes/chat.tape', { body: await helloTwice(), type: 'application/octet-stream' });
    // Each worker in its own folder: its scope, so the three never replace one another.
    const js = 'text/javascript';
    files.set('/ok/sw.js', { body: await worker("{ tape: '/tapes/chat.tape', urls: ['https://api.openai.com/'] }"), type: js });
    files.set('/missing/sw.js', { body: await worker("{ tape: '/tapes/missing.tape', urls: ['https://api.openai.com/'] }"), type: js });
    files.set('/typo/sw.js', { body: await worker("{ tape: '/tapes/chat.tape', urls: ['https://api.openai.com/'], timming: 30 }"), type: js });
    // The page: the registration snippet of docs/browser.md (given 5 s), and a call through the
    // OpenAI SDK with its default retries, as the app under test makes it.
    const page = `
      import OpenAI from 'openai';
      window.register = async (script) => {
        try {
          await navigator.serviceWorker.register(script, { type: 'module' });
        } catch (e) {
          return 'register() rejected: ' + e.message;
        }
        const snippet = (async () => {
          await navigator.serviceWorker.ready;
          if (!navigator.serviceWorker.controller) {
            await new Promise((r) => navigator.serviceWorker.addEventListener('controllerchange', r, { once: true }));
          }
          return 'controlled';
        })();
        return Promise.race([snippet, new Promise((r) => setTimeout(() => r('still waiting after 5 s'), 5000))]);
      };
      window.ask = async (content) => {
        const client = new OpenAI({ apiKey: 'replay-only', dangerouslyAllowBrowser: true });
        try {
          const r = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] });
          return r.choices[0].message.content;
        } catch (e) {
          return { status: e.status, message: e.message };
        }
      };`;
    const bundle = await build({ stdin: { contents: page, resolveDir: root, loader: 'js' }, bundle: true, write: false, format: 'esm', platform: 'browser', target: 'es2022', logLevel: 'silent' });
    files.set('/page.js', { body: bundle.outputFiles[0]!.contents, type: js });
    const html = { body: '<!doctype html><meta charset="utf-8"><title>tapedeck</title><script type="module" src="/page.js"></script>', type: 'text/html' };
    for (const folder of ['ok', 'missing', 'typo']) files.set(`/${folder}/`, html);
    server = createServer((req, res) => {
      const f = files.get((req.url ?? '/').split('?')[0]!);
      if (!f) {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
        return;
      }
      res.writeHead(200, { 'content-type': f.type, 'cache-control': 'no-store' }).end(f.body);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    if (server) await new Promise((r) => server.close(r));
  });

  const open = async (folder: string, page?: Page): Promise<Page> => {
    const p = page ?? (await browser.context.newPage());
    await p.goto(`${base}/${folder}/`);
    await p.waitForFunction(() => typeof (window as unknown as { ask?: unknown }).ask === 'function');
    return p;
  };
  const register = (p: Page, script: string) => p.evaluate((s) => (window as unknown as { register(s: string): Promise<string> }).register(s), script);
  const ask = (p: Page, content: string) => p.evaluate((c) => (window as unknown as { ask(c: string): Promise<unknown> }).ask(c), content);

  it('a tape the worker cannot load: the page is controlled, and the SDK raises the error naming the tape URL and its status, instead of waiting forever', async () => {
    const p = await open('missing');
    try {
      expect(await register(p, '/missing/sw.js')).toBe('controlled');
      const t0 = Date.now();
      const r = (await ask(p, 'Hello')) as { status: number; message: string };
      expect(r.status).toBe(500);
      expect(r.message).toContain(`The tape at ${base}/tapes/missing.tape answered HTTP 404 Not Found.`);
      // x-should-retry: false: raised at once, not after the SDK's two retries (over 1.1 s of back-off).
      expect(Date.now() - t0).toBeLessThan(1000);
    } finally {
      await p.close();
    }
  });

  it("a misspelt option fails the worker script: register() rejects, and the worker's error names replayInServiceWorker and its options", async () => {
    const p = await open('typo');
    const cdp = await browser.context.newCDPSession(p);
    const reported: string[] = [];
    cdp.on('ServiceWorker.workerErrorReported', (e) => reported.push(e.errorMessage.errorMessage));
    await cdp.send('ServiceWorker.enable');
    try {
      expect(await register(p, '/typo/sw.js')).toMatch(/^register\(\) rejected: /);
      await expect.poll(() => reported.join('\n')).toContain('Unknown replayInServiceWorker option "timming". The options are tape, mode, match, strictOrder, timing, ignoreArgs, volatileKeys, volatileText, matchHeaders, redact, missStatus, fetch, onWarning, urls');
    } finally {
      await cdp.detach();
      await p.close();
    }
  });

  it('each page load, and each tab, replays from the first recording', async () => {
    const a = await open('ok');
    let b: Page | undefined;
    try {
      const answers: unknown[] = [];
      for (let load = 0; load < 3; load++) {
        if (load > 0) await open('ok', a);
        expect(await register(a, '/ok/sw.js')).toBe('controlled');
        answers.push(await ask(a, 'Hello'));
      }
      expect(answers).toEqual(['Answer #1', 'Answer #1', 'Answer #1']);
      // Two tabs at once: each its own order.
      expect(await ask(a, 'Hello')).toBe('Answer #2');
      b = await open('ok');
      expect(await register(b, '/ok/sw.js')).toBe('controlled');
      expect(await ask(b, 'Hello')).toBe('Answer #1');
      expect(await ask(b, 'Hello')).toBe('Answer #2');
    } finally {
      await b?.close();
      await a.close();
    }
  });
});
