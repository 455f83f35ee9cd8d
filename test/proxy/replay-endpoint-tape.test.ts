// POST /v1/replay for a trace token whose recording is on the proxy's tape but not in its replay
// store: one recorded by an earlier run (a new proxy's in-memory store starts empty) or evicted
// past maxEntries (an eval of 3,000 calls through a proxy with the default 1,024). The tape holds
// the exact bytes, so they are served; a 404 that says "never stored" for a recording the tape
// holds sends the user looking for a loss that did not happen.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startProxy } from '../../src/proxy/server.ts';
import { ReplayStore } from '../../src/replay/store.ts';
import { startUpstream } from './fake-upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-replay-tape-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const chat = (text: string, stream = false) => ({ model: 'gpt-4o-mini', ...(stream ? { stream: true } : {}), messages: [{ role: 'user', content: text }] });
const post = async (url: string, body: unknown) => {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' }, body: JSON.stringify(body) });
  return { status: r.status, headers: r.headers, bytes: Buffer.from(await r.arrayBuffer()) };
};
const replayOf = async (base: string, body: unknown) => {
  const r = await fetch(`${base}/v1/replay`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: r.status, contentType: r.headers.get('content-type'), bytes: Buffer.from(await r.arrayBuffer()) };
};

describe('POST /v1/replay of a recording on the tape', () => {
  it('serves the bytes of a recording made by an earlier run, plain and streamed', async () => {
    const tape = join(dir, 'earlier.tape');
    const up = await startUpstream();
    const rec = await startProxy({ upstream: up.url, tape, mode: 'record', port: 0, replay: false });
    const made: { token: string; key: string; bytes: Buffer }[] = [];
    try {
      for (const b of [chat('plain'), chat('streamed', true)]) {
        const r = await post(`${rec.url}/v1/chat/completions`, b);
        expect(r.status).toBe(200);
        made.push({ token: r.headers.get('x-tapedeck-trace')!, key: r.headers.get('x-tapedeck-key')!, bytes: r.bytes });
      }
    } finally {
      await rec.close();
      await up.close();
    }
    // A new proxy, nothing served yet: its store is empty, its tape holds both.
    const play = await startProxy({ tape, mode: 'replay', port: 0, replay: new ReplayStore() });
    try {
      for (const [i, m] of made.entries()) {
        const r = await replayOf(play.url, { trace_token: m.token, query: m.key, document_id: 'POST /v1/chat/completions' });
        expect(r.status).toBe(200);
        expect(r.contentType).toMatch(i === 0 ? /^application\/json/ : /^text\/event-stream/);
        expect(r.bytes.equals(m.bytes)).toBe(true);
      }
      // What the tape holds under the token decides, as for a stored one: another query is 409, an unknown token 404.
      expect((await replayOf(play.url, { trace_token: made[0]!.token, query: made[1]!.key, document_id: 'POST /v1/chat/completions' })).status).toBe(409);
      expect((await replayOf(play.url, { trace_token: made[0]!.token, query: made[0]!.key, document_id: 'POST /v1/messages' })).status).toBe(409);
      expect((await replayOf(play.url, { trace_token: '0'.repeat(64), query: made[0]!.key, document_id: 'POST /v1/chat/completions' })).status).toBe(404);
    } finally {
      await play.close();
    }
  });

  it('serves a recording the store evicted past maxEntries', async () => {
    const tape = join(dir, 'evicted.tape');
    const up = await startUpstream();
    const proxy = await startProxy({ upstream: up.url, tape, mode: 'update', port: 0, replay: new ReplayStore({ maxEntries: 2 }) });
    try {
      const made: { token: string; key: string; bytes: Buffer }[] = [];
      for (let i = 0; i < 5; i++) {
        const r = await post(`${proxy.url}/v1/chat/completions`, chat(`item ${i}`));
        made.push({ token: r.headers.get('x-tapedeck-trace')!, key: r.headers.get('x-tapedeck-key')!, bytes: r.bytes });
      }
      for (const m of made) {
        const r = await replayOf(proxy.url, { trace_token: m.token, query: m.key, document_id: 'POST /v1/chat/completions' });
        expect(r.status).toBe(200);
        expect(r.bytes.equals(m.bytes)).toBe(true);
      }
    } finally {
      await proxy.close();
      await up.close();
    }
  });
});
