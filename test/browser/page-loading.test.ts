// What a page is given to load, in real headless Chromium (Debian's package, see chromium.ts),
// with Node as the oracle: a JSON form whose request was edited by hand, an empty tape, the
// text of a tape instead of its URL or bytes, a Response already read, a misspelt redact rule,
// and WebAssembly builds that are the wrong file or missing. Found by a user trial of browser
// playback; each used to be silently wrong or a message that sent the user the wrong way.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { exportTapeJSON, importTapeJSON } from '../../src/store/export.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { launchChromium, skipReason } from './chromium.ts';

const reason = skipReason();
if (reason) console.log(reason);

const root = join(import.meta.dirname, '../..');
const URL_PATH = 'https://api.openai.com/v1/chat/completions';
const chat = (content: string, extra: object = {}) => JSON.stringify({ model: 'gpt-4o-mini', ...extra, messages: [{ role: 'user', content }] });

/** Records `prompts` in Node, each answered `Answer to <prompt>`; returns the tape's path. */
async function record(dir: string, name: string, prompts: string[], opts: { ignoreArgs?: string[]; extra?: object } = {}): Promise<string> {
  const tape = join(dir, name);
  const live = (async (_u: unknown, init?: RequestInit) => {
    const b = init!.body;
    const asked = (JSON.parse(typeof b === 'string' ? b : new TextDecoder().decode(b as Uint8Array)) as { messages: { content: string }[] }).messages[0]!.content;
    return Response.json({ id: 'c1', object: 'chat.completion', created: 0, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: `Answer to ${asked}` }, finish_reason: 'stop' }] });
  }) as typeof fetch;
  const rec = createFetch({ tape, mode: 'record', summary: false, fetch: live, ...(opts.ignoreArgs ? { ignoreArgs: opts.ignoreArgs } : {}) });
  for (const p of prompts) expect((await rec(URL_PATH, { method: 'POST', headers: { 'content-type': 'application/json' }, body: chat(p, opts.extra) })).status).toBe(200);
  await rec.close();
  return tape;
}

/** Status and answer (or error code) of each prompt replayed in Node from `tape`. */
async function nodeAnswers(tape: string, prompts: string[]): Promise<Record<string, string>> {
  const play = createFetch({ tape, mode: 'replay', hostMatch: 'any', summary: false });
  const out: Record<string, string> = {};
  try {
    for (const p of prompts) {
      const r = await play(URL_PATH, { method: 'POST', headers: { 'content-type': 'application/json' }, body: chat(p) });
      const body = (await r.json()) as { choices?: { message: { content: string } }[]; error?: { code: string } };
      out[p] = `${r.status} ${body.choices?.[0]!.message.content ?? body.error!.code}`;
    }
  } finally {
    await play.close();
  }
  return out;
}

type Err = { name: string; code?: string; message: string; hint?: string };

declare global {
  interface Window {
    tapedeck: typeof import('../../dist/browser/index.js');
  }
}

