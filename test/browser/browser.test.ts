// The browser entry in a real headless Chromium (Debian's package, see chromium.ts): a page
// bundles llm-tapedeck/browser with esbuild, loads tapes recorded in Node by createFetch and
// replays them through the real OpenAI SDK. Node is the oracle: the page must give what Node
// gives (answers, miss diagnostics, keys with every backend).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setBackend, backend as currentBackend, hashJSON, hashValue, type BackendName } from '../../src/core/index.ts';
import { requestKeys } from '../../src/match/index.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { exportTapeJSON } from '../../src/store/export.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { startUpstream } from '../proxy/fake-upstream.ts';
import { launchChromium, skipReason } from './chromium.ts';
import { anthropicScript, changedPrompt, keyWorkload, oddBodies, openaiScript } from './script.ts';

const reason = skipReason();
if (reason) console.log(reason);

const root = join(import.meta.dirname, '../..');
const BACKENDS: BackendName[] = ['wasm-simd', 'wasm', 'js'];

const client = (baseURL: string, fetch: typeof globalThis.fetch) => new OpenAI({ apiKey: 'sk-test-only', baseURL, fetch, maxRetries: 0 });
const claude = (baseURL: string, fetch: typeof globalThis.fetch) => new Anthropic({ apiKey: 'sk-ant-test-only', baseURL, fetch, maxRetries: 0 });

