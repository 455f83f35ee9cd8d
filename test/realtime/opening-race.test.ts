// A client that sends its `session.update` as soon as the socket opens (as OpenAI's examples
// do) races the server's `session.created`: when the client's frame reached the proxy first,
// the session was stored with no opening (no server frame before the client's first). Such a
// session then "opened differently" from one recorded without the race, so replaying the
// sessions of a connect out of order missed on some recordings and not others; and a client
// that waits for `session.created` before it sends anything got nothing on connect and hung.
// The API sends `session.created` on connect whatever the client sends: it is the session's
// opening wherever it fell among the client's frames. The real openai client over TLS, against
// a loopback Realtime API that takes a moment to open a session the first time.
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { OpenAIRealtimeWS } from 'openai/realtime/ws';
import { WebSocketServer } from 'ws';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startProxy } from '../../src/proxy/server.ts';
import { makeLocalCertificate } from '../../src/proxy/tls.ts';
import { readTape } from '../../src/store/tape-file.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-realtime-opening-race-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let tls: Awaited<ReturnType<typeof makeLocalCertificate>>;
beforeAll(async () => {
  tls = await makeLocalCertificate();
});

/**
 * The Realtime API (GA names): `session.created` on connect, the first connect's only after
 * 50 ms (a session being set up), the client's events answered in order after it.
 */
async function server(): Promise<{ url: string; close(): Promise<void> }> {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', handleProtocols: (set) => (set.has('realtime') ? 'realtime' : false) });
  let n = 0;
  wss.on('connection', (ws) => {
    const k = ++n;
    const send = (e: Record<string, unknown>) => ws.send(JSON.stringify({ event_id: `event_${k}_${Math.random().toString(36).slice(2)}`, ...e }));
    const session: Record<string, unknown> = { id: `sess_${k}${Math.random().toString(36).slice(2)}`, object: 'realtime.session', type: 'realtime', model: 'gpt-realtime', instructions: '' };
    const opened = new Promise<void>((r) => setTimeout(() => {
      send({ type: 'session.created', session });
      r();
    }, k === 1 ? 50 : 0));
    let queue = opened;
    ws.on('message', (d) => {
      const e = JSON.parse(String(d)) as { type: string; session?: Record<string, unknown> };
      queue = queue.then(() => {
        if (e.type !== 'session.update') return;
        Object.assign(session, e.session);
        send({ type: 'session.updated', session });
      });
    });
  });
  await new Promise<void>((r) => wss.once('listening', () => r()));
  return { url: `http://127.0.0.1:${(wss.address() as AddressInfo).port}`, close: () => new Promise<void>((r) => wss.close(() => r())) };
}

/**
 * A session whose `session.update` (with `instructions`) goes out at once on open (`eager`) or
 * once `session.created` came: the instructions the server confirmed, or the error, or that
 * nothing came.
 */
async function instruct(url: string, instructions: string, eager: boolean): Promise<string> {
  const rt = new OpenAIRealtimeWS({ model: 'gpt-realtime', options: { ca: tls.ca } }, new OpenAI({ apiKey: 'sk-test-fixture-0123456789abcdef', baseURL: `${url}/v1` }));
  const update = () => rt.send({ type: 'session.update', session: { type: 'realtime', instructions } });
  const closed = new Promise<void>((r) => rt.socket.once('close', () => r()));
  const said = new Promise<string>((resolve) => {
    // A replay that sends nothing on connect is what this test is about: said, not waited out.
    const timer = setTimeout(() => resolve('hung: nothing on connect'), 3000);
    const end = (s: string) => {
      clearTimeout(timer);
      resolve(s);
    };
    rt.on('session.updated', (e) => end(`confirmed: ${String((e.session as { instructions?: string }).instructions)}`));
    rt.on('error', (e) => end(`error: ${e.message}`));
    void closed.then(() => end('closed'));
  });
  if (eager) rt.socket.once('open', update);
  else rt.on('session.created', update);
  const out = await said;
  rt.close();
  await closed;
  return out;
}

it("a session whose client spoke before session.created replays in any connect order, and sends session.created on connect", async () => {
  const fake = await server();
  const tape = join(dir, 'race.tape');
  const rec = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0, tls });
  try {
    expect(await instruct(rec.url, 'first', true)).toBe('confirmed: first');
    expect(await instruct(rec.url, 'second', true)).toBe('confirmed: second');
  } finally {
    await rec.close();
    await fake.close();
  }
  // The race as recorded: the first session's client frame is stored before session.created.
  const parts = (await readTape(tape)).records.map((r) => r.value as { role?: string; frames?: { c?: 1; text?: string }[] }).filter((v) => v.role === 'part');
  const firsts = parts.filter((p) => p.frames?.length).map((p) => (p.frames![0]!.c === 1 ? 'client' : JSON.parse(p.frames![0]!.text!).type));
  expect(firsts).toContain('client');

  // Out of recorded order, eager clients: each gets its own session.
  const play = await startProxy({ tape, mode: 'replay', port: 0, tls, onWarning: () => {} });
  try {
    expect(await instruct(play.url, 'second', true)).toBe('confirmed: second');
    expect(await instruct(play.url, 'first', true)).toBe('confirmed: first');
  } finally {
    await play.close();
  }
  // Clients that wait for session.created: it comes on connect.
  const again = await startProxy({ tape, mode: 'replay', port: 0, tls, onWarning: () => {} });
  try {
    expect(await instruct(again.url, 'first', false)).toBe('confirmed: first');
    expect(await instruct(again.url, 'second', false)).toBe('confirmed: second');
  } finally {
    await again.close();
  }
});
