// The bytes a replay hands out belong to the caller: a consumer that writes into them (a parser
// working in place, a buffer pool) must not change what the next replay of the same recording
// gives. Node's Buffer#slice() is a view, not a copy, so every copy is checked here by writing
// into what was handed out and replaying again.
import { describe, expect, it } from 'vitest';
import { createServer } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { createFetch } from '../../src/proxy/index.ts';
import { ReplayStore } from '../../src/replay/store.ts';

const EVENTS = ['data: {"choices":[{"delta":{"content":"hi"}}]}\n\n', 'data: {"choices":[{"delta":{},"finish_reason":"stop"}]}\n\n', 'data: [DONE]\n\n'];

async function upstream(): Promise<{ url: string; close(): void }> {
  const srv = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.url === '/plain') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"id":"x","choices":[{"message":{"role":"assistant","content":"plain"},"finish_reason":"stop"}]}');
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(EVENTS[0]);
      setTimeout(() => {
        res.write(EVENTS[1]);
        res.end(EVENTS[2]);
      }, 5);
    });
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  return { url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`, close: () => srv.close() };
}

/** Reads the whole body chunk by chunk, overwriting each chunk after reading it. */
async function readAndScribble(r: Response): Promise<string> {
  const reader = r.body!.getReader();
  const dec = new TextDecoder();
  let text = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return text + dec.decode();
    text += dec.decode(value, { stream: true });
    value.fill(0x21);
  }
}

describe('replayed bytes are the caller\'s own', () => {
  it('createFetch: plain and streamed answers, paced or not, replay the same after the caller wrote into them', async () => {
    const up = await upstream();
    const dir = mkdtempSync(join(tmpdir(), 'tapedeck-owned-'));
    const tape = join(dir, 't.tape');
    const body = JSON.stringify({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'x' }] });
    const init = { method: 'POST', headers: { 'content-type': 'application/json' }, body };
    const rec = createFetch({ tape, mode: 'record' });
    const recorded = { stream: await (await rec(`${up.url}/stream`, init)).text(), plain: await (await rec(`${up.url}/plain`, init)).text() };
    await rec.close();
    up.close();
    expect(recorded.stream).toBe(EVENTS.join(''));
    for (const timing of ['none', 1] as const) {
      const f = createFetch({ tape, mode: 'replay', timing });
      try {
        for (let round = 0; round < 3; round++) {
          for (const path of ['stream', 'plain'] as const) {
            expect(await readAndScribble(await f(`${up.url}/${path}`, init))).toBe(recorded[path]);
          }
        }
      } finally {
        await f.close();
      }
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('ReplayStore: what put() was given and what get() hands out are copies', () => {
    const store = new ReplayStore();
    const sent = Buffer.from('{"answer":"four"}\n');
    const { token } = store.put({ documentId: 'doc-1', query: 'q', documentVersion: '1', model: 'gpt-4o', systemPromptVersion: 'v1', selectedIds: ['a'], body: sent });
    sent.fill(0x21); // the caller reuses its buffer
    const first = store.get(token, 'q')!;
    expect(Buffer.from(first.body).toString()).toBe('{"answer":"four"}\n');
    first.body.fill(0x21);
    expect(Buffer.from(store.get(token, 'q')!.body).toString()).toBe('{"answer":"four"}\n');
  });
});