describe.skipIf(reason !== undefined)('llm-tapedeck/browser in headless Chromium', () => {
  // Made in beforeAll: a describe's body runs even when the suite is skipped (no Chromium), and
  // a folder made there was left behind.
  let dir = '';
  const files = new Map<string, { body: Uint8Array | string; type: string }>();
  let server: Server;
  let base = '';
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  let page: Page;
  /** What Node got: recording live, then replaying the tape. */
  let recorded: Awaited<ReturnType<typeof openaiScript>>;
  let replayed: Awaited<ReturnType<typeof openaiScript>>;
  let claudeRecorded: Awaited<ReturnType<typeof anthropicScript>>;
  let claudeReplayed: Awaited<ReturnType<typeof anthropicScript>>;
  let nodeMiss: Awaited<ReturnType<typeof changedPrompt>>;
  let nodeOdd: Awaited<ReturnType<typeof oddBodies>>;
  /** Raw answers Node's replay gives to plain fetch calls (what the service worker must give). */
  const nodeRaw: Record<string, string> = {};
  let tapePath = '';
  let streamChunks = 0;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tapedeck-browser-'));
    // 1. Record in Node through createFetch against a stand-in provider, then replay in Node.
    const tape = join(dir, 'chat.tape');
    const upstream = await startUpstream();
    const rec = createFetch({ tape, mode: 'record' });
    try {
      recorded = await openaiScript(client(`${upstream.url}/v1`, rec));
      claudeRecorded = await anthropicScript(claude(upstream.url, rec));
    } finally {
      await rec.close();
      await upstream.close();
    }
    // Node replays as the page does, which compares no hosts (recorded on the stand-in's, asked on
    // the providers'): with hostMatch 'any'.
    const play = createFetch({ tape, mode: 'replay', hostMatch: 'any' });
    try {
      replayed = await openaiScript(client('https://api.openai.com/v1', play));
      claudeReplayed = await anthropicScript(claude('https://api.anthropic.com', play));
      for (const [name, content, stream] of [['plain', 'Hello there, héllo ✓', false], ['streamed', 'Stream me a story', true]] as const) {
        const res = await play('https://api.openai.com/v1/chat/completions', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'gpt-4o-mini', temperature: 0, ...(stream ? { stream: true } : {}), messages: [{ role: 'user', content }] }),
        });
        nodeRaw[name] = await res.text();
      }
    } finally {
      await play.close();
    }
    // The miss on a fresh fetch (nothing served yet), as the page will see it.
    const fresh = createFetch({ tape, mode: 'replay', hostMatch: 'any' });
    try {
      nodeMiss = await changedPrompt(client('https://api.openai.com/v1', fresh));
    } finally {
      await fresh.close();
    }
    const odd = createFetch({ tape, mode: 'replay', hostMatch: 'any' });
    try {
      nodeOdd = await oddBodies(odd);
    } finally {
      await odd.close();
    }
    tapePath = tape;
    const streamRecord = (await readTape(tape)).records.map((r) => r.value as { request: { body: { messages: { content: string }[] } }; response: { chunks?: unknown[] } }).find((v) => v.request.body.messages[0]!.content === 'Stream me a story');
    streamChunks = streamRecord!.response.chunks!.length;
    files.set('/tapes/chat.tape', { body: readFileSync(tape), type: 'application/octet-stream' });
    files.set('/tapes/chat.tape.json', { body: await exportTapeJSON(tape), type: 'application/json' });
    files.set('/wasm/tapedeck.wasm', { body: readFileSync(join(root, 'dist/wasm/tapedeck.wasm')), type: 'application/wasm' });

    // 2. Bundle the page as a user's bundler would.
    const bundle = await build({ entryPoints: [join(import.meta.dirname, 'page.ts')], bundle: true, write: false, format: 'esm', platform: 'browser', target: 'es2022', logLevel: 'silent' });
    files.set('/page.js', { body: bundle.outputFiles[0]!.contents, type: 'text/javascript' });
    const worker = await build({ entryPoints: [join(import.meta.dirname, 'sw.ts')], bundle: true, write: false, format: 'esm', platform: 'browser', target: 'es2022', logLevel: 'silent' });
    files.set('/sw.js', { body: worker.outputFiles[0]!.contents, type: 'text/javascript' });
    files.set('/', { body: '<!doctype html><meta charset="utf-8"><title>tapedeck</title><script type="module" src="/page.js"></script>', type: 'text/html' });

    // 3. Serve it from loopback and open it in Chromium.
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
    page = await browser.context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${base}/`);
    await page.waitForFunction(() => typeof window.suite === 'object');
    expect(errors).toEqual([]);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise((r) => server?.close(r));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('the recording and the Node replay agree (the oracle is sound)', () => {
    expect(recorded.chat).toBe('Echo 1: Hello there, héllo ✓');
    expect(recorded.repeats).toEqual(['Echo 5: Say it twice', 'Echo 6: Say it twice']);
    expect(replayed).toEqual(recorded);
    expect(claudeReplayed).toEqual(claudeRecorded);
    expect(nodeMiss.status).toBe(400);
    expect(nodeMiss.code).toBe('E_MISS');
  });

  /**
   * An answer as the page must give it: Node's, except where a miss names the tape (a file path
   * in Node, a URL in the page) and how to re-record (a page cannot record).
   */
  const comparable = (r: { status: number; text: string }) => {
    const body = JSON.parse(r.text) as { message?: string; error: { code: string; message?: string; tapedeck: Record<string, unknown> } };
    if (body.error.code === 'E_MISS') {
      // The message is at the top level too (for the AI SDK's Mistral, Cohere and Cerebras providers).
      delete body.message;
      delete body.error.message;
      for (const k of ['file', 'fix', 'fixes', 'report']) delete body.error.tapedeck[k];
    }
    return { status: r.status, body };
  };
  const comparableAll = (rs: Record<string, { status: number; text: string }>) => Object.fromEntries(Object.entries(rs).map(([k, v]) => [k, comparable(v)]));

  it('Node answers bodies no recording has with a 400: the core names the bad byte, other bodies miss by their key', () => {
    const codes = Object.fromEntries(Object.entries(nodeOdd).map(([k, v]) => [k, `${v.status} ${(JSON.parse(v.text) as { error: { code: string } }).error.code}`]));
    expect(codes).toEqual({
      malformed: '400 E_JSON',
      duplicateKey: '400 E_DUPLICATE_KEY',
      invalidUtf8: '400 E_UTF8',
      text: '400 E_MISS',
      textWithKey: '400 E_MISS',
      urlencoded: '400 E_MISS',
      multipart: '400 E_MISS',
    });
    expect(JSON.parse(nodeOdd.malformed!.text).error.message).toMatch(/^Invalid JSON at byte 28 /);
  });

  it("the page gives Node's answer to malformed JSON and to text, form and multipart bodies (no Buffer in a page)", async () => {
    const inPage = await page.evaluate((u) => window.suite.oddBodies(u), '/tapes/chat.tape');
    expect(comparableAll(inPage)).toEqual(comparableAll(nodeOdd));
  });

  it('createReplayFetch given the URL of a tape, not the tape, says to load it first (E_ARG)', async () => {
    const err = await page.evaluate(() => window.suite.errorOf(async () => window.tapedeck.createReplayFetch({ tape: '/tapes/chat.tape' as never })));
    expect(err).toMatchObject({ name: 'TapedeckError', code: 'E_ARG' });
    expect(err!.message).toContain("createReplayFetch({ tape: await loadTape('/tapes/chat.tape') })");
  });

  // Failed before: the chaos option was "unknown option" (E_ARG), and `x-tapedeck-chaos: none`,
  // which asks for no fault, was refused with a 400.
  it('a fault asked for in a page is E_CHAOS_MODE (option and header); `none` asks for none and is answered', async () => {
    const got = await page.evaluate((u) => window.suite.chaosAsked(u), '/tapes/chat.tape');
    expect(got.option).toMatchObject({ name: 'TapedeckError', code: 'E_CHAOS_MODE' });
    expect(got.none).toEqual({ status: 200, match: 'exact', error: null });
    expect(got.forced).toMatchObject({ status: 400, error: 'E_CHAOS_MODE' });
  });

  it('loads the binary tape and its exported JSON by URL, with the same records', async () => {
    const bin = await page.evaluate((u) => window.suite.loadTape(u), '/tapes/chat.tape');
    const json = await page.evaluate((u) => window.suite.loadTape(u), '/tapes/chat.tape.json');
    expect(bin.format).toBe('binary');
    expect(json.format).toBe('json');
    expect(bin.count).toBe(9);
    expect(json.count).toBe(bin.count);
    expect(json.header).toEqual(bin.header);
    // The same tape from a Response, a Uint8Array and an ArrayBuffer: the records at the byte
    // offsets Node's readTape reports.
    const nodeOffsets = (await readTape(tapePath)).records.map((r) => r.offset);
    expect(bin.offsets).toEqual(nodeOffsets);
    for (const as of ['response', 'bytes', 'arraybuffer'] as const) {
      const got = await page.evaluate(([u, a]) => window.suite.loadTape(u!, a as 'response'), ['/tapes/chat.tape', as]);
      expect({ ...got, name: '' }, as).toEqual({ ...bin, name: '' });
    }
    const missing = await page.evaluate(() => window.suite.errorOf(() => window.tapedeck.loadTape('/tapes/none.tape')));
    expect(missing).toMatchObject({ name: 'TapedeckError', code: 'E_TAPE_NOT_FOUND' });
    expect(missing!.message).toContain('/tapes/none.tape answered HTTP 404');
  });

  it('every backend gives the keys Node gives, and the scalar build is loaded only on demand', async () => {
    // Browser bundles embed only the SIMD build: the scalar one must be loaded first.
    const before = await page.evaluate(() => window.suite.errorOf(async () => window.tapedeck.setBackend('wasm')));
    expect(before).toMatchObject({ code: 'E_BACKEND' });
    expect(before!.message).toContain('not embedded');
    await page.evaluate(() => window.tapedeck.loadWasmBuild('wasm', '/wasm/tapedeck.wasm'));
    const was = currentBackend();
    try {
      for (const b of BACKENDS) {
        setBackend(b);
        const node = keyWorkload().map((body) => {
          const k = requestKeys(body);
          return { key: k.key, signature: k.signature, digest: hashJSON(JSON.stringify(body)), value: hashValue(body) };
        });
        const inPage = await page.evaluate((name) => window.suite.keys(name), b);
        expect(inPage, b).toEqual(node);
      }
    } finally {
      setBackend(was);
    }
    expect(await page.evaluate(() => window.suite.keys('wasm-simd').length)).toBe(keyWorkload().length);
  });

  it('replays plain, streamed, tool-call and repeated answers through the OpenAI SDK as Node did', async () => {
    expect(await page.evaluate((u) => window.suite.replay(u), '/tapes/chat.tape')).toEqual(replayed);
  });

  it('replays the Anthropic SDK (plain, streamed, tool use) as Node did', async () => {
    expect(await page.evaluate((u) => window.suite.replayAnthropic(u), '/tapes/chat.tape')).toEqual(claudeReplayed);
  });

  it('replays the exported JSON form the same way', async () => {
    expect(await page.evaluate((u) => window.suite.replay(u), '/tapes/chat.tape.json')).toEqual(replayed);
  });

  it('matches in signature mode as well (same matcher options as Node)', async () => {
    expect(await page.evaluate((u) => window.suite.replay(u, { match: 'signature' }), '/tapes/chat.tape')).toEqual(replayed);
  });

  it('a changed prompt gets the E_MISS diagnosis Node gives, through the SDK', async () => {
    const inPage = await page.evaluate((u) => window.suite.miss(u), '/tapes/chat.tape');
    // The only differences allowed: the tape's name (a file path in Node, a URL in the page), and
    // the fix, which names what exists where the miss happened (a page cannot record).
    const fixOf = (v: { error: unknown }) => (v.error as { tapedeck: { fix: string } }).tapedeck.fix;
    const norm = (v: { error: unknown }, name: string) => {
      const fix = fixOf(v);
      // On one line after '; ', or on its own line (capitalized) when the line would be too long.
      const text = JSON.stringify(v)
        .replaceAll(name, '<tape>')
        .replaceAll(fix.slice(1), '<fix>')
        .replace(/(; |\\n)[rR]<fix>/g, ' <fix>');
      return JSON.parse(text);
    };
    expect(norm(inPage, '/tapes/chat.tape')).toEqual(norm(nodeMiss, tapePath));
    expect(fixOf(nodeMiss)).toBe("re-record: createFetch({ mode: 'record' })");
    expect(fixOf(inPage)).toBe("re-record in Node (createFetch or tapedeck serve in mode 'record'), then load the new tape");
    expect(inPage.status).toBe(400);
    expect(inPage.code).toBe('E_MISS');
    // The short first line says where the prompt differs; the excerpts show it.
    expect(inPage.message.split('\n')[0]).toMatch(/^400 tapedeck miss: message 0 \(user\) text differs from the closest recording/);
    expect(inPage.message).toMatch(/Hello there/);
  });

  it('streams replay byte for byte, all at once or paced chunk by chunk', async () => {
    const whole = await page.evaluate((u) => window.suite.rawStream(u, 'none'), '/tapes/chat.tape');
    expect(whole.text).toBe(nodeRaw.streamed);
    expect(whole.match).toBe('exact');
    const gap = 20;
    const paced = await page.evaluate(([u, g]) => window.suite.rawStream(u as string, g as number), ['/tapes/chat.tape', gap] as const);
    expect(paced.text).toBe(nodeRaw.streamed);
    // One read per recorded chunk, each released after its gap (timers never fire early).
    expect(streamChunks).toBeGreaterThan(3);
    expect(paced.reads).toBe(streamChunks);
    expect(paced.at[paced.at.length - 1]!).toBeGreaterThanOrEqual(gap * (streamChunks - 1) * 0.9);
    const recordedPace = await page.evaluate((u) => window.suite.rawStream(u, 'recorded'), '/tapes/chat.tape');
    expect(recordedPace.text).toBe(nodeRaw.streamed);
    expect(recordedPace.reads).toBe(streamChunks);
  });

  it('passthrough sends every request to the live fetch', async () => {
    expect(await page.evaluate((u) => window.suite.passthrough(u), '/tapes/chat.tape')).toEqual({ content: 'live answer', seen: ['https://api.openai.com/v1/chat/completions'] });
  });

  it('passthrough failures: an unreachable API is a 502 naming its origin with a fix for pages, an abort stays the caller\'s', async () => {
    const r = await page.evaluate((u) => window.suite.passthroughFailures(u), '/tapes/chat.tape');
    expect(r.unreachable.status).toBe(502);
    expect(r.unreachable.error.code).toBe('E_UPSTREAM');
    expect(r.unreachable.error.message).toContain('https://api.openai.com is unreachable (Failed to fetch)');
    expect(r.unreachable.error.message).not.toContain('secret');
    // A page has no TAPEDECK_MODE nor createFetch: the fix names the option it does have.
    expect(r.unreachable.error.message).toContain("createReplayFetch mode 'replay'");
    expect(r.unreachable.error.message).not.toContain('TAPEDECK_MODE');
    expect(r.whenAborted).toBe('AbortError');
    expect(r.fetchSawSignal).toBe(true);
  });

  it('service-worker mode answers a page that calls fetch itself', async () => {
    const r = await page.evaluate(() => window.suite.viaServiceWorker());
    expect(r.plain).toEqual({ status: 200, match: 'exact', text: nodeRaw.plain });
    expect(r.streamed).toEqual({ status: 200, match: 'exact', text: nodeRaw.streamed });
    expect(r.miss.status).toBe(400);
    expect(JSON.parse(r.miss.text).error.code).toBe('E_MISS');
    // Bodies no recording has: the worker answers as Node does, never with a 500.
    expect(comparableAll(r.odd)).toEqual(comparableAll(nodeOdd));
  });
});
