// Where a server frame falls between the client's frames is timing, not what the server said. Two
// sessions recorded alike but for the user's text, whose server answered `session.update` in
// 0 ms for one and 60 ms for the other while the client sent its next frame 30 ms after it: in
// one recording `session.updated` comes before the client's `conversation.item.create`, in the
// other after it. Replayed in the other order (shuffled tests), the connect that got the other's
// session at its first frame must go on with its own (src/realtime/switch.ts), not miss with
// "its server frames before them differ". Sessions whose server frames do differ still never
// trade. A real WebSocket server and client through the proxy.
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket, WebSocketServer } from 'ws';
import { afterAll, describe, expect, it } from 'vitest';
import { startProxy } from '../../src/proxy/server.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-realtime-interleave-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Event = Record<string, any>;

/**
 * An OpenAI Realtime server that answers the n-th connect's `session.update` after
 * `delays[n]` ms, with `extra[n]` members set on the session (a default that changed).
 */
async function fakeServer(delays: number[], extra: Record<string, unknown>[] = []): Promise<{ url: string; close: () => Promise<void> }> {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate: false, handleProtocols: () => false });
  let n = 0;
  let ids = 0;
  const id = (p: string) => `${p}_${Date.now().toString(36)}${(ids++).toString(36)}`;
  wss.on('connection', (ws) => {
    const conn = n++;
    const send = (e: Event) => ws.send(JSON.stringify({ event_id: id('event'), ...e }));
    const session: Event = { id: id('sess'), object: 'realtime.session', model: 'gpt-realtime', instructions: '' };
    send({ type: 'session.created', session });
    let text = '';
    ws.on('message', (d) => {
      const e = JSON.parse(String(d)) as Event;
      if (e.type === 'session.update') {
        Object.assign(session, e.session, extra[conn] ?? {});
        setTimeout(() => send({ type: 'session.updated', session }), delays[conn] ?? 0);
      } else if (e.type === 'conversation.item.create') {
        text = e.item.content[0].text;
        send({ type: 'conversation.item.added', item: { id: id('item'), ...e.item } });
      } else if (e.type === 'response.create') {
        // Streamed over some 50 ms: a late `session.updated` falls in the middle of it.
        const rid = id('resp');
        const answer = `You said: ${text}`;
        send({ type: 'response.created', response: { id: rid, status: 'in_progress' } });
        void (async () => {
          for (const w of answer.split(/(?<= )/)) {
            send({ type: 'response.output_text.delta', response_id: rid, delta: w });
            await new Promise((r) => setTimeout(r, 15));
          }
          send({ type: 'response.done', response: { id: rid, status: 'completed', output: [{ type: 'message', content: [{ type: 'output_text', text: answer }] }] } });
        })();
      }
    });
  });
  await new Promise<void>((r) => wss.once('listening', () => r()));
  return {
    url: `http://127.0.0.1:${(wss.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((r) => {
        for (const c of wss.clients) c.terminate();
        wss.close(() => r());
      }),
  };
}

/**
 * A voice agent's session: `session.update`, 30 ms later the user's text and `response.create`;
 * the answer's text, or the error the proxy sent, once the response is done or the socket closed.
 */
async function talk(proxyUrl: string, text: string): Promise<{ answer?: string; error?: string; updated: number }> {
  const ws = new WebSocket(`${proxyUrl.replace(/^http/, 'ws')}/v1/realtime?model=gpt-realtime`, { perMessageDeflate: false });
  const events: Event[] = [];
  const closed = new Promise<void>((r) => ws.once('close', () => r()));
  ws.on('message', (d) => events.push(JSON.parse(String(d)) as Event));
  await new Promise<void>((r, j) => {
    ws.once('open', () => r());
    ws.once('error', j);
  });
  ws.send(JSON.stringify({ type: 'session.update', session: { instructions: 'Be brief.' } }));
  await new Promise((r) => setTimeout(r, 30));
  ws.send(JSON.stringify({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] } }));
  ws.send(JSON.stringify({ type: 'response.create' }));
  await Promise.race([
    closed,
    new Promise<void>((r) => {
      const over = () => events.some((e) => e.type === 'error') || (events.some((e) => e.type === 'response.done') && events.some((e) => e.type === 'session.updated'));
      const check = () => (over() ? r() : setTimeout(check, 5));
      check();
    }),
  ]);
  // Frames sent twice would come right after the rest.
  await new Promise((r) => setTimeout(r, 20));
  ws.close();
  await closed;
  const done = events.find((e) => e.type === 'response.done');
  const error = events.find((e) => e.type === 'error');
  return { ...(done ? { answer: done.response.output[0].content[0].text as string } : {}), ...(error ? { error: String(error.error?.message) } : {}), updated: events.filter((e) => e.type === 'session.updated').length };
}

/** Records Alpha then Beta, the server answering their `session.update` after `delays` ms. */
async function record(name: string, delays: number[], extra: Record<string, unknown>[] = []): Promise<string> {
  const tape = join(dir, `${name}.tape`);
  const fake = await fakeServer(delays, extra);
  const proxy = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0 });
  try {
    expect(await talk(proxy.url, 'Hello Alpha')).toEqual({ answer: 'You said: Hello Alpha', updated: 1 });
    expect(await talk(proxy.url, 'Hello Beta')).toEqual({ answer: 'You said: Hello Beta', updated: 1 });
  } finally {
    await proxy.close();
    await fake.close();
  }
  return tape;
}

describe('realtime sessions whose server frames fell otherwise between the client frames', () => {
  it.each([
    ['0 ms then 60 ms', [0, 60]],
    ['60 ms then 0 ms', [60, 0]],
  ])('replay in the other order than recorded (session.update answered in %s)', async (_, delays) => {
    const tape = await record(`order-${delays.join('-')}`, delays);
    const warnings: string[] = [];
    const replay = await startProxy({ tape, mode: 'replay', port: 0, strictOrder: true, onWarning: (w) => warnings.push(w) });
    try {
      // Each gets its own answer, and `session.updated` once (never twice, never not at all).
      expect(await talk(replay.url, 'Hello Beta')).toEqual({ answer: 'You said: Hello Beta', updated: 1 });
      expect(await talk(replay.url, 'Hello Alpha')).toEqual({ answer: 'You said: Hello Alpha', updated: 1 });
    } finally {
      await replay.close();
    }
    expect(warnings.filter((w) => w.includes('miss'))).toEqual([]);
  });

  it('replay at the same time in the other order than recorded', async () => {
    const tape = await record('parallel', [0, 60]);
    const replay = await startProxy({ tape, mode: 'replay', port: 0, strictOrder: true, onWarning: () => {} });
    try {
      const [beta, alpha] = await Promise.all([talk(replay.url, 'Hello Beta'), talk(replay.url, 'Hello Alpha')]);
      expect(beta).toEqual({ answer: 'You said: Hello Beta', updated: 1 });
      expect(alpha).toEqual({ answer: 'You said: Hello Alpha', updated: 1 });
    } finally {
      await replay.close();
    }
  });

  it('still miss where the server said something else (beyond where it fell)', async () => {
    // Beta's server set another voice on its session: Beta's connect, sent Alpha's
    // `session.updated`, cannot go on with Beta's session.
    const tape = await record('other-server', [0, 60], [{}, { voice: 'ash' }]);
    const replay = await startProxy({ tape, mode: 'replay', port: 0, strictOrder: true, onWarning: () => {} });
    try {
      const beta = await talk(replay.url, 'Hello Beta');
      expect(beta.answer).toBeUndefined();
      expect(beta.error).toContain('its server frames before them differ from the ones this connect was sent');
    } finally {
      await replay.close();
    }
  });
});
