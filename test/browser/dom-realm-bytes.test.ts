// Component tests under vitest's jsdom environment run with the DOM window's typed arrays on the
// global object: vitest copies the window's Uint8Array, ArrayBuffer and the other typed-array
// constructors over Node's, while Node's own bytes (Buffers, TextEncoder output, the tape
// decoder's bodies, a fetch Response's arrayBuffer()) keep Node's. Bytes are bytes in either
// realm: the core takes them, a tape loads and replays, createFetch records and replays.
//
// jsdom is not a dependency of this package; its window is a second realm made with node:vm,
// which is what this file sets up the same way (the same constructors swapped on globalThis
// before tapedeck is imported, restored after).
import { createServer, type Server } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import vm from 'node:vm';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The constructors vitest's jsdom environment takes from the window (its list of keys).
const SWAPPED = ['Uint8Array', 'Uint16Array', 'Uint32Array', 'Uint8ClampedArray', 'Int8Array', 'Int16Array', 'Int32Array', 'Float32Array', 'Float64Array', 'ArrayBuffer'] as const;
const window = vm.runInNewContext('this') as Record<string, unknown>;
const g = globalThis as unknown as Record<string, unknown>;
const originals = new Map(SWAPPED.map((k) => [k, g[k]]));

type Core = typeof import('../../src/core/index.ts');
type Browser = typeof import('../../src/browser/index.ts');
type Fetch = typeof import('../../src/proxy/fetch.ts');
let core: Core;
let browser: Browser;
let createFetch: Fetch['createFetch'];
let tapeFile: typeof import('../../src/store/tape-file.ts');

// A faithful enough OpenAI: chat completions echo the last user message, as JSON or as SSE.
let upstream: Server;
let base: string;
let dir: string;

beforeAll(async () => {
  for (const k of SWAPPED) g[k] = window[k];
  // The environment is in place before tapedeck loads, as under jsdom.
  core = await import('../../src/core/index.ts');
  browser = await import('../../src/browser/index.ts');
  ({ createFetch } = await import('../../src/proxy/fetch.ts'));
  tapeFile = await import('../../src/store/tape-file.ts');
  upstream = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(parts).toString()) as { model: string; stream?: boolean; messages: { content: string }[] };
      const text = `echo: ${body.messages.at(-1)!.content}`;
      if (body.stream) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        for (const piece of text.split(' ')) {
          res.write(`data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: body.model, choices: [{ index: 0, delta: { content: `${piece} ` }, finish_reason: null }] })}\n\n`);
        }
        res.end(`data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: body.model, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\ndata: [DONE]\n\n`);
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'c1', object: 'chat.completion', created: 1, model: body.model, choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } }));
    });
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', () => r()));
  base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
  dir = mkdtempSync(join(tmpdir(), 'tapedeck-dom-realm-'));
});

afterAll(() => {
  for (const [k, v] of originals) g[k] = v;
  upstream?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function chat(client: OpenAI, content: string, stream = false): Promise<string> {
  if (!stream) return (await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] })).choices[0]!.message.content!;
  let text = '';
  for await (const c of await client.chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content }] })) text += c.choices[0]?.delta?.content ?? '';
  return text;
}

describe('bytes of another realm (a component test under jsdom)', () => {
  it('is the realm the DOM environment makes: Node bytes are not instances of the global Uint8Array', () => {
    expect(new TextEncoder().encode('a') instanceof Uint8Array).toBe(false);
    expect(Buffer.from('a') instanceof Uint8Array).toBe(false);
  });

  it('the core hashes and canonicalizes TextEncoder bytes, Buffers and the page realm\'s own Uint8Array', () => {
    const want = core.hashJSON('{"a":2,"b":1}');
    const text = '{"b":1,"a":2}';
    const node = new TextEncoder().encode(text);
    const page = new Uint8Array(node.length);
    page.set(node);
    for (const bytes of [node, Buffer.from(text), page]) {
      expect(core.hashJSON(bytes)).toBe(want);
      expect(new TextDecoder().decode(core.canonicalizeJSON(bytes))).toBe('{"a":2,"b":1}');
    }
    // An ArrayBuffer is still refused (with the hint to wrap it), whichever realm made it.
    for (const buf of [node.buffer, page.buffer]) expect(() => core.hashJSON(buf as unknown as Uint8Array)).toThrow(expect.objectContaining({ code: 'E_ARG' }));
  });

  it('createFetch records a tape and replays it through the OpenAI SDK', async () => {
    const tape = join(dir, 'chat.tape');
    const rec = createFetch({ tape, mode: 'record', summary: false });
    const live = new OpenAI({ apiKey: 'sk-test', baseURL: base, fetch: rec, maxRetries: 0 });
    expect(await chat(live, 'Hi')).toBe('echo: Hi');
    expect(await chat(live, 'stream me', true)).toBe('echo: stream me ');
    await rec.close();
    const play = createFetch({ tape, mode: 'replay', summary: false });
    const client = new OpenAI({ apiKey: 'sk-test', baseURL: base, fetch: play, maxRetries: 0 });
    try {
      expect(await chat(client, 'Hi')).toBe('echo: Hi');
      expect(await chat(client, 'stream me', true)).toBe('echo: stream me ');
    } finally {
      await play.close();
    }
  });

  it("llm-tapedeck/browser loads the recorded tape from any realm's bytes and replays it", async () => {
    const file = readFileSync(join(dir, 'chat.tape'));
    const sources = {
      buffer: file,
      'page Uint8Array': new Uint8Array(file),
      'Response.arrayBuffer()': await new Response(file).arrayBuffer(),
      'page ArrayBuffer': new Uint8Array(file).buffer,
    };
    for (const [what, source] of Object.entries(sources)) {
      const tape = await browser.loadTape(source);
      expect(tape.records.length, what).toBeGreaterThan(0);
      expect(tape.warnings, what).toEqual([]);
      const play = browser.createReplayFetch({ tape });
      const client = new OpenAI({ apiKey: 'replay-only', baseURL: base, dangerouslyAllowBrowser: true, fetch: play, maxRetries: 0 });
      try {
        expect(await chat(client, 'Hi'), what).toBe('echo: Hi');
        expect(await chat(client, 'stream me', true), what).toBe('echo: stream me ');
      } finally {
        await play.close();
      }
    }
  });
  it('stores bytes of either realm as bytes on a tape', async () => {
    const tape = join(dir, 'values.tape');
    await tapeFile.createTape(tape);
    const window8 = new Uint8Array([1, 2, 3]);
    expect(Object.getPrototypeOf(window8) === Object.getPrototypeOf(new TextEncoder().encode('a'))).toBe(false);
    await tapeFile.appendRecords(tape, [{ buffer: Buffer.from([1, 2, 3]), encoded: new TextEncoder().encode('abc'), window: window8 }]);
    const [value] = (await tapeFile.readTape(tape)).records.map((r) => r.value as Record<string, Uint8Array>);
    for (const [name, want] of [['buffer', [1, 2, 3]], ['encoded', [97, 98, 99]], ['window', [1, 2, 3]]] as const) {
      expect(ArrayBuffer.isView(value![name]), name).toBe(true);
      expect([...value![name]!], name).toEqual(want);
    }
  });
});
