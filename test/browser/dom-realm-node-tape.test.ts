// A tape recorded in Node, replayed in a component test under vitest's jsdom environment (see
// dom-realm-bytes.test.ts for the environment: the DOM window's typed arrays on the global
// object). Here tapedeck's modules are loaded again once the environment is in place while the
// tape encoder's msgpackr stays the one loaded in Node: its bytes are Node's, the global
// Uint8Array is the window's. The tape's bodies decode as Node Buffers; a new recording made
// there holds the window's bytes.
import { createServer, type Server } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import vm from 'node:vm';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

const SWAPPED = ['Uint8Array', 'Uint16Array', 'Uint32Array', 'Uint8ClampedArray', 'Int8Array', 'Int16Array', 'Int32Array', 'Float32Array', 'Float64Array', 'ArrayBuffer'] as const;
const window = vm.runInNewContext('this') as Record<string, unknown>;
const g = globalThis as unknown as Record<string, unknown>;
const originals = new Map(SWAPPED.map((k) => [k, g[k]]));

type Browser = typeof import('../../src/browser/index.ts');
type Fetch = typeof import('../../src/proxy/fetch.ts');
let browser: Browser;
let createFetch: Fetch['createFetch'];
let tapeFile: typeof import('../../src/store/tape-file.ts');
let upstream: Server;
let base: string;
let dir: string;
let nodeTape: string;

async function chat(client: OpenAI, content: string, stream = false): Promise<string> {
  if (!stream) return (await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] })).choices[0]!.message.content!;
  let text = '';
  for await (const c of await client.chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content }] })) text += c.choices[0]?.delta?.content ?? '';
  return text;
}

beforeAll(async () => {
  // A faithful enough OpenAI: chat completions echo the last user message, as JSON or as SSE.
  upstream = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(parts).toString()) as { model: string; stream?: boolean; messages: { content: string }[] };
      const text = `echo: ${body.messages.at(-1)!.content}`;
      if (body.stream) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        for (const piece of text.split(' ')) res.write(`data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: body.model, choices: [{ index: 0, delta: { content: `${piece} ` }, finish_reason: null }] })}\n\n`);
        res.end(`data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: body.model, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\ndata: [DONE]\n\n`);
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'c1', object: 'chat.completion', created: 1, model: body.model, choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } }));
    });
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', () => r()));
  base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
  dir = mkdtempSync(join(tmpdir(), 'tapedeck-dom-node-tape-'));
  // Recorded in Node, as a tape committed with the project is.
  nodeTape = join(dir, 'node.tape');
  const inNode = (await import('../../src/proxy/fetch.ts')).createFetch({ tape: nodeTape, mode: 'record', summary: false });
  const live = new OpenAI({ apiKey: 'sk-test', baseURL: base, fetch: inNode, maxRetries: 0 });
  expect(await chat(live, 'Hi')).toBe('echo: Hi');
  expect(await chat(live, 'stream me', true)).toBe('echo: stream me ');
  await inNode.close();
  // Then the DOM environment, and tapedeck loaded in it.
  vi.resetModules();
  for (const k of SWAPPED) g[k] = window[k];
  browser = await import('../../src/browser/index.ts');
  ({ createFetch } = await import('../../src/proxy/fetch.ts'));
  tapeFile = await import('../../src/store/tape-file.ts');
});

afterAll(() => {
  for (const [k, v] of originals) g[k] = v;
  upstream?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('a tape recorded in Node, in a component test under jsdom', () => {
  it('llm-tapedeck/browser loads it and replays it', async () => {
    const file = readFileSync(nodeTape);
    for (const source of [file, new Uint8Array(file), await new Response(file).arrayBuffer()]) {
      const tape = await browser.loadTape(source);
      expect(tape.warnings).toEqual([]);
      const play = browser.createReplayFetch({ tape });
      const client = new OpenAI({ apiKey: 'replay-only', baseURL: base, dangerouslyAllowBrowser: true, fetch: play, maxRetries: 0 });
      try {
        expect(await chat(client, 'Hi')).toBe('echo: Hi');
        expect(await chat(client, 'stream me', true)).toBe('echo: stream me ');
      } finally {
        await play.close();
      }
    }
  });

  it('createFetch replays it, and records and replays a new tape there', async () => {
    const warnings: string[] = [];
    const play = createFetch({ tape: nodeTape, mode: 'replay', summary: false, onWarning: (m) => warnings.push(m) });
    try {
      const client = new OpenAI({ apiKey: 'sk-test', baseURL: base, fetch: play, maxRetries: 0 });
      expect(await chat(client, 'Hi')).toBe('echo: Hi');
      expect(await chat(client, 'stream me', true)).toBe('echo: stream me ');
    } finally {
      await play.close();
    }
    const tape = join(dir, 'dom.tape');
    const rec = createFetch({ tape, mode: 'record', summary: false, onWarning: (m) => warnings.push(m) });
    const live = new OpenAI({ apiKey: 'sk-test', baseURL: base, fetch: rec, maxRetries: 0 });
    expect(await chat(live, 'Hello jsdom')).toBe('echo: Hello jsdom');
    expect(await chat(live, 'stream jsdom', true)).toBe('echo: stream jsdom ');
    await rec.close();
    const again = createFetch({ tape, mode: 'replay', summary: false, onWarning: (m) => warnings.push(m) });
    try {
      const client = new OpenAI({ apiKey: 'sk-test', baseURL: base, fetch: again, maxRetries: 0 });
      expect(await chat(client, 'Hello jsdom')).toBe('echo: Hello jsdom');
      expect(await chat(client, 'stream jsdom', true)).toBe('echo: stream jsdom ');
    } finally {
      await again.close();
    }
    expect(warnings).toEqual([]);
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
