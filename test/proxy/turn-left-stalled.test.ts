// Two identical streamed calls recorded at once: the first one's caller gives up on it midway and
// its upstream then goes quiet mid-answer, the second is answered whole. The answer of the left
// call is still read on for its recording (an answer whose caller left is recorded if whole), but
// a stalled one no longer holds the second caller's complete answer until the idle timeout: it
// steps aside, the second answer is recorded and ends, and a warning says so. Through createFetch
// and the proxy, with the real OpenAI SDK and a local provider that stalls its first answer.
import OpenAI from 'openai';
import { createServer, type ServerResponse } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { listenLoopback } from './fake-upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-turn-left-stalled-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const chunk = (k: number, delta: object, finish: string | null) => `data: ${JSON.stringify({ id: `c${k}`, object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

/**
 * A provider whose first streamed answer stops after its first event (and stays open), or with
 * `slowly`, goes on with an event every 300 ms to its end; later ones come whole.
 */
async function stallingFirst(slowly = false) {
  let n = 0;
  let firstOpen = false;
  const open: ServerResponse[] = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const k = ++n;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (k === 1) {
        firstOpen = true;
        res.on('close', () => (firstOpen = false));
        open.push(res);
        res.write(chunk(k, { role: 'assistant', content: 'answer ' }, null));
        if (slowly) {
          const rest = [chunk(k, { content: '1' }, null), chunk(k, {}, 'stop'), 'data: [DONE]\n\n'];
          const next = () => {
            const c = rest.shift();
            if (c === undefined) return void res.end();
            res.write(c);
            setTimeout(next, 300);
          };
          setTimeout(next, 300);
        }
        return;
      }
      res.end(chunk(k, { role: 'assistant', content: 'answer ' }, null) + chunk(k, { content: String(k) }, 'stop') + 'data: [DONE]\n\n');
    });
  });
  const up = await listenLoopback(server);
  return { ...up, firstStillOpen: () => firstOpen };
}

const ask = { model: 'gpt-4o-mini', stream: true as const, messages: [{ role: 'user' as const, content: 'Pick a number' }] };

async function text(stream: AsyncIterable<{ choices: { delta?: { content?: string | null } }[] }>): Promise<string> {
  let out = '';
  for await (const ch of stream) out += ch.choices[0]?.delta?.content ?? '';
  return out;
}

/** The first call, left by its caller after its first event; then the second, read to its end. */
async function leftThenWhole(client: OpenAI): Promise<string> {
  const ac = new AbortController();
  const first = await client.chat.completions.create(ask, { signal: ac.signal });
  for await (const _ of first) {
    ac.abort();
    break;
  }
  return text(await client.chat.completions.create(ask));
}

describe('record mode: an earlier identical call left by its caller and stalled does not hold a later complete answer', () => {
  it('createFetch: the second answer ends while the first upstream is still stalled, and is recorded', async () => {
    const up = await stallingFirst();
    const tape = join(dir, 'fetch.tape');
    const warnings: string[] = [];
    const f = createFetch({ tape, mode: 'record', summary: false, shutdownTimeoutMs: 200, idleTimeoutMs: 25_000, onWarning: (m) => warnings.push(m) });
    try {
      const second = await leftThenWhole(new OpenAI({ baseURL: `${up.url}/v1`, apiKey: 'sk-x', fetch: f, maxRetries: 0 }));
      expect(second).toBe('answer 2');
      // Not released by the idle timeout, which would have closed the first upstream call.
      expect(up.firstStillOpen()).toBe(true);
      expect(warnings.join('\n')).toMatch(/POST \/v1\/chat\/completions: an identical request sent earlier/);
      await f.close();
      const replay = createFetch({ tape, mode: 'replay', summary: false, strictOrder: true });
      expect(await text(await new OpenAI({ baseURL: `${up.url}/v1`, apiKey: 'sk-x', fetch: replay, maxRetries: 0 }).chat.completions.create(ask))).toBe('answer 2');
      await replay.close();
    } finally {
      await f.close();
      await up.close();
    }
  }, 40_000);

  it('the proxy: the same', async () => {
    const up = await stallingFirst();
    const tape = join(dir, 'proxy.tape');
    const warnings: string[] = [];
    const proxy = await startProxy({ upstream: up.url, tape, mode: 'record', port: 0, shutdownTimeoutMs: 200, idleTimeoutMs: 25_000, onWarning: (m) => warnings.push(m) });
    try {
      const second = await leftThenWhole(new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: 'sk-x', maxRetries: 0 }));
      expect(second).toBe('answer 2');
      expect(up.firstStillOpen()).toBe(true);
      expect(warnings.join('\n')).toMatch(/POST \/v1\/chat\/completions: an identical request sent earlier/);
    } finally {
      await proxy.close();
    }
    const replay = await startProxy({ upstream: up.url, tape, mode: 'replay', port: 0 });
    try {
      expect(await text(await new OpenAI({ baseURL: `${replay.url}/v1`, apiKey: 'sk-x', maxRetries: 0 }).chat.completions.create(ask))).toBe('answer 2');
    } finally {
      await replay.close();
      await up.close();
    }
  }, 40_000);

  it('createFetch: a left call whose upstream keeps sending keeps its place: the second waits, and replay keeps the order', async () => {
    const up = await stallingFirst(true);
    const tape = join(dir, 'kept-order.tape');
    const warnings: string[] = [];
    const f = createFetch({ tape, mode: 'record', summary: false, onWarning: (m) => warnings.push(m) });
    try {
      expect(await leftThenWhole(new OpenAI({ baseURL: `${up.url}/v1`, apiKey: 'sk-x', fetch: f, maxRetries: 0 }))).toBe('answer 2');
      // Released by the first one's record, so after its upstream finished.
      expect(up.firstStillOpen()).toBe(false);
      expect(warnings.join('\n')).not.toMatch(/an identical request sent earlier/);
      await f.close();
      const replay = createFetch({ tape, mode: 'replay', summary: false, strictOrder: true });
      const client = new OpenAI({ baseURL: `${up.url}/v1`, apiKey: 'sk-x', fetch: replay, maxRetries: 0 });
      expect(await text(await client.chat.completions.create(ask))).toBe('answer 1');
      expect(await text(await client.chat.completions.create(ask))).toBe('answer 2');
      await replay.close();
    } finally {
      await up.close();
    }
  }, 40_000);
});