describe.skipIf(reason !== undefined)('llm-tapedeck/browser: what a page loads', () => {
  let dir = '';
  const files = new Map<string, { body: Uint8Array | string; type: string }>();
  /** Every path the page asked the server for. */
  const asked: string[] = [];
  let server: Server;
  let base = '';
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  let page: Page;
  let edited: { node: Record<string, string> };
  let emptyNode = '';

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tapedeck-page-loading-'));
    // A tape exported to JSON, its request's prompt and its answer edited by hand.
    const tape = await record(dir, 'chat.tape', ['Hello', 'Bye']);
    const json = (await exportTapeJSON(tape)).replace('"content": "Hello"', '"content": "Hi there, fixed by hand"').replace('Answer to Hello', 'Edited answer');
    expect(json).toContain('Hi there, fixed by hand');
    expect(json).toContain('Edited answer');
    files.set('/tapes/edited.tape.json', { body: json, type: 'application/json' });
    // Node's answer to the same edit: `tapedeck import` keys the edited record again.
    const imported = join(dir, 'edited.tape');
    expect((await importTapeJSON(json, imported)).rekeyed).toBe(1);
    edited = { node: await nodeAnswers(imported, ['Hello', 'Hi there, fixed by hand', 'Bye']) };
    // A tape recorded with ignoreArgs, exported unedited: its keys are the ones its requests give
    // under the same option.
    const ignoring = await record(dir, 'ignoring.tape', ['Hello'], { ignoreArgs: ['temperature'], extra: { temperature: 0.5 } });
    files.set('/tapes/ignoring.tape.json', { body: await exportTapeJSON(ignoring), type: 'application/json' });
    files.set('/tapes/chat.tape', { body: readFileSync(tape), type: 'application/octet-stream' });
    // A 0-byte tape, and what Node warns when it reads one.
    const empty = join(dir, 'empty.tape');
    writeFileSync(empty, '');
    emptyNode = (await readTape(empty)).warnings.map((w) => `${w.code} ${w.message.replaceAll(empty, '<tape>')}`).join('\n');
    files.set('/tapes/empty.tape', { body: new Uint8Array(0), type: 'application/octet-stream' });
    files.set('/wasm/tapedeck-simd.wasm', { body: readFileSync(join(root, 'dist/wasm/tapedeck-simd.wasm')), type: 'application/wasm' });
    files.set('/wasm/tapedeck-simd-browser.wasm', { body: readFileSync(join(root, 'dist/wasm/tapedeck-simd-browser.wasm')), type: 'application/wasm' });

    // The page: the browser entry as a user's bundler takes it.
    const bundle = await build({ stdin: { contents: "import * as tapedeck from './dist/browser/index.js'; window.tapedeck = tapedeck;", resolveDir: root }, bundle: true, write: false, format: 'esm', platform: 'browser', target: 'es2022', logLevel: 'silent' });
    files.set('/page.js', { body: bundle.outputFiles[0]!.contents, type: 'text/javascript' });
    files.set('/', { body: '<!doctype html><meta charset="utf-8"><title>tapedeck</title><script type="module" src="/page.js"></script>', type: 'text/html' });
    server = createServer((req, res) => {
      asked.push(req.url ?? '/');
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
    await page.goto(`${base}/`);
    await page.waitForFunction(() => typeof window.tapedeck === 'object');
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    if (server) await new Promise((r) => server.close(r));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** Each prompt replayed in the page from the tape at `url` (as nodeAnswers), and the warnings. */
  const pageAnswers = (url: string, prompts: string[], opts: { ignoreArgs?: string[]; extra?: object } = {}) =>
    page.evaluate(
      async ([u, ps, o, target]) => {
        const warnings: string[] = [];
        const f = window.tapedeck.createReplayFetch({ tape: await window.tapedeck.loadTape(u), onWarning: (m) => warnings.push(m), ...(o.ignoreArgs ? { ignoreArgs: o.ignoreArgs } : {}) });
        const out: Record<string, string> = {};
        for (const p of ps) {
          const r = await f(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', ...o.extra, messages: [{ role: 'user', content: p }] }) });
          const body = (await r.json()) as { choices?: { message: { content: string } }[]; error?: { code: string } };
          out[p] = `${r.status} ${body.choices?.[0]!.message.content ?? body.error!.code}`;
        }
        await f.close();
        return { out, warnings };
      },
      [url, prompts, opts, URL_PATH] as const,
    );

  const errorIn = (fn: string, ...args: unknown[]): Promise<Err | undefined> =>
    page.evaluate(
      async ([src, a]) => {
        try {
          await (new Function('td', 'args', `return (${src})(td, ...args)`) as (td: unknown, args: unknown[]) => Promise<unknown>)(window.tapedeck, a);
          return undefined;
        } catch (e) {
          const err = e as Err & { details?: { hint?: string } };
          return { name: err.name, code: err.code, message: err.message, hint: err.hint ?? err.details?.hint };
        }
      },
      [fn, args] as const,
    );

  // Failed before: the stored key of the old request was kept, so `Hello` got "Edited answer"
  // and the edited prompt missed.
  it('a request edited in the JSON form is keyed as it now reads, as `tapedeck import` keys it, with one warning', async () => {
    expect(edited.node).toEqual({ Hello: '400 E_MISS', 'Hi there, fixed by hand': '200 Edited answer', Bye: '200 Answer to Bye' });
    const got = await pageAnswers('/tapes/edited.tape.json', ['Hello', 'Hi there, fixed by hand', 'Bye']);
    expect(got.out).toEqual(edited.node);
    const rekey = got.warnings.filter((w) => w.includes('edited after export'));
    expect(rekey).toEqual([`/tapes/edited.tape.json: 1 record(s) edited after export are keyed as their requests now read. Recorded with ignoreArgs, volatileKeys or volatileText? Give createReplayFetch the same.`]);
  });

  it('a JSON form recorded with ignoreArgs keeps its keys when replayed with the same ignoreArgs (nothing is keyed again)', async () => {
    const got = await pageAnswers('/tapes/ignoring.tape.json', ['Hello'], { ignoreArgs: ['temperature'], extra: { temperature: 0.9 } });
    expect(got.out).toEqual({ Hello: '200 Answer to Hello' });
    expect(got.warnings).toEqual([]);
  });

  /** Node's error for a redact option, as errorIn reports the page's. */
  const nodeRedactError = (redact: object): Err | undefined => {
    try {
      createFetch({ tape: join(dir, 'chat.tape'), mode: 'replay', redact: redact as never });
    } catch (e) {
      return { name: (e as Err).name, code: (e as Err).code, message: (e as Err).message, hint: (e as Err).hint };
    }
    return undefined;
  };

  // Failed before: accepted without a word (the browser build's check did nothing).
  it('a misspelt redact rule is E_ARG in the page, in the words Node uses', async () => {
    const node = nodeRedactError({ feilds: ['ssn'] });
    expect(node).toMatchObject({ code: 'E_ARG', message: expect.stringMatching(/^Unknown redact option "feilds"\. Did you mean fields\? /) });
    const inPage = await errorIn("async (td, url) => td.createReplayFetch({ tape: await td.loadTape(url), redact: { feilds: ['ssn'] } })", '/tapes/chat.tape');
    expect(inPage).toEqual(node);
    // The names it has are taken.
    expect(await errorIn("async (td, url) => td.createReplayFetch({ tape: await td.loadTape(url), redact: { fields: ['ssn'], headers: ['x-token'], keepSecrets: false } })", '/tapes/chat.tape')).toBeUndefined();
  });

  // Failed before: the text was fetched as a URL (a request for a path thousands of characters
  // long), and the 404's message quoted all of it.
  it('loadTape given the text of a tape is E_ARG at once, with no request and a short message', async () => {
    const text = String(files.get('/tapes/edited.tape.json')!.body);
    expect(text.length).toBeGreaterThan(2000);
    const before = asked.length;
    for (const given of [text, `\n  ${text}`, '[1, 2]']) {
      const err = await errorIn('async (td, t) => td.loadTape(t)', given);
      expect(err).toMatchObject({ name: 'TapedeckError', code: 'E_ARG' });
      expect(err!.message.length).toBeLessThan(200);
      expect(err!.hint).toBe('Pass the bytes: new TextEncoder().encode(text), or a URL.');
    }
    expect(asked.slice(before)).toEqual([]);
    // A long URL that is no tape's is clipped in the 404's message.
    const long = await errorIn('async (td, p) => td.loadTape(p)', `/tapes/${'x'.repeat(3000)}.tape`);
    expect(long).toMatchObject({ code: 'E_TAPE_NOT_FOUND' });
    expect(long!.message).toContain('… (3012 characters) answered HTTP 404');
    expect(long!.message.length).toBeLessThan(400);
  });

  // Failed before: a bare TypeError from arrayBuffer().
  it('loadTape given a Response whose body was already read is E_ARG saying so', async () => {
    const err = await errorIn('async (td, u) => { const r = await fetch(u); await r.arrayBuffer(); return td.loadTape(r) }', '/tapes/chat.tape');
    expect(err).toMatchObject({ name: 'TapedeckError', code: 'E_ARG' });
    expect(err!.message).toContain('was already read');
  });

  // Failed before: the hint said to serve dist/wasm/ from the same version (it was), and a 404
  // was E_TAPE_NOT_FOUND, a tape's error.
  it("loadWasmBuild given Node's SIMD build names the page's file; a missing build is E_BACKEND", async () => {
    const node = await errorIn("(td, u) => td.loadWasmBuild('wasm-simd', u)", '/wasm/tapedeck-simd.wasm');
    expect(node).toMatchObject({ code: 'E_BACKEND' });
    expect(node!.hint).toContain('dist/wasm/tapedeck-simd-browser.wasm');
    expect(await errorIn("(td, u) => td.loadWasmBuild('wasm-simd', u)", '/wasm/tapedeck-simd-browser.wasm')).toBeUndefined();
    const scalar = await errorIn("(td, u) => td.loadWasmBuild('wasm', u)", '/wasm/tapedeck-simd-browser.wasm');
    expect(scalar!.hint).toContain('dist/wasm/tapedeck.wasm');
    const missing = await errorIn("(td, u) => td.loadWasmBuild('wasm', u)", '/wasm/nope.wasm');
    expect(missing).toMatchObject({ name: 'TapedeckError', code: 'E_BACKEND' });
    expect(missing!.message).toContain('/wasm/nope.wasm answered HTTP 404');
  });

  // Failed before: E_TAPE_CORRUPT "it starts with bytes  (byte 0)".
  it("an empty tape loads as Node reads it: no records, and Node's E_TAPE_EMPTY warning, told through onWarning", async () => {
    expect(emptyNode).toMatch(/^E_TAPE_EMPTY <tape> is empty \(0 bytes/);
    const loaded = await page.evaluate(async () => {
      const t = await window.tapedeck.loadTape('/tapes/empty.tape');
      return { format: t.format, records: t.records.length, warnings: t.warnings.map((w) => `${w.code} ${w.message.replaceAll(t.name, '<tape>')}`).join('\n') };
    });
    expect(loaded).toEqual({ format: 'binary', records: 0, warnings: emptyNode });
    const got = await pageAnswers('/tapes/empty.tape', ['Hello']);
    expect(got.out).toEqual({ Hello: '400 E_MISS' });
    expect(got.warnings.filter((w) => w.includes('is empty (0 bytes'))).toHaveLength(1);
  });
});
