// llm-tapedeck/browser without a browser: what a bundler makes of it (no Node built-in reached,
// the browser stand-ins swapped in), and the entry's own checks, run in Node.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { createReplayFetch, loadTape, replayInServiceWorker } from '../../src/browser/index.ts';
import { TapedeckError } from '../../src/errors.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { canonicalizeJSON } from '../../src/core/index.ts';
import { POW5_QMAX, POW5_QMIN, writePow5Table } from '../../src/core/pow5.ts';

const root = join(import.meta.dirname, '../..');

describe('llm-tapedeck/browser as bundled', () => {
  it('is a package export with types', async () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exports: Record<string, { types: string; default: string }> };
    expect(pkg.exports['./browser']).toEqual({ types: './dist/browser/index.d.ts', default: './dist/browser/index.js' });
    const mod = (await import(join(root, pkg.exports['./browser']!.default))) as Record<string, unknown>;
    for (const name of ['loadTape', 'createReplayFetch', 'replayInServiceWorker', 'loadWasmBuild', 'requestKeys', 'setBackend']) expect(typeof mod[name]).toBe('function');
  });

  it('bundles for browsers with no Node built-in, the SIMD build only and no tape-file or Redis code', async () => {
    const out = await build({ entryPoints: [join(root, 'dist/browser/index.js')], bundle: true, write: false, format: 'esm', platform: 'browser', metafile: true, logLevel: 'silent' });
    const inputs = Object.keys(out.metafile.inputs);
    expect(inputs).toContain('dist/core/wasm-scalar.browser.js');
    expect(inputs).toContain('dist/store/backends/open.browser.js');
    expect(inputs).toContain('dist/store/collection.js'); // the one recording engine
    expect(inputs).toContain('dist/proxy/fetch.js'); // createFetch itself, not a copy
    expect(inputs.filter((f) => /wasm-scalar\.generated|store\/tape-file\.js|backends\/(tape|open)\.js|backends\/redis|node:/.test(f))).toEqual([]);
    expect(Object.values(out.metafile.outputs).flatMap((o) => o.imports.map((i) => i.path))).toEqual([]);
  });

  it("leaves out Node's upstream link and the shared store's fleet: a page passes through with its own fetch, and its tape is never shared", async () => {
    const out = await build({ entryPoints: [join(root, 'dist/browser/index.js')], bundle: true, write: false, format: 'esm', platform: 'browser', metafile: true, logLevel: 'silent' });
    const inputs = Object.keys(out.metafile.inputs);
    expect(inputs).toContain('dist/proxy/upstream.browser.js');
    expect(inputs).toContain('dist/proxy/fleet.browser.js');
    expect(inputs.filter((f) => /proxy\/(upstream|fleet)\.js$/.test(f))).toEqual([]);
    // The stand-in's link: the request as Node forwards it (no hop-by-hop headers), the page's
    // fetch answering, and a failure as E_UPSTREAM naming only the origin.
    const { UpstreamLink } = (await import(join(root, 'dist/proxy/upstream.browser.js'))) as { UpstreamLink: new (f: typeof fetch, o: object) => { start(u: string, r: object, s?: AbortSignal): { response: Promise<Response> } } };
    const sent: [string, RequestInit][] = [];
    const ok = new UpstreamLink(async (u, init) => (sent.push([String(u), init!]), new Response('live')), {});
    const body = new TextEncoder().encode('{"a":1}');
    const r = await ok.start('https://api.example/v1/x', { method: 'post', url: '/v1/x', headers: { connection: 'keep-alive', 'x-api-key': 'k', 'accept-encoding': 'gzip' }, body }).response;
    expect(await r.text()).toBe('live');
    expect(sent[0]![1].method).toBe('POST');
    expect(sent[0]![1].headers).toEqual([['x-api-key', 'k']]);
    expect(sent[0]![1].body).toBe(body);
    const down = new UpstreamLink(async () => Promise.reject(new TypeError('Failed to fetch')), {});
    // Closing the replay fetch ends a call still waiting for its answer, as in Node.
    const hung = new UpstreamLink((_u, init) => new Promise((_r, reject) => init!.signal!.addEventListener('abort', () => reject(init!.signal!.reason))), {}) as unknown as { start(u: string, r: object): { response: Promise<Response> }; shutdown(m: string): void };
    const waiting = hung.start('https://api.example/v1/x', { method: 'GET', url: '/v1/x', headers: {}, body: new Uint8Array(0) }).response;
    hung.shutdown('closed before the upstream answered');
    await expect(waiting).rejects.toMatchObject({ code: 'E_PROXY_CLOSED', message: expect.stringContaining('closed before the upstream answered') });
    await expect(down.start('https://api.example/v1/x?key=secret', { method: 'GET', url: '/v1/x', headers: {}, body: new Uint8Array(0) }).response).rejects.toMatchObject({ code: 'E_UPSTREAM', details: { upstream: 'https://api.example' } });
  });

  it('leaves out the hooks and custom matchers: the stand-in refuses them when createReplayFetch is made', async () => {
    const out = await build({ entryPoints: [join(root, 'dist/browser/index.js')], bundle: true, write: false, format: 'esm', platform: 'browser', metafile: true, logLevel: 'silent' });
    const inputs = Object.keys(out.metafile.inputs);
    // The budget of bench/size.mjs (100 KB gzipped) holds only while these stay out.
    expect(inputs).toContain('dist/proxy/deck-hooks.browser.js');
    expect(inputs.filter((f) => /proxy\/deck-hooks\.js$|store\/hooks\.js$/.test(f))).toEqual([]);
    // The bundled entry itself, as a page gets it.
    const text = out.outputFiles[0]!.text;
    const page = (await import(`data:text/javascript;base64,${Buffer.from(text).toString('base64')}`)) as { createReplayFetch: (o: object) => { close(): Promise<void> }; loadTape: (s: Uint8Array) => Promise<unknown> };
    const dir = mkdtempSync(join(tmpdir(), 'tapedeck-page-hooks-'));
    const file = join(dir, 'chat.tape');
    const rec = createFetch({ tape: file, mode: 'record', summary: false, fetch: (async () => Response.json({ id: 'c1', choices: [] })) as typeof fetch });
    await rec('https://api.openai.com/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"model":"m","messages":[{"role":"user","content":"Hi"}]}' });
    await rec.close();
    const tape = await page.loadTape(new Uint8Array(readFileSync(file)));
    rmSync(dir, { recursive: true, force: true });
    for (const [name, o] of [['beforeReplay', { beforeReplay: (r: unknown) => r }], ['beforeRecord', { beforeRecord: (r: unknown) => r }], ['a match function', { match: () => true }]] as const) {
      let thrown: unknown;
      try {
        page.createReplayFetch({ tape, ...o });
      } catch (e) {
        thrown = e;
      }
      expect(thrown, name).toMatchObject({ code: 'E_ARG', message: expect.stringContaining(`createReplayFetch does not take ${name}: hooks and custom matchers run in Node`) });
    }
    await page.createReplayFetch({ tape, match: 'signature' }).close();
    // A misspelt option is refused too (it used to be dropped: no pacing, no strict order); the
    // keying options a tape may have been recorded with are taken, volatileText among them.
    let misspelt: unknown;
    try {
      page.createReplayFetch({ tape, timming: 5 });
    } catch (e) {
      misspelt = e;
    }
    expect(misspelt).toMatchObject({ code: 'E_ARG', message: expect.stringContaining('Unknown createReplayFetch option "timming"') });
    await page.createReplayFetch({ tape, timing: 5, strictOrder: true, volatileText: ['\\d{4}-\\d{2}-\\d{2}'], volatileKeys: ['user'], ignoreArgs: ['seed'] }).close();
  });

  it('refuses hooks, a match function and an unknown matching mode in Node as in a page, with the same words', async () => {
    // Component tests under jsdom or happy-dom import llm-tapedeck/browser in Node, where the
    // package's browser map does not apply: the entry must refuse what a page refuses itself.
    const out = await build({ entryPoints: [join(root, 'dist/browser/index.js')], bundle: true, write: false, format: 'esm', platform: 'browser', logLevel: 'silent' });
    type Entry = { createReplayFetch: (o: object) => { close(): Promise<void> } };
    const page = (await import(`data:text/javascript;base64,${Buffer.from(out.outputFiles[0]!.text).toString('base64')}`)) as Entry;
    const node = (await import(join(root, 'dist/browser/index.js'))) as Entry;
    const tape = { name: 'mem', format: 'json' as const, header: { formatVersion: 1, created: 'x', tapedeckVersion: 'y' }, records: [], warnings: [] };
    const refusal = (entry: Entry, o: object) => {
      try {
        void entry.createReplayFetch({ tape, ...o }).close();
      } catch (e) {
        const err = e as TapedeckError;
        return { name: err.name, code: err.code, message: err.message };
      }
      return 'accepted';
    };
    const cases: [string, object, string][] = [
      ['a match function', { match: () => true }, 'createReplayFetch does not take a match function: hooks and custom matchers run in Node'],
      ['beforeReplay', { beforeReplay: (r: unknown) => r }, 'createReplayFetch does not take beforeReplay: hooks and custom matchers run in Node'],
      ['beforeRecord', { beforeRecord: (r: unknown) => r }, 'createReplayFetch does not take beforeRecord: hooks and custom matchers run in Node'],
      ['an unknown mode', { match: 'fuzzy' }, 'Unknown matching mode "fuzzy". Use match \'exact\', \'signature\', \'sequential\' or \'hybrid\' (docs/matching.md).'],
    ];
    for (const [name, o, says] of cases) {
      const inNode = refusal(node, o);
      expect(inNode, name).toMatchObject({ name: 'TapedeckError', code: 'E_ARG', message: expect.stringContaining(says) });
      expect(refusal(page, o), name).toEqual(inNode);
    }
    // A page takes no match function: the unknown mode's hint does not offer one.
    expect(JSON.stringify(refusal(node, { match: 'fuzzy' }))).not.toContain('function');
    // The hooks' names with nothing in them are taken (options spread from Node's).
    expect(refusal(node, { match: 'signature', beforeReplay: undefined })).toBe('accepted');
  });

  it('leaves out the explanation of a miss on a non-JSON or plain JSON body (a page keeps the general sentence)', async () => {
    const out = await build({ entryPoints: [join(root, 'dist/browser/index.js')], bundle: true, write: false, format: 'esm', platform: 'browser', metafile: true, logLevel: 'silent' });
    const inputs = Object.keys(out.metafile.inputs);
    expect(inputs).toContain('dist/proxy/http-difference.browser.js');
    expect(inputs).toContain('dist/proxy/json-body-difference.browser.js');
    expect(inputs.filter((f) => /proxy\/(?:http|upload|json-body)-difference\.js$/.test(f))).toEqual([]);
  });

  it("leaves out the deck's record side and the miss fixes of Node's entry points: a page never records, and its misses are fixed as before", async () => {
    const out = await build({ entryPoints: [join(root, 'dist/browser/index.js')], bundle: true, write: false, format: 'esm', platform: 'browser', metafile: true, logLevel: 'silent' });
    const inputs = Object.keys(out.metafile.inputs);
    expect(inputs).toContain('dist/proxy/deck-record.browser.js');
    expect(inputs).toContain('dist/match/miss-fixes.browser.js');
    expect(inputs.filter((f) => /proxy\/deck-record\.js$|match\/miss-fixes\.js$/.test(f))).toEqual([]);
    // A page's only entry point is createReplayFetch: its fixes are worded as in Node.
    type Fixes = { recordHow(e: object): string; ignoreOption(e: object, v: object): string | undefined; repeatOption(e: object): string | undefined };
    const page = (await import(join(root, 'dist/match/miss-fixes.browser.js'))) as Fixes;
    const node = (await import(join(root, 'dist/match/miss-fixes.js'))) as Fixes;
    for (const entry of [{ kind: 'browser' }, { kind: 'browser', modeFromOption: true }]) {
      expect(page.recordHow(entry)).toBe(node.recordHow(entry));
      expect(page.repeatOption(entry)).toBe(node.repeatOption(entry));
      for (const v of [{ option: 'volatileKeys', names: ['id'] }, { option: 'ignoreArgs', names: ['seed', 'user'] }]) expect(page.ignoreOption(entry, v)).toBe(node.ignoreOption(entry, v));
    }
    // The record side refuses, as the modes that would reach it are refused.
    const { openRecorder } = (await import(join(root, 'dist/proxy/deck-record.browser.js'))) as { openRecorder(side: object): { prepare(): unknown } };
    expect(() => openRecorder({}).prepare()).toThrow(expect.objectContaining({ code: 'E_MODE' }));
  });

  // The answer readers (stats, drift, tree) rode along on the provider modules: 2.8 KB of a
  // page's bundle (gzipped) that replay never ran. Kept apart, the bundle leaves them out.
  it('leaves out the providers\' answer readers: replay never reads an answer', async () => {
    const out = await build({ entryPoints: [join(root, 'dist/browser/index.js')], bundle: true, write: false, format: 'esm', platform: 'browser', metafile: true, logLevel: 'silent' });
    // What the bundle holds of each file (a file imported but shaken out to nothing is listed too).
    const held = Object.entries(Object.values(out.metafile.outputs)[0]!.inputs).filter(([, v]) => v.bytesInOutput > 0).map(([f]) => f);
    expect(held.filter((f) => /providers\/(answer-readers|answer-read)\.js$/.test(f))).toEqual([]);
    const text = out.outputFiles[0]!.text;
    for (const reader of ['readGeminiAnswer', 'readBedrockAnswer', 'readAnthropicAnswer', 'readOllamaAnswer', 'readOpenAIAnswer']) expect(text, reader).not.toContain(reader);
  });

  it('leaves out the prune guard for faults and the record run\'s close-failure wording: a page injects no faults and never removes recordings at close', async () => {
    const out = await build({ entryPoints: [join(root, 'dist/browser/index.js')], bundle: true, write: false, format: 'esm', platform: 'browser', metafile: true, logLevel: 'silent' });
    const inputs = Object.keys(out.metafile.inputs);
    expect(inputs).toContain('dist/proxy/prune-guard.browser.js');
    expect(inputs).toContain('dist/store/close-failure.browser.js');
    expect(inputs.filter((f) => /proxy\/prune-guard\.js$|store\/close-failure\.js$|chaos\/answer-faults\.js$/.test(f))).toEqual([]);
    // Each stand-in does what its Node counterpart does when no fault fired and no close failed.
    const guard = (await import(join(root, 'dist/proxy/prune-guard.browser.js'))) as { pruneMayRemove(f: unknown, t: unknown, w: unknown): boolean };
    const node = (await import(join(root, 'dist/proxy/prune-guard.js'))) as typeof guard;
    const warned: string[] = [];
    expect(guard.pruneMayRemove({}, 'a.tape', (m: string) => warned.push(m))).toBe(node.pruneMayRemove({}, 'a.tape', (m: string) => warned.push(m)));
    expect(node.pruneMayRemove({ 429: 2 }, 'a.tape', (m: string) => warned.push(m))).toBe(false);
    expect(warned).toEqual([expect.stringContaining('2 calls were answered by injected faults (429 2)')]);
    const e = new Error('gone');
    const close = (await import(join(root, 'dist/store/close-failure.browser.js'))) as { closeRemovalFailure(e: unknown, c: unknown): unknown };
    expect(close.closeRemovalFailure(e, { replaced: 1, pruned: 0 })).toBe(e);
  });

  it('leaves out faults on demand (chaos): its stand-in refuses them, and every provider\'s fault shapes stay out', async () => {
    const out = await build({ entryPoints: [join(root, 'dist/browser/index.js')], bundle: true, write: false, format: 'esm', platform: 'browser', metafile: true, logLevel: 'silent' });
    const inputs = Object.keys(out.metafile.inputs);
    // The budget of bench/size.mjs (100 KB gzipped) holds only while these stay out.
    expect(inputs).toContain('dist/proxy/chaos.browser.js');
    expect(inputs).toContain('dist/chaos/options.browser.js');
    expect(inputs.filter((f) => /proxy\/chaos\.js$|providers\/faults\.js$|chaos\/(options|decide)\.js$/.test(f))).toEqual([]);
    const stand = (await import(join(root, 'dist/proxy/chaos.browser.js'))) as { openChaos: (o: unknown, m: string, w: unknown) => unknown; withoutChaosHeader: (r: unknown) => { value: unknown; req: { headers: object } } };
    expect(stand.openChaos(undefined, 'replay', () => {})).toBeUndefined();
    expect(() => stand.openChaos({ faults: { 429: 1 } }, 'replay', () => {})).toThrow(/not part of browser playback/);
    const { value, req } = stand.withoutChaosHeader({ method: 'POST', url: '/v1/x', headers: { 'x-tapedeck-chaos': '429', a: 'b' }, body: new Uint8Array() });
    expect([value, req.headers]).toEqual(['429', { a: 'b' }]);
    // A page's createFetch({ chaos }) is refused at once, before any check of the fault names.
    const options = (await import(join(root, 'dist/chaos/options.browser.js'))) as { checkChaos: (o: unknown, f: string) => unknown };
    expect(() => options.checkChaos({ faults: { 429: 1 } }, 'http')).toThrow(/not part of browser playback/);
  });

  it('searches whole texts for credentials (its stand-in): the same answers as the Node search', async () => {
    const out = await build({ entryPoints: [join(root, 'dist/browser/index.js')], bundle: true, write: false, format: 'esm', platform: 'browser', metafile: true, logLevel: 'silent' });
    const inputs = Object.keys(out.metafile.inputs);
    expect(inputs).toContain('dist/store/credential.browser.js');
    expect(inputs).not.toContain('dist/store/credential.js');
    type Search = { credentialFrom: (s: string) => number; mayHoldCredential: (s: string) => boolean; CREDENTIAL: RegExp };
    const page = (await import(join(root, 'dist/store/credential.browser.js'))) as Search;
    const node = (await import(join(root, 'dist/store/credential.js'))) as Search;
    for (const s of ['plain prose, short words', 'key: sk-proj-abcdefghijklmnopqrstuvwx', 'Bearer\u00a0 abcdefghijklmnop0123', '{"model":"gpt-4o-2024-08-06"}']) {
      expect(page.mayHoldCredential(s), s).toBe(node.mayHoldCredential(s));
      const from = (x: Search) => {
        const at = x.credentialFrom(s);
        if (at < 0) return null;
        x.CREDENTIAL.lastIndex = at;
        const m = x.CREDENTIAL.exec(s);
        x.CREDENTIAL.lastIndex = 0;
        return m?.[0] ?? null;
      };
      expect(from(page), s).toBe(from(node));
    }
  });

  it("leaves out the walk that writes values into wasm memory with Node's Buffer: a page's engine takes JSON.stringify's text", async () => {
    const out = await build({ entryPoints: [join(root, 'dist/browser/index.js')], bundle: true, write: false, format: 'esm', platform: 'browser', metafile: true, logLevel: 'silent' });
    const inputs = Object.keys(out.metafile.inputs);
    // The budget of bench/size.mjs (100 KB gzipped) holds only while these stay out.
    expect(inputs).toContain('dist/core/walk.browser.js');
    expect(inputs).not.toContain('dist/core/walk.js');
    const stand = (await import(join(root, 'dist/core/walk.browser.js'))) as { DECLINED: symbol; ValueText: new (v: unknown) => { text(): string }; writeValueText: (v: unknown, r: unknown, at: number) => number };
    let thrown: unknown;
    try {
      stand.writeValueText({ a: 1 }, undefined, 0);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBe(stand.DECLINED);
    expect(new stand.ValueText({ b: 1, a: ['é', 2.5e-7] }).text()).toBe(JSON.stringify({ b: 1, a: ['é', 2.5e-7] }));
  });

  it('keys long strings without the UTF-16 transcoder the browser build leaves out, where a page has Buffer (a polyfill)', async () => {
    const out = await build({ entryPoints: [join(root, 'dist/browser/index.js')], bundle: true, write: false, format: 'esm', platform: 'browser', logLevel: 'silent' });
    const { SIMD_HEX } = await import(join(root, 'dist/core/wasm-browser.generated.js'));
    const exported = WebAssembly.Module.exports(new WebAssembly.Module(Buffer.from(SIMD_HEX as string, 'hex'))).map((e) => e.name);
    expect(exported).not.toContain('utf16ToUtf8');
    // Run in Node, the bundle finds a global Buffer, as a page with a Buffer polyfill does.
    const dir = mkdtempSync(join(tmpdir(), 'tapedeck-browser-bundle-'));
    try {
      const file = join(dir, 'bundle.mjs');
      writeFileSync(file, out.outputFiles[0]!.contents);
      type Page = { backend(): string; hashJSON(t: string): string; hashValue(v: unknown): string; pathHashes(v: unknown[]): unknown };
      const page = (await import(file)) as Page;
      const node = (await import(join(root, 'dist/index.js'))) as Page;
      expect(page.backend()).toBe('wasm-simd');
      // Past the length from which the builds for Node transcode in wasm (UTF16_MIN), non-ASCII.
      const messages = [{ role: 'user', content: 'Zürich 東京 😀 \n"quoted" '.repeat(300) }, { role: 'assistant', content: 'ok' }];
      expect(messages[0]!.content.length).toBeGreaterThan(4096);
      expect(page.hashJSON(JSON.stringify(messages))).toBe(node.hashJSON(JSON.stringify(messages)));
      expect(page.hashValue(messages)).toBe(node.hashValue(messages));
      expect(page.pathHashes(messages)).toEqual(node.pathHashes(messages));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('leaves out what only speeds up keying many requests: the raw-bytes walk and its wasm index', async () => {
    const out = await build({ entryPoints: [join(root, 'dist/browser/index.js')], bundle: true, write: false, format: 'esm', platform: 'browser', metafile: true, logLevel: 'silent' });
    const inputs = Object.keys(out.metafile.inputs);
    // The budget of bench/size.mjs (100 KB gzipped) holds only while these stay out.
    expect(inputs).toContain('dist/match/raw-keys.browser.js');
    expect(inputs).toContain('dist/match/view-digests.js');
    // raw-keys.js and every provider's walk behind it (match/raw-keys/*.js), which only it imports.
    expect(inputs.filter((f) => /match\/raw-keys(\.js$|\/)|core\/wasm\.generated\.js$/.test(f))).toEqual([]);
    const { SIMD_HEX } = await import(join(root, 'dist/core/wasm-browser.generated.js'));
    const exported = WebAssembly.Module.exports(new WebAssembly.Module(Buffer.from(SIMD_HEX as string, 'hex'))).map((e) => e.name);
    expect(exported).toContain('canonical');
    expect(exported.filter((n) => n === 'index' || n === 'view')).toEqual([]);
  });

  it("uses Node's globals (Buffer, process, setImmediate) only behind a check that they exist", async () => {
    // Each global bundled as undefined: a guarded use (`typeof Buffer !== 'undefined' ? …`)
    // folds away, an unguarded one is left as a member of undefined, which a page would throw
    // on (a request with a malformed or non-JSON body was a 500 'Buffer is not defined').
    const out = await build({
      entryPoints: [join(root, 'dist/browser/index.js')],
      bundle: true,
      write: false,
      format: 'esm',
      platform: 'browser',
      minifySyntax: true,
      define: { Buffer: 'undefined', process: 'undefined', setImmediate: 'undefined', global: 'undefined' },
      logLevel: 'silent',
    });
    const unguarded = out.outputFiles[0]!.text.split('\n').filter((l) => /\(void 0\)(\.|\[|\()|instanceof void 0/.test(l));
    expect(unguarded.map((l) => l.trim().slice(0, 160))).toEqual([]);
  });

  it("makes the tied recordings' texts on each miss instead of keeping them, the same texts", async () => {
    const out = await build({ entryPoints: [join(root, 'dist/browser/index.js')], bundle: true, write: false, format: 'esm', platform: 'browser', metafile: true, logLevel: 'silent' });
    const inputs = Object.keys(out.metafile.inputs);
    expect(inputs).toContain('dist/match/request-texts.browser.js');
    expect(inputs).not.toContain('dist/match/request-texts.js');
    type Texts = { RequestTexts: new (r: { request: unknown }[]) => { get(i: number): Uint8Array | undefined } };
    const page = (await import(join(root, 'dist/match/request-texts.browser.js'))) as Texts;
    const node = (await import(join(root, 'dist/match/request-texts.js'))) as Texts;
    const recordings = [{ request: { z: 1, a: ['é', 2.5e-7] } }, { request: '{"b":1,"a":2}' }, { request: { n: Number.NaN } }, { request: undefined }];
    const [p, n] = [new page.RequestTexts(recordings), new node.RequestTexts(recordings)];
    for (let i = 0; i <= recordings.length; i++) {
      const [x, y] = [p.get(i), n.get(i)];
      expect(x === undefined ? undefined : Buffer.from(x).toString('hex'), `recording ${i}`).toBe(y === undefined ? undefined : Buffer.from(y).toString('hex'));
    }
    expect(Buffer.from(p.get(1)!).toString()).toBe('{"a":2,"b":1}');
  });
});

describe("the browser's wasm build without its powers-of-five table", () => {
  it('gets from the loader the bytes the builds for Node embed', () => {
    // The embedded table as scripts/gen-tables.mjs wrote it: an independent BigInt computation.
    const tables = readFileSync(join(root, 'assembly/generated/number-tables.ts'), 'utf8');
    expect(tables).toContain(`POW5_QMIN: i32 = ${POW5_QMIN};`);
    expect(tables).toContain(`POW5_QMAX: i32 = ${POW5_QMAX};`);
    const block = tables.slice(tables.indexOf('POW5_128'), tables.indexOf('], 16)', tables.indexOf('POW5_128')));
    const words = [...block.matchAll(/0x([0-9A-F]{16})/g)].map((m) => BigInt(`0x${m[1]}`));
    expect(words.length).toBe((POW5_QMAX - POW5_QMIN + 1) * 2);
    const embedded = new DataView(new ArrayBuffer(words.length * 8));
    words.forEach((w, i) => embedded.setBigUint64(i * 8, w, true));
    const written = new ArrayBuffer(16 + words.length * 8);
    writePow5Table(written, 16);
    expect(Buffer.from(written, 16).equals(Buffer.from(embedded.buffer))).toBe(true);
  });

  it('canonicalizes numbers as Node does, bundled as a page gets it', async () => {
    const out = await build({ entryPoints: [join(root, 'dist/browser/index.js')], bundle: true, write: false, format: 'esm', platform: 'browser', logLevel: 'silent' });
    const page = (await import(`data:text/javascript;base64,${Buffer.from(out.outputFiles[0]!.contents).toString('base64')}`)) as typeof import('../../src/browser/index.ts');
    expect(page.backend()).toBe('wasm-simd');
    // Doubles across the whole exponent range (both conversions read the table: parsing long
    // decimals, and formatting), and decimal texts of more digits than a double holds.
    let seed = 0x9e3779b9;
    const rand = () => ((seed = (Math.imul(seed ^ (seed >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0), seed);
    const bits = new DataView(new ArrayBuffer(8));
    const numbers: string[] = ['5e-324', '1.7976931348623157e308', '0.1', '2.2250738585072014e-308', '123456789012345678901234567890', '1e-342', '9.999999999999999e22'];
    for (let i = 0; i < 3000; i++) {
      bits.setUint32(0, rand());
      bits.setUint32(4, rand());
      const d = bits.getFloat64(0);
      if (Number.isFinite(d)) numbers.push(String(d));
      numbers.push(`${rand() % 10}.${String(rand()).padStart(10, '0')}${String(rand()).padStart(10, '0')}e${(rand() % 600) - 320}`);
    }
    for (let i = 0; i < numbers.length; i += 500) {
      const json = `[${numbers.slice(i, i + 500).join(',')}]`;
      expect(Buffer.from(page.canonicalizeJSON(json)).toString()).toBe(Buffer.from(canonicalizeJSON(json)).toString());
    }
  });
});

describe('loadTape and createReplayFetch checks', () => {
  it('refuses bytes that are neither form, naming the first bytes', async () => {
    const err = await loadTape(new TextEncoder().encode('GIF89a....')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TapedeckError);
    expect((err as TapedeckError).code).toBe('E_TAPE_CORRUPT');
    expect((err as TapedeckError).message).toContain('47 49 46 38');
  });

  it('reports a bad JSON form with its JSON path', async () => {
    const doc = { header: { formatVersion: 1, created: 'x', tapedeckVersion: 'y' }, records: [{ a: { $type: 'bytes', base64: '!!' } }] };
    const err = (await loadTape(new TextEncoder().encode(JSON.stringify(doc)), { name: 'bad.json' }).catch((e: unknown) => e)) as TapedeckError;
    expect(err.code).toBe('E_TAPE_IMPORT');
    expect(err.message).toMatch(/^bad\.json: .*\$\.records\[0\]\.a\.base64/);
  });

  it('says a missing header field is missing, and gives the hint once', async () => {
    const bytes = new TextEncoder().encode('{"header":{},"records":[{"v":1,"kind":"http"}]}');
    const err = (await loadTape(bytes).catch((e: unknown) => e)) as TapedeckError;
    expect(err.code).toBe('E_TAPE_IMPORT');
    expect(err.path).toBe('$.header.formatVersion');
    expect(err.message).not.toContain('undefined');
    expect(err.message).toContain('found nothing (the field is missing) at $.header.formatVersion');
    expect(err.message.split(err.hint!).length - 1).toBe(1);
    expect(err.message.endsWith(` ${err.hint}`)).toBe(true);
    expect(err.message.startsWith('<tape bytes>: ')).toBe(true);
  });

  it('refuses options without a loaded tape with E_ARG, saying to pass await loadTape(url)', () => {
    const errorOf = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return e as TapedeckError;
      }
      throw new Error('accepted');
    };
    const cases: [string, () => unknown, string][] = [
      ['no options', () => (createReplayFetch as (o?: unknown) => unknown)(), 'needs an options object'],
      ['null', () => createReplayFetch(null as never), 'needs an options object'],
      ['a URL string for the options', () => createReplayFetch('/tapes/chat.tape' as never), 'needs an options object'],
      ['no tape', () => createReplayFetch({} as never), 'needs { tape }'],
      ['an empty object', () => createReplayFetch({ tape: {} as never }), 'not a tape loaded by loadTape'],
      ['a URL string', () => createReplayFetch({ tape: '/tapes/chat.tape' as never }), 'a loaded tape, not its URL'],
      ['a URL', () => createReplayFetch({ tape: new URL('http://localhost/tapes/chat.tape') as never }), 'a loaded tape, not its URL'],
      ['bytes', () => createReplayFetch({ tape: new Uint8Array(8) as never }), 'a loaded tape, not its bytes'],
      ['records not an array', () => createReplayFetch({ tape: { name: 'x', format: 'json', header: {}, records: {}, warnings: [] } as never }), 'not a tape loaded by loadTape'],
    ];
    for (const [name, f, says] of cases) {
      const err = errorOf(f);
      expect(err, name).toBeInstanceOf(TapedeckError);
      expect(err.code, name).toBe('E_ARG');
      expect(err.message, name).toContain(says);
      expect(err.hint, name).toMatch(/createReplayFetch\(\{ tape: await loadTape\(/);
    }
    expect(errorOf(() => createReplayFetch({ tape: '/tapes/chat.tape' as never })).hint).toBe("Load it first: createReplayFetch({ tape: await loadTape('/tapes/chat.tape') }).");
  });

  it('replayInServiceWorker refuses options without a tape (E_ARG) when it is called, not when the worker installs', () => {
    // A stand-in for a service worker's global scope, for the length of the calls.
    const scope = globalThis as unknown as Record<string, unknown>;
    const listeners: string[] = [];
    Object.assign(scope, { skipWaiting: async () => {}, clients: { claim: async () => {} } });
    const had = scope.addEventListener;
    scope.addEventListener = (type: string) => listeners.push(type);
    try {
      for (const opts of [undefined, {}, { tape: {} }, { tape: 42 }]) {
        let err: unknown;
        try {
          (replayInServiceWorker as (o?: unknown) => unknown)(opts);
        } catch (e) {
          err = e;
        }
        expect(err, JSON.stringify(opts)).toBeInstanceOf(TapedeckError);
        expect((err as TapedeckError).code).toBe('E_ARG');
        expect((err as TapedeckError).hint).toMatch(/replayInServiceWorker\(\{ tape: '\/tapes\/chat\.tape'/);
      }
      expect(listeners).toEqual([]);
    } finally {
      delete scope.skipWaiting;
      delete scope.clients;
      if (had === undefined) delete scope.addEventListener;
      else scope.addEventListener = had;
    }
  });

  it('only replay and passthrough: a loaded tape cannot record', () => {
    const tape = { name: 'mem', format: 'json' as const, header: { formatVersion: 1, created: 'x', tapedeckVersion: 'y' }, records: [], warnings: [] };
    for (const mode of ['record', 'update'] as const) {
      let err: unknown;
      try {
        createReplayFetch({ tape, mode: mode as 'replay' });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(TapedeckError);
      expect((err as TapedeckError).code).toBe('E_MODE');
      expect((err as TapedeckError).message).toContain('only replay and passthrough');
    }
  });
});
