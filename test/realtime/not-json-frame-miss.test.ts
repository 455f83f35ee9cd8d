// A client frame that is not JSON (a text frame of plain text, or binary data) differing from
// the recording's: the miss called the recorded text frame "binary data" and showed neither
// frame, so the user could not tell what changed. Now the recorded frame is named as it was sent
// (text or binary), and the miss shows where the two differ: both texts, or the first byte
// that differs. A raw `ws` client through the proxy, against a loopback server that answers a
// frame that is not JSON with an `error` event, as the Realtime API does.
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket, WebSocketServer } from 'ws';
import { afterAll, expect, it } from 'vitest';
import { startProxy } from '../../src/proxy/server.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-realtime-not-json-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The Realtime API's answers to a session.update, a response.create, and a frame that is no JSON event. */
async function server(): Promise<{ url: string; close(): Promise<void> }> {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  let n = 0;
  wss.on('connection', (ws) => {
    const send = (e: Record<string, unknown>) => ws.send(JSON.stringify({ event_id: `event_${++n}`, ...e }));
    send({ type: 'session.created', session: { id: `sess_${n}`, type: 'realtime' } });
    ws.on('message', (d) => {
      let e: { type?: string; session?: unknown };
      try {
        e = JSON.parse(String(d));
      } catch {
        return send({ type: 'error', error: { type: 'invalid_request_error', code: 'invalid_json', message: 'The frame is not JSON.', param: null, event_id: null } });
      }
      if (e.type === 'session.update') send({ type: 'session.updated', session: e.session });
      else if (e.type === 'response.create') send({ type: 'response.done', response: { id: `resp_${n}`, status: 'completed', output: [] } });
    });
  });
  await new Promise<void>((r) => wss.once('listening', () => r()));
  return { url: `http://127.0.0.1:${(wss.address() as AddressInfo).port}`, close: () => new Promise<void>((r) => wss.close(() => r())) };
}

/** session.update, then `second` (text, or a Buffer sent as binary), then response.create: the error events the client got. */
async function talk(url: string, second: string | Buffer): Promise<string[]> {
  const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/v1/realtime?model=gpt-realtime`, ['realtime']);
  const events: { type: string; error?: { message: string } }[] = [];
  const closed = new Promise<void>((r) => ws.once('close', () => r()));
  ws.on('message', (d) => events.push(JSON.parse(String(d))));
  ws.on('error', () => {});
  await new Promise<void>((r) => ws.once('open', () => r()));
  ws.send(JSON.stringify({ type: 'session.update', session: { instructions: 'raw' } }));
  ws.send(second, { binary: Buffer.isBuffer(second) });
  ws.send(JSON.stringify({ type: 'response.create' }));
  await new Promise<void>((resolve) => {
    const check = () => (events.some((e) => e.type === 'response.done' || e.error?.message.startsWith('tapedeck')) ? resolve() : setTimeout(check, 5));
    check();
    void closed.then(() => resolve());
  });
  ws.close();
  await closed;
  return events.filter((e) => e.type === 'error').map((e) => e.error!.message);
}

it('a miss on a frame that is not JSON names the recorded frame as it was sent and shows where they differ', async () => {
  const fake = await server();
  const tape = join(dir, 'raw.tape');
  const rec = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0, onWarning: () => {} });
  try {
    expect(await talk(rec.url, 'not json at all')).toEqual(['The frame is not JSON.']);
  } finally {
    await rec.close();
  }
  const play = await startProxy({ tape, mode: 'replay', port: 0, onWarning: () => {} });
  try {
    expect(await talk(play.url, 'not json at all')).toEqual(['The frame is not JSON.']);
    const text = await talk(play.url, 'not json at ALL');
    expect(text).toHaveLength(1);
    expect(text[0]).toContain('client frame 2 (text that is not JSON) differs from the recording\'s (text that is not JSON): "not json at ALL" vs "not json at all"');
    const binary = await talk(play.url, Buffer.from([0, 1, 2, 3]));
    expect(binary[0]).toContain("client frame 2 (binary data) differs from the recording's (text that is not JSON): they differ at byte 0 (4 bytes; the recording's 15)");
  } finally {
    await play.close();
  }
  // A binary frame recorded is named so.
  const tape2 = join(dir, 'bin.tape');
  const rec2 = await startProxy({ upstream: fake.url, tape: tape2, mode: 'record', port: 0, onWarning: () => {} });
  try {
    expect(await talk(rec2.url, Buffer.from([9, 8, 7, 6, 5]))).toEqual(['The frame is not JSON.']);
  } finally {
    await rec2.close();
    await fake.close();
  }
  const play2 = await startProxy({ tape: tape2, mode: 'replay', port: 0, onWarning: () => {} });
  try {
    const binary = await talk(play2.url, Buffer.from([9, 8, 7, 0, 5]));
    expect(binary[0]).toContain("client frame 2 (binary data) differs from the recording's (binary data): they differ at byte 3 (5 bytes; the recording's 5)");
  } finally {
    await play2.close();
  }
});
