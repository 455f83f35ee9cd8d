// A session cut in the middle of a response (the upstream reset, or the recording client's
// process killed) whose client sent its frames back to back: `session.update`, the message and
// `response.create` reached the server before `session.updated` came back, so the part stored
// with that completing frame holds all three client frames, and the cut dropped only the answer
// in flight. Replaying the same client matched every recorded client frame, sent
// `session.updated`, and then nothing: no close, no error, no warning; the client waited forever
// where the recording client had seen the connection cut (1006). Now the replay cuts (1006) and
// warns once it has sent the last recorded frames.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { OpenAIRealtimeWS } from 'openai/realtime/ws';
import { WebSocketServer, type WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxy } from '../../src/proxy/server.ts';
import { makeLocalCertificate } from '../../src/proxy/tls.ts';
import { readTape } from '../../src/store/tape-file.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-realtime-cut-mid-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// The openai client connects over TLS (wss:), as it does to the API.
let tls: Awaited<ReturnType<typeof makeLocalCertificate>>;
beforeAll(async () => {
  tls = await makeLocalCertificate();
});

type Event = Record<string, any>;

/**
 * The Realtime API (GA event names) on loopback, answering each client event in turn, a
 * `session.update` after 30 ms of work (so a client that does not wait has its next events at
 * the server before `session.updated` comes back). A response streams its transcript a delta
 * every 30 ms; asked about a crash, the server resets the connection after the first delta.
 */
async function busyServer(): Promise<{ url: string; close(): Promise<void> }> {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', handleProtocols: (set) => (set.has('realtime') ? 'realtime' : false) });
  let n = 0;
  const id = (p: string) => `${p}_${Date.now().toString(36)}${++n}`;
  wss.on('connection', (ws: WebSocket) => {
    const send = (e: Event) => ws.readyState === ws.OPEN && ws.send(JSON.stringify({ event_id: id('event'), ...e }));
    const session = { id: id('sess'), object: 'realtime.session', type: 'realtime', model: 'gpt-realtime', instructions: '', output_modalities: ['text'] };
    send({ type: 'session.created', session });
    let text = '';
    let queue = Promise.resolve();
    ws.on('message', (d) => {
      const e = JSON.parse(d.toString()) as Event;
      queue = queue.then(async () => {
        if (e.type === 'session.update') {
          await new Promise((r) => setTimeout(r, 30));
          Object.assign(session, e.session);
          send({ type: 'session.updated', session });
        } else if (e.type === 'conversation.item.create') {
          const item = { id: id('item'), ...e.item, status: 'completed' };
          text = e.item.content[0].text;
          send({ type: 'conversation.item.added', previous_item_id: null, item });
          send({ type: 'conversation.item.done', previous_item_id: null, item });
        } else if (e.type === 'response.create') {
          const resp = id('resp');
          const item = id('item');
          send({ type: 'response.created', response: { id: resp, object: 'realtime.response', status: 'in_progress', output: [] } });
          send({ type: 'response.output_item.added', response_id: resp, output_index: 0, item: { id: item, type: 'message', role: 'assistant', status: 'in_progress', content: [] } });
          for (const w of ['Once ', 'upon ', 'a time.']) {
            send({ type: 'response.output_text.delta', response_id: resp, item_id: item, output_index: 0, content_index: 0, delta: w });
            // An upstream that goes away mid-answer: no close frame (its client sees 1006).
            if (text.includes('crash')) return void ws.terminate();
            await new Promise((r) => setTimeout(r, 30));
          }
          send({ type: 'response.done', response: { id: resp, object: 'realtime.response', status: 'completed', output: [], usage: { total_tokens: 3, input_tokens: 1, output_tokens: 2 } } });
        }
      });
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
 * The real openai client: on open, `session.update`, the message and `response.create` at once.
 * `die`: its process is killed (the socket dropped, no close frame) at the first text delta.
 * Says how the session ended for it; a session that neither answers nor closes is said, not
 * waited out.
 */
async function story(url: string, text: string, die = false): Promise<{ end: string; events: Event[] }> {
  const rt = new OpenAIRealtimeWS({ model: 'gpt-realtime', options: { ca: tls.ca } }, new OpenAI({ apiKey: 'sk-test-fixture-0123456789abcdef', baseURL: `${url}/v1` }));
  const events: Event[] = [];
  rt.on('error', () => {});
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      rt.socket.terminate();
      resolve({ end: 'hung: no answer, no close', events });
    }, 5000);
    const end = (what: string) => {
      clearTimeout(timer);
      resolve({ end: what, events });
    };
    rt.on('event', (e) => {
      events.push(e as Event);
      if (e.type === 'response.done') end('answered');
      if (die && e.type === 'response.output_text.delta') {
        rt.socket.terminate();
        end('died');
      }
    });
    rt.socket.once('close', (code) => end(`closed ${code}`));
    rt.socket.once('open', () => {
      rt.send({ type: 'session.update', session: { type: 'realtime', instructions: 'tell stories', output_modalities: ['text'] } });
      rt.send({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] } });
      rt.send({ type: 'response.create' });
    });
  });
}

describe('a session recorded cut mid-response, its client frames stored with an earlier answer', () => {
  for (const [name, text, die, recorded] of [
    ['the upstream reset the connection', 'a story, then crash', false, 'closed 1006'],
    ["the recording client's process was killed", 'a story, slowly', true, 'died'],
  ] as const) {
    it(`${name}: its replay cuts the connection (1006) and warns, instead of leaving the client waiting`, async () => {
      const tape = join(dir, `${die ? 'killed' : 'reset'}.tape`);
      const fake = await busyServer();
      const rec = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0, tls, onWarning: () => {} });
      let live: Event[];
      try {
        const r = await story(rec.url, text, die);
        expect(r.end).toBe(recorded);
        live = r.events;
        // The proxy sees the client's drop after the test does: its end is on the tape then.
        const ended = async () => (await readTape(tape)).records.some((r) => (r.value as { end?: unknown }).end !== undefined);
        for (let i = 0; i < 250 && !(await ended()); i++) await new Promise((r) => setTimeout(r, 20));
      } finally {
        await rec.close();
        await fake.close();
      }
      // The tape: the three client frames, then the one answer completed before the cut.
      const values = (await readTape(tape)).records.map((r) => r.value as { role?: string; frames?: { c?: 1; text?: string }[]; end?: { cut?: boolean } });
      const frames = values.filter((v) => v.role === 'part').flatMap((v) => v.frames ?? []);
      expect(frames.filter((f) => f.c === 1)).toHaveLength(3);
      expect(frames.at(-1)?.text).toContain('"session.updated"');
      expect(values.find((v) => v.end)?.end?.cut).toBe(true);

      const warned: string[] = [];
      const play = await startProxy({ tape, mode: 'replay', port: 0, tls, onWarning: (m) => warned.push(m) });
      try {
        const r = await story(play.url, text);
        expect(r.end).toBe('closed 1006');
        // What the recording client saw before the answer in flight: the opening and session.updated.
        expect(r.events.map((e) => e.type)).toEqual(['session.created', 'session.updated']);
        expect(live.slice(0, 2).map((e) => e.type)).toEqual(['session.created', 'session.updated']);
        const note = warned.find((m) => m.includes('recorded cut'));
        expect(note, warned.join('\n')).toMatch(/after 3 client frames/);
        expect(note).toContain('re-record');
      } finally {
        await play.close();
      }
    });
  }
});
