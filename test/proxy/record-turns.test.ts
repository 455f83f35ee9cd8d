// Identical requests recorded at the same time (an answer sampled several times at once) are
// stored in the order they were sent, so replay gives each call the answer it got when recorded,
// whatever order the answers came back in. Through createFetch and the proxy, plain and streamed,
// in record and update mode, with the real OpenAI SDK against a local server whose first answer
// comes back last; a request that ends without a record does not hold the others up, and a
// caller that reads the later stream first does not wait on itself.
import OpenAI from 'openai';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startProxy } from '../../src/proxy/server.ts';
import type { TapeMode } from '../../src/store/mode.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-record-turns-'));
let server: Server;
let base = '';
let n = 0;
/** Per arrival number: how long its answer takes, and a status other than 200. */
let plan: Record<number, { ms?: number; status?: number }> = {};

beforeAll(async () => {
  server = createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString()));
    req.on('end', () => {
      const k = ++n;
      const body = JSON.parse(text) as { stream?: boolean };
      const { ms = 10, status = 200 } = plan[k] ?? {};
      setTimeout(() => {
        if (status !== 200) {
          res.writeHead(status, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: { message: `failure ${k}`, type: 'server_error' } }));
          return;
        }
        const content = `answer ${k}`;
        if (!body.stream) {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ id: `c${k}`, object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }] }));
          return;
        }
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const chunk = (delta: object, finish: string | null) => `data: ${JSON.stringify({ id: `c${k}`, object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
        res.write(chunk({ role: 'assistant', content: 'answer ' }, null));
        setTimeout(() => res.end(chunk({ content: String(k) }, 'stop') + 'data: [DONE]\n\n'), 5);
      }, ms);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => {
  server.close();
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => {
  n = 0;
  plan = {};
});

const client = (baseURL: string, fetch?: typeof globalThis.fetch) => new OpenAI({ baseURL: `${baseURL}/v1`, apiKey: 'sk-test', maxRetries: 0, ...(fetch ? { fetch } : {}) });
const ask = async (c: OpenAI) => (await c.chat.completions.create({ model: 'gpt-4o-mini', temperature: 1, messages: [{ role: 'user', content: 'Pick a number.' }] })).choices[0]!.message.content;
const open = (c: OpenAI) => c.chat.completions.create({ model: 'gpt-4o-mini', temperature: 1, stream: true, messages: [{ role: 'user', content: 'Pick a number.' }] });
const read = async (s: AsyncIterable<{ choices: { delta: { content?: string | null } }[] }>) => {
  let text = '';
  for await (const c of s) text += c.choices[0]?.delta.content ?? '';
  return text;
};

/** createFetch on a new tape in `mode`, then in replay. */
async function throughFetch<T>(name: string, mode: TapeMode, calls: (c: OpenAI) => Promise<T>): Promise<{ recorded: T; replayed: T }> {
  const tape = join(dir, `${name}.tape`);
  const rec = createFetch({ tape, mode });
  const recorded = await calls(client(base, rec));
  await rec.close();
  const play = createFetch({ tape, mode: 'replay' });
  const replayed = await calls(client(base, play));
  await play.close();
  return { recorded, replayed };
}

describe('identical requests recorded at once replay in the order they were sent', () => {
  it('createFetch, record mode: the first call, answered last, gets its own answer again', async () => {
    plan = { 1: { ms: 250 }, 2: { ms: 120 } };
    const { recorded, replayed } = await throughFetch('fetch-plain', 'record', (c) => Promise.all([ask(c), ask(c), ask(c)]));
    expect(recorded).toEqual(['answer 1', 'answer 2', 'answer 3']);
    expect(replayed).toEqual(recorded);
  });

  it('createFetch, update mode, streamed: read the later streams first, nobody waits on itself', async () => {
    plan = { 1: { ms: 200 } };
    const { recorded, replayed } = await throughFetch('fetch-stream', 'update', async (c) => {
      const streams = await Promise.all([open(c), open(c), open(c)]);
      // The last opened is read first: its end waits for the first one's record, which reads
      // its answer without its caller.
      const third = await read(streams[2]!);
      const second = await read(streams[1]!);
      const first = await read(streams[0]!);
      return [first, second, third];
    });
    expect(recorded).toEqual(['answer 1', 'answer 2', 'answer 3']);
    expect(replayed).toEqual(recorded);
  });

  it('a request that ends without a record (a 500) does not hold up the ones after it', async () => {
    plan = { 1: { ms: 200, status: 500 } };
    const tape = join(dir, 'failed-first.tape');
    const rec = createFetch({ tape, mode: 'record' });
    const c = client(base, rec);
    const out = await Promise.allSettled([ask(c), ask(c)]);
    await rec.close();
    expect(out[0]!.status).toBe('rejected');
    expect(out[1]).toEqual({ status: 'fulfilled', value: 'answer 2' });
    const play = createFetch({ tape, mode: 'replay' });
    expect(await ask(client(base, play))).toBe('answer 2');
    await play.close();
  });

  it('the proxy, record mode, plain and streamed', async () => {
    const tape = join(dir, 'proxy.tape');
    plan = { 1: { ms: 250 }, 4: { ms: 200 } };
    const proxy = await startProxy({ tape, mode: 'record', upstream: base, port: 0 });
    const c = client(proxy.url);
    const plain = await Promise.all([ask(c), ask(c), ask(c)]);
    const streamed = await Promise.all([open(c), open(c)].map(async (s) => read(await s)));
    await proxy.close();
    expect(plain).toEqual(['answer 1', 'answer 2', 'answer 3']);
    expect(streamed).toEqual(['answer 4', 'answer 5']);
    const play = await startProxy({ tape, mode: 'replay', port: 0 });
    const p = client(play.url);
    expect(await Promise.all([ask(p), ask(p), ask(p)])).toEqual(plain);
    expect(await Promise.all([open(p), open(p)].map(async (s) => read(await s)))).toEqual(streamed);
    await play.close();
  });
});
