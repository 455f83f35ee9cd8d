// Upstreams that differ only by path prefix (one AI gateway routing to several providers:
// `https://gateway.ai.cloudflare.com/v1/<acct>/<gw>/openai` | `/groq`): a recording made through
// one prefix must not answer a proxy whose upstream is another; update mode goes to the other
// one and records it, and replay through either prefix gets its own provider's answer. A
// recording made with createFetch under the same prefix (fetchUnder) still answers the proxy.
import OpenAI from 'openai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch, fetchUnder } from '../../src/proxy/fetch.ts';
import { startProxy } from '../../src/proxy/server.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-prefix-match-'));
let gw: Server;
let origin: string;
const calls: string[] = [];

beforeAll(async () => {
  // A gateway answering chat and the model list under /gw-openai and /gw-groq, saying which.
  gw = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const path = req.url ?? '';
      calls.push(path);
      const m = /^\/(gw-[a-z]+)\/v1\/(chat\/completions|models)$/.exec(path);
      if (!m) {
        res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `no route ${path}` } }));
        return;
      }
      const body =
        m[2] === 'models'
          ? { object: 'list', data: [{ id: `model-of-${m[1]}`, object: 'model', created: 1, owned_by: m[1] }] }
          : { id: 'c1', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: `from ${m[1]}` }, finish_reason: 'stop' }] };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
  });
  await new Promise<void>((r) => gw.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(gw.address() as AddressInfo).port}`;
});
afterAll(async () => {
  gw.closeAllConnections();
  await new Promise((r) => gw.close(r));
  rmSync(dir, { recursive: true, force: true });
});

const question = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'which provider are you?' }] };

/** One chat call and one model list through `tapedeck serve --upstream origin + prefix`: what each answered, or the error. */
async function through(tape: string, mode: 'record' | 'update' | 'replay', prefix: string): Promise<{ chat: string; models: string }> {
  const proxy = await startProxy({ upstream: `${origin}${prefix}`, tape, mode, port: 0, onWarning: () => {} });
  try {
    const client = new OpenAI({ apiKey: 'sk-test', baseURL: `${proxy.url}/v1`, maxRetries: 0 });
    const chat = await client.chat.completions.create(question).then(
      (a) => a.choices[0]!.message.content ?? '',
      (e: Error) => `error: ${e.message}`,
    );
    const models = await client.models.list().then(
      (p) => p.data.map((x) => x.id).join(','),
      (e: Error) => `error: ${e.message}`,
    );
    return { chat, models };
  } finally {
    await proxy.close();
  }
}

describe('upstreams that differ only by path prefix', () => {
  it('keep their recordings apart: update records the other prefix, replay serves each its own', async () => {
    const tape = join(dir, 'gw.tape');
    expect(await through(tape, 'record', '/gw-openai')).toEqual({ chat: 'from gw-openai', models: 'model-of-gw-openai' });
    calls.length = 0;
    expect(await through(tape, 'update', '/gw-groq')).toEqual({ chat: 'from gw-groq', models: 'model-of-gw-groq' });
    expect(calls).toEqual(['/gw-groq/v1/chat/completions', '/gw-groq/v1/models']);
    calls.length = 0;
    expect(await through(tape, 'replay', '/gw-groq')).toEqual({ chat: 'from gw-groq', models: 'model-of-gw-groq' });
    expect(await through(tape, 'replay', '/gw-openai')).toEqual({ chat: 'from gw-openai', models: 'model-of-gw-openai' });
    expect(calls).toEqual([]);
  });

  it('a replay through another prefix is a miss that names the prefix it was recorded under', async () => {
    const tape = join(dir, 'one.tape');
    await through(tape, 'record', '/gw-openai');
    const got = await through(tape, 'replay', '/gw-mistral');
    expect(got.chat).toMatch(/^error: /);
    expect(got.chat).toContain('/gw-openai');
    expect(got.chat).toContain('/gw-mistral');
    expect(got.models).toMatch(/^error: /);
  });

  it('a recording made with createFetch under the same prefix answers the proxy', async () => {
    const tape = join(dir, 'fetch.tape');
    const f = createFetch({ tape, mode: 'record', summary: false, onWarning: () => {} });
    try {
      const under = (url: string | URL | Request, init?: RequestInit) => fetchUnder(f, String(url), init, '/gw-openai');
      const client = new OpenAI({ apiKey: 'sk-test', baseURL: `${origin}/gw-openai/v1`, fetch: under as typeof fetch, maxRetries: 0 });
      expect((await client.chat.completions.create(question)).choices[0]!.message.content).toBe('from gw-openai');
    } finally {
      await f.close();
    }
    calls.length = 0;
    expect((await through(tape, 'replay', '/gw-openai')).chat).toBe('from gw-openai');
    expect(calls).toEqual([]);
  });
});
