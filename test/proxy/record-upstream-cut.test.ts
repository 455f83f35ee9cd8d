// A record run whose upstream drops the connection in the middle of a streamed answer: the SDK
// raises, nothing is recorded, and whoever runs the recording is told which call was not
// recorded and why (a test that catches the SDK's error would otherwise pass with the call
// missing from the tape, found only when CI replays it).
import OpenAI from 'openai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startProxy } from '../../src/proxy/server.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-upstream-cut-'));
let server: Server;
let url: string;

beforeAll(async () => {
  // Two events of an OpenAI chat stream, then the connection is dropped (no final event, no
  // end of the chunked body): what a provider's load balancer resetting the stream looks like.
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
      const ev = (delta: unknown) => `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1767225600, model: 'gpt-4o-mini', choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`;
      res.write(ev({ role: 'assistant', content: '' }));
      res.write(ev({ content: 'Hel' }));
      setTimeout(() => res.socket?.destroy(), 20);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  rmSync(dir, { recursive: true, force: true });
});

async function streamed(client: OpenAI): Promise<unknown> {
  try {
    const s = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }], stream: true });
    for await (const _ of s) {
      // read to the end
    }
    return undefined;
  } catch (e) {
    return e;
  }
}

describe('an upstream that drops a streamed answer midway, in record mode', () => {
  it('createFetch: the SDK raises, the call is counted an error and onWarning names the route and that it was not recorded', async () => {
    const tape = join(dir, 'fetch.tape');
    const warnings: string[] = [];
    const f = createFetch({ tape, mode: 'record', onWarning: (m) => warnings.push(m) });
    try {
      const err = await streamed(new OpenAI({ apiKey: 'sk-test', baseURL: `${url}/v1`, fetch: f, maxRetries: 0 }));
      expect(err).toBeInstanceOf(Error);
      expect((await f.stats()).errors).toBe(1);
    } finally {
      await f.close();
    }
    expect(warnings.join('\n')).toMatch(/POST \/v1\/chat\/completions: the upstream's answer failed before its end \(.+\); not recorded/);
    const play = createFetch({ tape, mode: 'replay' });
    try {
      expect(await streamed(new OpenAI({ apiKey: 'sk-test', baseURL: 'http://127.0.0.1:9/v1', fetch: play, maxRetries: 0 }))).toMatchObject({ status: 400 });
    } finally {
      await play.close();
    }
  });

  it('tapedeck serve: the same call is counted an error and the warning says so', async () => {
    const warnings: string[] = [];
    const proxy = await startProxy({ upstream: url, tape: join(dir, 'proxy.tape'), mode: 'record', port: 0, onWarning: (m) => warnings.push(m) });
    try {
      const err = await streamed(new OpenAI({ apiKey: 'sk-test', baseURL: `${proxy.url}/v1`, maxRetries: 0 }));
      expect(err).toBeInstanceOf(Error);
      expect(proxy.handler.stats().errors).toBe(1);
    } finally {
      await proxy.close();
    }
    expect(warnings.join('\n')).toMatch(/POST \/v1\/chat\/completions: the upstream's answer failed before its end \(.+\); not recorded/);
  });
});
