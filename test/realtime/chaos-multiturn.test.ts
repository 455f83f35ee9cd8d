// Chaos's close on a session recorded now, for an agent whose session has more than one
// response. The session recorded behind the fault must be whole: the reconnect replays what was
// recorded and goes on live in the same upstream session (its later turns recorded as the
// session's continuation), so the run that records the test passes (record mode, update mode
// through the test tape's tape.chaos()) and the replay (CI) gives both connects what the
// recording run gave them. The real openai OpenAIRealtimeWS through the proxy over TLS, against
// the loopback fake realtime server.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { OpenAIRealtimeWS } from 'openai/realtime/ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxy } from '../../src/proxy/server.ts';
import { makeLocalCertificate } from '../../src/proxy/tls.ts';
import { openTestTape } from '../../src/testing/session.ts';
import { startFakeRealtime, type FakeRealtime } from './fake-realtime.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-realtime-chaos-multiturn-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Event = Record<string, any>;

interface Run {
  code: number;
  reason: string;
  events: Event[];
  statuses: string[];
  transcripts: string[];
  errors: string[];
}

/** A two-turn voice agent: each turn a message, the item done, a response; then its close (unless the server closed first). */
async function agent(url: string, ca: string): Promise<Run> {
  const rt = new OpenAIRealtimeWS({ model: 'gpt-realtime', options: { ca } }, new OpenAI({ apiKey: 'sk-test-multiturn-0123456789abcdef', baseURL: `${url}/v1` }));
  const events: Event[] = [];
  const errors: string[] = [];
  rt.on('event', (e) => events.push(e as Event));
  rt.on('error', (e) => errors.push(e.message));
  const closed = new Promise<{ code: number; reason: string }>((r) => rt.socket.once('close', (code, reason) => r({ code, reason: reason.toString() })));
  const next = (type: string) =>
    new Promise<Event | undefined>((r) => {
      rt.on(type as 'response.done', (e) => r(e as Event));
      void closed.then(() => r(undefined));
    });
  const created = next('session.created');
  await new Promise<void>((resolve, reject) => {
    rt.socket.once('open', () => resolve());
    rt.socket.once('error', reject);
  });
  const statuses: string[] = [];
  const transcripts: string[] = [];
  if (await created) {
    for (const text of ['Hello there', 'And a second turn']) {
      const itemDone = next('conversation.item.done');
      rt.send({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] } });
      if (!(await itemDone)) break;
      const done = next('response.done');
      rt.send({ type: 'response.create' });
      const d = await done;
      if (!d) break;
      statuses.push(d.response.status);
      transcripts.push(d.response.output?.[0]?.content?.[0]?.transcript);
    }
  }
  rt.close();
  const { code, reason } = await closed;
  return { code, reason, events, statuses, transcripts, errors };
}

/** The agent's test: connect, and once more after a close 1011 (what the user's code does). */
async function withReconnect(url: string, ca: string): Promise<{ first: Run; again?: Run }> {
  const first = await agent(url, ca);
  if (first.code !== 1011) return { first };
  return { first, again: await agent(url, ca) };
}

const TURNS = ['You said: Hello there', 'You said: And a second turn'];

describe('realtime chaos: close on a multi-turn session recorded now', () => {
  let tls: Awaited<ReturnType<typeof makeLocalCertificate>>;
  let fake: FakeRealtime;
  beforeAll(async () => {
    tls = await makeLocalCertificate();
    fake = await startFakeRealtime();
  });
  afterAll(() => fake.close());

  it('record mode: the reconnect replays the first turn and goes on live in the same upstream session; the replay gives both connects the same', async () => {
    const tape = join(dir, 'record.tape');
    const chaos = { faults: { close: 1 }, attempts: 1, seed: 7, live: true };
    const connects = fake.connects.length;
    const rec = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0, tls, chaos, onWarning: () => {} });
    let recorded: { first: Run; again?: Run };
    try {
      recorded = await withReconnect(rec.url, tls.ca);
      expect(recorded.first.code).toBe(1011);
      expect(recorded.first.statuses).toEqual([]);
      expect(recorded.again?.errors).toEqual([]);
      expect(recorded.again?.statuses).toEqual(['completed', 'completed']);
      expect(recorded.again?.transcripts).toEqual(TURNS);
      // One upstream session: the reconnect went on in the one recorded behind the fault.
      expect(fake.connects.length).toBe(connects + 1);
      expect(rec.handler.stats().faults).toEqual({ close: 1 });
      expect(rec.handler.stats().realtime).toMatchObject({ recorded: 1, misses: 0 });
    } finally {
      await rec.close();
    }
    // CI: the same chaos cuts the first connect at the same place, and the reconnect gets every
    // event the recording run's reconnect got.
    const replay = await startProxy({ tape, mode: 'replay', port: 0, tls, chaos: { ...chaos, live: false }, onWarning: () => {} });
    try {
      const again = await withReconnect(replay.url, tls.ca);
      expect(again.first.code).toBe(1011);
      expect(again.first.events).toEqual(recorded.first.events);
      expect(again.again?.errors).toEqual([]);
      expect(again.again?.events).toEqual(recorded.again?.events);
      expect(replay.handler.stats().realtime).toMatchObject({ replayed: 1, misses: 0 });
    } finally {
      await replay.close();
    }
    // Without chaos the session is one whole conversation.
    const plain = await startProxy({ tape, mode: 'replay', port: 0, tls, onWarning: () => {} });
    try {
      const whole = await agent(plain.url, tls.ca);
      expect(whole.transcripts).toEqual(TURNS);
      expect(whole.code).toBe(1000);
    } finally {
      await plain.close();
    }
  });

  it('the test tape (tape.chaos, update mode on the first run, then replay): the test passes on both runs', async () => {
    const tape = join(dir, 'fixture.tape');
    for (const mode of ['update', 'replay'] as const) {
      const t = openTestTape({ tape, mode, env: {} });
      t.chaos({ faults: { close: 1 }, attempts: 1, seed: 5 });
      const { url, ca } = await t.serve({ upstream: fake.url });
      const r = await withReconnect(url, ca!);
      expect(r.first.code).toBe(1011);
      expect(r.again?.errors).toEqual([]);
      expect(r.again?.transcripts).toEqual(TURNS);
      const report = await t.close();
      expect(t.misses).toHaveLength(0);
      expect(report.faults).toEqual({ close: 1 });
    }
  });
});
