// What a realtime miss says about the client's frame: the client's own ids (not the numbers
// tapedeck renumbers them to for matching), and a text frame that is not JSON as such (not as
// binary data). Raw `ws` clients against the fake realtime server, through the proxy.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startProxy } from '../../src/proxy/server.ts';
import { startFakeRealtime } from './fake-realtime.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-realtime-miss-wording-'));
const tape = join(dir, 'wording.tape');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const item = (id?: string) => JSON.stringify({ type: 'conversation.item.create', item: { ...(id ? { id } : {}), type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hello' }] } });

/**
 * One session (with `headers` and `protocols` on its connect): after session.created, sends `frame` (as text); resolves with the error event's
 * message when the server sends one, else '' once the item was acknowledged.
 */
async function session(url: string, frame: string, headers: Record<string, string> = {}, protocols = ['realtime']): Promise<string> {
  const ws = new WebSocket(`${url.replace('http', 'ws')}/v1/realtime?model=gpt-realtime`, protocols, { headers });
  const said = await new Promise<string>((resolve, reject) => {
    ws.on('message', (d) => {
      const e = JSON.parse(d.toString()) as Record<string, any>;
      if (e.type === 'session.created') ws.send(frame);
      if (e.type === 'conversation.item.done' || e.type === 'session.updated') resolve('');
      if (e.type === 'error') resolve(String(e.error?.message ?? ''));
    });
    ws.once('error', reject);
    ws.once('close', () => resolve('closed'));
  });
  ws.close();
  return said;
}

beforeAll(async () => {
  const fake = await startFakeRealtime();
  const rec = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0 });
  try {
    expect(await session(rec.url, item())).toBe('');
  } finally {
    await rec.close();
    await fake.close();
  }
});

it("names the client's own item id where the recording had none, not its renumbered place", async () => {
  const play = await startProxy({ tape, mode: 'replay', port: 0 });
  try {
    const said = await session(play.url, item('myitem0'));
    expect(said).toContain('item.id differs, "myitem0" vs (absent)');
    expect(said).not.toContain('#1');
    expect(await session(play.url, item())).toBe('');
    // The session that missed is a miss, not a replayed session besides.
    expect(play.handler.stats().realtime).toMatchObject({ replayed: 1, misses: 1 });
  } finally {
    await play.close();
  }
});

it('calls a text frame that is not JSON text, not binary data', async () => {
  const play = await startProxy({ tape, mode: 'replay', port: 0 });
  try {
    const said = await session(play.url, 'hello, not json');
    expect(said).toContain('text that is not JSON');
    expect(said).not.toContain('binary');
  } finally {
    await play.close();
  }
});

it('says a connect at a recorded URL differs in its OpenAI-Beta header or its subprotocols, not just that nothing was recorded', async () => {
  const play = await startProxy({ tape, mode: 'replay', port: 0 });
  try {
    const beta = await session(play.url, item(), { 'OpenAI-Beta': 'realtime=v1' });
    expect(beta).toContain('no recording of this session (GET /v1/realtime?model=gpt-realtime): the 1 session recorded at this URL was connected with other headers: this connect sends OpenAI-Beta: realtime=v1');
    const sub = await session(play.url, item(), {}, ['realtime', 'extra-protocol']);
    expect(sub).toContain('offered other subprotocols: [realtime], this connect [extra-protocol, realtime]');
  } finally {
    await play.close();
  }
});

it('names where a secret that differs is, masked on both sides', async () => {
  // A provider key in the query of a URL inside a frame is a keyed mask (what the client wrote,
  // not its own credential): two keys are two masks, and the miss names where they differ.
  const update = (key: string) => JSON.stringify({ type: 'session.update', session: { type: 'realtime', tools: [{ type: 'mcp', server_label: 'docs', server_url: `https://mcp.example.com/sse?key=${key}` }] } });
  const keyed = join(dir, 'keyed.tape');
  const fake = await startFakeRealtime();
  const rec = await startProxy({ upstream: fake.url, tape: keyed, mode: 'record', port: 0 });
  try {
    await session(rec.url, update('AIzaFirstKeyFirstKey01'));
  } finally {
    await rec.close();
    await fake.close();
  }
  const play = await startProxy({ tape: keyed, mode: 'replay', port: 0 });
  try {
    const miss = await session(play.url, update('AIzaOtherKeyOtherKey02'));
    expect(miss).toContain('session.tools[0].server_url differs');
    expect(miss).not.toContain('OtherKey');
  } finally {
    await play.close();
  }
});
