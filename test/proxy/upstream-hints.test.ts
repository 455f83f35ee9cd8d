// What an upstream failure tells the user to do names their own controls: the proxy's flags
// for `tapedeck serve`, createFetch's options and modes for createFetch (which has no
// --upstream: its upstream is the URL the client calls). Clients shown the whole error body
// (the short style: Python SDKs, @google/genai) get the hint once.
import OpenAI from 'openai';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { errorMessage } from '../../src/providers/error-shape.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startProxy } from '../../src/proxy/server.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-hints-'));
let dead = '';

beforeAll(async () => {
  // A port that was just free: nothing listens there.
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  dead = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  await new Promise<void>((r) => s.close(() => r()));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const chat = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] });
const count = (text: string, part: string) => text.split(part).length - 1;

describe('an unreachable upstream', () => {
  it("through createFetch: the hint names createFetch's modes and the client's base URL, not the proxy's flags", async () => {
    const f = createFetch({ tape: join(dir, 'fetch.tape'), mode: 'record', summary: false });
    try {
      const err = (await new OpenAI({ baseURL: `${dead}/v1`, apiKey: 'sk-unused', fetch: f, maxRetries: 0 }).chat.completions
        .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] })
        .catch((e: unknown) => e)) as Error & { status: number };
      expect(err.status).toBe(502);
      expect(err.message).toContain('is unreachable');
      expect(err.message).toContain("client's base URL");
      expect(err.message).toContain("createFetch mode 'replay'");
      expect(err.message).not.toContain('--upstream');
      expect(err.message).not.toContain('--mode');
    } finally {
      await f.close();
    }
  });

  it('through createFetch, shown as a whole body (a Python client): the hint once', async () => {
    const f = createFetch({ tape: join(dir, 'short.tape'), mode: 'record', summary: false });
    try {
      const res = await f(`${dead}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-stainless-lang': 'python' }, body: chat });
      expect(res.status).toBe(502);
      const message = ((await res.json()) as { error: { message: string } }).error.message;
      expect(count(message, "client's base URL")).toBe(1);
    } finally {
      await f.close();
    }
  });

  it("through the proxy: the hint names the proxy's flags, once in the short style", async () => {
    const proxy = await startProxy({ upstream: dead, tape: join(dir, 'proxy.tape'), mode: 'record', port: 0 });
    try {
      for (const short of [false, true]) {
        const res = await fetch(`${proxy.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', ...(short ? { 'x-stainless-lang': 'python' } : {}) }, body: chat });
        expect(res.status).toBe(502);
        const message = ((await res.json()) as { error: { message: string } }).error.message;
        expect(count(message, 'Check --upstream and the network')).toBe(1);
      }
    } finally {
      await proxy.close();
    }
  });
});

describe('errorMessage in the short style', () => {
  it('adds a hint the message lacks, and never a second copy', () => {
    const e = new TapedeckError('E_UPSTREAM', 'Upstream x is unreachable.', { hint: 'Check the network.' });
    expect(errorMessage(e, { short: true })).toBe('Upstream x is unreachable. Check the network.');
    const bare = Object.assign(new TapedeckError('E_UPSTREAM', 'Upstream x is unreachable.'), {});
    bare.details.hint = 'Check the network.';
    expect(errorMessage(bare, { short: true })).toBe('Upstream x is unreachable. (Check the network.)');
  });
});

describe('an upstream that takes the request and closes the connection without answering', () => {
  it('is said so, not called unreachable (its address is right), through createFetch and the proxy', async () => {
    const rude = createServer((req) => req.socket.destroy());
    await new Promise<void>((r) => rude.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(rude.address() as AddressInfo).port}`;
    try {
      const f = createFetch({ tape: join(dir, 'dropped.tape'), mode: 'record', summary: false });
      try {
        const res = await f(`${url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: chat });
        expect(res.status).toBe(502);
        const text = await res.text();
        expect(text).toContain('closed the connection without answering');
        expect(text).not.toContain('unreachable');
      } finally {
        await f.close();
      }
      const proxy = await startProxy({ upstream: url, tape: join(dir, 'dropped-proxy.tape'), mode: 'record', port: 0 });
      try {
        const res = await fetch(`${proxy.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: chat });
        expect(res.status).toBe(502);
        expect(await res.text()).toContain('closed the connection without answering');
      } finally {
        await proxy.close();
      }
    } finally {
      await new Promise<void>((r) => rude.close(() => r()));
    }
  });
});
