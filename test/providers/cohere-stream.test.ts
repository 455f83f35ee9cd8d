// Cohere's streams (v2 server-sent events ending with message-end, v1 JSON lines ending with
// stream-end): one cut before its final event, even cleanly, is not a whole answer, so it is
// never recorded, and its replay is a miss, not a shorter answer marked exact.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cohereStreamComplete } from '../../src/providers/cohere-stream.ts';
import { responseComplete } from '../../src/providers/index.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startProxy } from '../../src/proxy/server.ts';

const usage = { billed_units: { input_tokens: 5, output_tokens: 7 }, tokens: { input_tokens: 70, output_tokens: 7 } };
const V2 = [
  { id: 'c1', type: 'message-start', delta: { message: { role: 'assistant', content: [], tool_plan: '', tool_calls: [], citations: [] } } },
  { type: 'content-start', index: 0, delta: { message: { content: { type: 'text', text: '' } } } },
  { type: 'content-delta', index: 0, delta: { message: { content: { text: 'Hello' } } } },
  { type: 'content-delta', index: 0, delta: { message: { content: { text: ' there' } } } },
  { type: 'content-end', index: 0 },
  { type: 'message-end', delta: { finish_reason: 'COMPLETE', usage } },
];
const V1 = [
  { is_finished: false, event_type: 'stream-start', generation_id: 'g1' },
  { is_finished: false, event_type: 'text-generation', text: 'Hello' },
  { is_finished: false, event_type: 'text-generation', text: ' there' },
  { is_finished: true, event_type: 'stream-end', finish_reason: 'COMPLETE', response: { response_id: 'r1', text: 'Hello there', generation_id: 'g1', finish_reason: 'COMPLETE' } },
];
const sse = (events: readonly object[]) => events.map((e) => `event: ${(e as { type: string }).type}\ndata: ${JSON.stringify(e)}\n\n`).join('');
const lines = (events: readonly object[]) => events.map((e) => `${JSON.stringify(e)}\n`).join('');
const v2 = { method: 'POST', url: '/v2/chat' };
const v1 = { method: 'POST', url: '/v1/chat' };

describe('Cohere stream completeness', () => {
  it('a v2 stream is whole only with message-end', () => {
    expect(responseComplete(v2, 'text/event-stream', sse(V2))).toBe(true);
    for (let n = 1; n < V2.length; n++) expect(responseComplete(v2, 'text/event-stream', sse(V2.slice(0, n))), `cut after ${n} events`).toBe(false);
  });

  it('a v1 JSON-lines stream is whole only with stream-end, under either content type', () => {
    for (const ct of ['application/stream+json', 'application/x-ndjson']) {
      expect(responseComplete(v1, ct, lines(V1))).toBe(true);
      for (let n = 1; n < V1.length; n++) expect(responseComplete(v1, ct, lines(V1.slice(0, n))), `${ct} cut after ${n} lines`).toBe(false);
      // Cut inside the final line.
      expect(responseComplete(v1, ct, lines(V1).slice(0, -10))).toBe(false);
    }
  });

  it('JSON lines of another shape, and other bodies, are not judged by the Cohere rule', () => {
    expect(cohereStreamComplete('application/x-ndjson', '{"a":1}\n')).toBe(true);
    expect(cohereStreamComplete('application/json', lines(V1.slice(0, 1)))).toBe(true);
  });

});

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-cohere-cut-'));
let server: Server;
let url: string;

beforeAll(async () => {
  // Cohere's two chat streams, ended cleanly after `x-cut-at` events when that header is sent.
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const cut = Number(req.headers['x-cut-at'] ?? 0);
      if (req.url === '/v2/chat') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(sse(cut ? V2.slice(0, cut) : V2));
      } else {
        res.writeHead(200, { 'content-type': 'application/stream+json' });
        res.end(lines(cut ? V1.slice(0, cut) : V1));
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  rmSync(dir, { recursive: true, force: true });
});

const ask = (base: string, path: string, f: typeof fetch, cutAt?: number) =>
  f(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(cutAt ? { 'x-cut-at': String(cutAt) } : {}) },
    body: JSON.stringify(path === '/v2/chat' ? { model: 'command-a-03-2025', stream: true, messages: [{ role: 'user', content: 'tell me' }] } : { message: 'tell me', stream: true }),
  });

describe('a Cohere stream cut cleanly before its final event, recorded', () => {
  for (const [path, cutAt] of [['/v2/chat', 4], ['/v1/chat', 3]] as const) {
    it(`createFetch ${path}: not recorded, and its replay is a miss`, async () => {
      const tape = join(dir, `fetch${path.replaceAll('/', '-')}.tape`);
      const warnings: string[] = [];
      const rec = createFetch({ tape, mode: 'record', onWarning: (m) => warnings.push(m) });
      try {
        await (await ask(url, path, rec, cutAt)).text();
      } finally {
        await rec.close();
      }
      expect(warnings.join('\n')).toContain(`POST ${path}`);
      const play = createFetch({ tape, mode: 'replay' });
      try {
        const res = await ask('http://127.0.0.1:9', path, play);
        expect(res.status).toBe(400);
        expect(res.headers.get('x-tapedeck-match')).not.toBe('exact');
      } finally {
        await play.close();
      }
    });
  }

  it('tapedeck serve /v2/chat: not recorded, and its replay is a miss', async () => {
    const tape = join(dir, 'proxy.tape');
    const proxy = await startProxy({ upstream: url, tape, mode: 'record', port: 0, onWarning: () => {} });
    try {
      await (await ask(proxy.url, '/v2/chat', fetch, 4)).text();
      // A whole stream of another request is recorded, so the tape exists.
      await (await fetch(`${proxy.url}/v1/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message: 'whole', stream: true }) })).text();
    } finally {
      await proxy.close();
    }
    const play = await startProxy({ tape, mode: 'replay', port: 0, onWarning: () => {} });
    try {
      const res = await ask(play.url, '/v2/chat', fetch);
      await res.text();
      expect(res.status).toBe(400);
      const whole = await fetch(`${play.url}/v1/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message: 'whole', stream: true }) });
      expect(whole.headers.get('x-tapedeck-match')).toBe('exact');
      expect(await whole.text()).toBe(lines(V1));
    } finally {
      await play.close();
    }
  });
});
