// A page that mocks its own requests with MSW's worker (setupWorker from msw/browser, started
// with onUnhandledRequest: 'error', as component tests and Storybook set it up) and loads a
// tape: the worker sees the tape's URL as one of the page's requests, refuses it, and answers
// HTTP 500 "Request Handler Error". loadTape said to serve the file with the page and check
// its path, though the file was served at that path; it now names the mock that answered and
// how to let the tape through. Real MSW (its own worker script) in real headless Chromium.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, skipReason } from './chromium.ts';

const reason = skipReason();
if (reason) console.log(reason);

const root = join(import.meta.dirname, '../..');

/** The page's script: MSW's worker for the page's own API, then the tape. */
const app = `import { http, HttpResponse } from 'msw';
import { setupWorker } from 'msw/browser';
import { loadTape } from '../../dist/browser/index.js';
const worker = setupWorker(http.get('/api/users', () => HttpResponse.json([{ name: 'Ada' }])));
window.result = (async () => {
  await worker.start({ onUnhandledRequest: 'error', quiet: true });
  const users = await (await fetch('/api/users')).json();
  try {
    await loadTape('/tapes/chat.tape');
    return { users, loaded: true };
  } catch (e) {
    return { users, code: e.code, message: e.message };
  }
})();
`;

let server: Server | undefined;
let base = '';

beforeAll(async () => {
  if (reason) return;
  const out = await build({ stdin: { contents: app, resolveDir: import.meta.dirname, loader: 'js' }, bundle: true, write: false, format: 'esm', platform: 'browser', logLevel: 'silent' });
  const files: Record<string, [string, string | Uint8Array]> = {
    '/': ['text/html', '<!doctype html><title>app</title><script type="module" src="/app.js"></script>'],
    '/app.js': ['text/javascript', out.outputFiles[0]!.contents],
    '/mockServiceWorker.js': ['text/javascript', readFileSync(join(root, 'node_modules/msw/lib/mockServiceWorker.js'))],
    // Any bytes: the worker answers before the file is reached.
    '/tapes/chat.tape': ['application/octet-stream', new Uint8Array([1, 2, 3])],
  };
  server = createServer((req, res) => {
    const f = files[new URL(req.url!, 'http://x').pathname];
    if (!f) return res.writeHead(404).end();
    res.writeHead(200, { 'content-type': f[0] }).end(f[1]);
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => (server ? server.close(() => r()) : r())));

describe("loadTape under MSW's worker", () => {
  it.skipIf(reason)('a tape URL the mock answered is told as the mock, with the way to let it through', { timeout: 60_000 }, async () => {
    const browser = await launchChromium();
    try {
      const page = await browser.context.newPage();
      await page.goto(base + '/');
      const r = (await page.evaluate('window.result')) as { users: { name: string }[]; loaded?: boolean; code?: string; message?: string };
      expect(r.users[0]!.name).toBe('Ada');
      expect(r.code).toBe('E_TAPE_IO');
      expect(r.message).toContain('answered HTTP 500 Request Handler Error');
      expect(r.message).toContain('MSW');
      expect(r.message).toContain('passthrough');
    } finally {
      await browser.close();
    }
  });
});
