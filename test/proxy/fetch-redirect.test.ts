// createFetch follows redirects as fetch does: each hop a call of its own through the tape, so
// a replay takes the same hops offline. It used to hand the caller the 307 itself (empty body,
// no url), where the platform's fetch gives the answer the redirect leads to. The oracle is the
// platform's own fetch against the same server.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-fetch-redirect-'));
let server: Server;
let other: Server;
let base = '';
let otherBase = '';
/** What each server was asked: method, path, body and whether an authorization came. */
const seen: { at: string; method: string; path: string; body: string; auth: boolean }[] = [];

function serve(name: string): Server {
  return createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const path = req.url ?? '/';
      seen.push({ at: name, method: req.method ?? '', path, body, auth: req.headers.authorization !== undefined });
      const to = (status: number, location: string) => {
        res.writeHead(status, { location, 'content-type': 'text/plain' });
        res.end(`see ${location}`);
      };
      // A FastAPI-style server: the path with a trailing slash redirects to the one without.
      if (path === '/v1/chat/completions/') return to(307, '/v1/chat/completions');
      if (path === '/see-other') return to(303, '/answer');
      if (path === '/moved') return to(301, '/answer');
      if (path === '/away') return to(307, `${otherBase}/answer`);
      if (path === '/loop') return to(302, '/loop');
      if (path === '/v1/chat/completions') {
        res.writeHead(200, { 'content-type': 'application/json' });
        const { messages } = JSON.parse(body) as { messages: { content: string }[] };
        return res.end(JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: `you said ${messages[0]!.content}` }, finish_reason: 'stop' }] }));
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ at: name, method: req.method, body }));
    });
  });
}

beforeAll(async () => {
  server = serve('main');
  other = serve('other');
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // Another origin: localhost instead of 127.0.0.1, on the other server's port.
  otherBase = `http://localhost:${(other.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  await new Promise((r) => other.close(r));
  rmSync(dir, { recursive: true, force: true });
});
let seq = 0;
const tapePath = () => join(dir, `t${++seq}.tape`);

/** What an answer shows a caller: status, url, redirected, body. */
async function shown(r: Response) {
  return { status: r.status, url: r.url, redirected: r.redirected, body: await r.text() };
}

describe('createFetch and redirects', () => {
  const cases: [string, string, RequestInit][] = [
    ['307 keeps the method and the body', '/v1/chat/completions/', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }) }],
    ['303 goes on as a GET without the body', '/see-other', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' }],
    ['301 after a POST goes on as a GET', '/moved', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' }],
    ['307 to another origin drops the authorization', '/away', { method: 'POST', headers: { authorization: 'Bearer sk-test-0123456789', 'content-type': 'text/plain' }, body: 'y' }],
  ];

  it.each(cases)('%s: recorded and replayed as the platform fetch answers it', async (_name, path, init) => {
    seen.length = 0;
    const native = await shown(await fetch(`${base}${path}`, init));
    const nativeSeen = seen.splice(0);
    const tape = tapePath();
    const rec = createFetch({ tape, mode: 'record', summary: false });
    try {
      expect(await shown(await rec(`${base}${path}`, init))).toEqual(native);
    } finally {
      await rec.close();
    }
    // The servers were asked exactly what the platform's fetch asked them.
    expect(seen.splice(0)).toEqual(nativeSeen);
    const play = createFetch({ tape, mode: 'replay', summary: false });
    try {
      expect(await shown(await play(`${base}${path}`, init))).toEqual(native);
    } finally {
      await play.close();
    }
    expect(seen).toEqual([]);
  });

  it("redirect: 'manual' gets the redirect itself, 'error' rejects as fetch does, and a loop ends after 20 hops", async () => {
    const f = createFetch({ tape: tapePath(), mode: 'record', summary: false });
    try {
      const manual = await f(`${base}/moved`, { redirect: 'manual' });
      expect(manual.status).toBe(301);
      expect(manual.headers.get('location')).toBe('/answer');
      expect(manual.redirected).toBe(false);
      await expect(f(`${base}/moved`, { redirect: 'error' })).rejects.toThrow(TypeError);
      await expect(fetch(`${base}/moved`, { redirect: 'error' })).rejects.toThrow(TypeError);
      seen.length = 0;
      const loop = await f(`${base}/loop`).catch((e: unknown) => e);
      expect(loop).toBeInstanceOf(TypeError);
      expect(((loop as TypeError).cause as Error).message).toBe('redirect count exceeded');
      expect(seen.length).toBe(21);
    } finally {
      await f.close();
    }
  });

  it('the OpenAI SDK against a server that redirects a trailing slash: the answer, recorded and replayed', async () => {
    const tape = tapePath();
    for (const mode of ['record', 'replay'] as const) {
      const f = createFetch({ tape, mode, summary: false });
      try {
        const client = new OpenAI({ apiKey: 'sk-test', baseURL: `${base}/v1`, fetch: f, maxRetries: 0 });
        // A path with a trailing slash, as some gateways and hand-joined URLs have it.
        const r = (await client.post('/chat/completions/', { body: { model: 'm', messages: [{ role: 'user', content: 'hi' }] } })) as { choices: { message: { content: string } }[] };
        expect(r.choices[0]!.message.content, mode).toBe('you said hi');
      } finally {
        await f.close();
      }
    }
  });
});
