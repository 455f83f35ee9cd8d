// OpenAI Realtime sessions of one route are chosen by the client's first frame, as Gemini's are
// by `setup`: two sessions recorded A then B (their first `session.update` differs) replay in
// either connect order, each connect getting the session that starts with its own frame. Before,
// the k-th connect got the k-th session whatever it sent: B connecting first got A's recording
// and a miss telling the user to re-record a tape that had both sessions. Sessions that start
// alike still replay in connect order, and a first frame no session has is still a miss naming
// what differs (using up no recording). The real openai client over TLS, against the loopback
// fake of the Realtime API.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { OpenAIRealtimeWS } from 'openai/realtime/ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxy } from '../../src/proxy/server.ts';
import { makeLocalCertificate } from '../../src/proxy/tls.ts';
import { startFakeRealtime } from './fake-realtime.ts';
import { until } from './until-event.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-realtime-first-frame-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let tls: Awaited<ReturnType<typeof makeLocalCertificate>>;
beforeAll(async () => {
  tls = await makeLocalCertificate();
});

type Event = Record<string, any>;

/** A connected client: the events and errors it got, and when its socket closed. */
interface Client {
  rt: OpenAIRealtimeWS;
  events: Event[];
  errors: string[];
  closed: Promise<number>;
}

/** Opens OpenAIRealtimeWS through the proxy and waits for `session.created` (or the close). */
async function connect(url: string): Promise<Client> {
  const rt = new OpenAIRealtimeWS({ model: 'gpt-realtime', options: { ca: tls.ca } }, new OpenAI({ apiKey: 'sk-test-fixture-0123456789abcdef', baseURL: `${url}/v1` }));
  const s: Client = { rt, events: [], errors: [], closed: new Promise<number>((r) => rt.socket.once('close', (code) => r(code))) };
  rt.on('event', (e) => s.events.push(e as Event));
  rt.on('error', (e) => s.errors.push(e.message));
  await until(s, (e) => e.type === 'session.created');
  return s;
}


/**
 * The session of one caller: its instructions first (the frame that tells the sessions apart),
 * then `text` and a response; the answer's transcript, the instructions the server confirmed,
 * and whether the session ids the client saw were one id.
 */
async function talk(s: Client, instructions: string, text: string): Promise<{ transcript?: string; confirmed?: string; ids: string[]; errors: string[] }> {
  s.rt.send({ type: 'session.update', session: { type: 'realtime', instructions } });
  const updated = await until(s, (e) => e.type === 'session.updated');
  let transcript: string | undefined;
  if (updated) {
    const n = s.events.length;
    s.rt.send({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] } });
    s.rt.send({ type: 'response.create' });
    const done = await until(s, (e) => e.type === 'response.done', n);
    transcript = done?.response?.output?.[0]?.content?.[0]?.transcript as string | undefined;
  }
  s.rt.close();
  await s.closed;
  const ids = [...new Set(s.events.filter((e) => e.session?.id).map((e) => e.session.id as string))];
  return { transcript, confirmed: updated?.session?.instructions as string | undefined, ids, errors: s.errors };
}

/** Records the sessions one after the other on a new tape; returns its path. */
async function record(name: string, sessions: [instructions: string, text: string][]): Promise<string> {
  const fake = await startFakeRealtime();
  const tape = join(dir, `${name}.tape`);
  const proxy = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0, tls });
  try {
    for (const [instructions, text] of sessions) {
      const r = await talk(await connect(proxy.url), instructions, text);
      expect(r.errors).toEqual([]);
    }
  } finally {
    await proxy.close();
    await fake.close();
  }
  return tape;
}

describe('OpenAI Realtime sessions of one route, replayed in another connect order', () => {
  let tape: string;
  beforeAll(async () => {
    tape = await record('a-then-b', [
      ['Be brief.', 'from A'],
      ['Be funny.', 'from B'],
    ]);
  });

  for (const strictOrder of [false, true]) {
    it(`B then A, one after the other: each gets its own recording${strictOrder ? ' (--strict-order)' : ''}`, async () => {
      const warnings: string[] = [];
      const proxy = await startProxy({ tape, mode: 'replay', port: 0, tls, strictOrder, onWarning: (w) => warnings.push(w) });
      try {
        const b = await talk(await connect(proxy.url), 'Be funny.', 'from B');
        const a = await talk(await connect(proxy.url), 'Be brief.', 'from A');
        expect(b).toMatchObject({ errors: [], confirmed: 'Be funny.', transcript: 'You said: from B' });
        expect(a).toMatchObject({ errors: [], confirmed: 'Be brief.', transcript: 'You said: from A' });
        // The session id of `session.created` (sent at connect, before the choice) is the one the
        // rest of the session names.
        expect(b.ids).toHaveLength(1);
        expect(a.ids).toHaveLength(1);
        expect(warnings).toEqual([]);
        expect(proxy.handler.stats().realtime).toMatchObject({ replayed: 2, misses: 0 });
      } finally {
        await proxy.close();
      }
    });
  }

  it('B connects first, A speaks first: each still gets its own recording', async () => {
    const proxy = await startProxy({ tape, mode: 'replay', port: 0, tls, strictOrder: true, onWarning: () => {} });
    try {
      const bc = await connect(proxy.url);
      const ac = await connect(proxy.url);
      const a = await talk(ac, 'Be brief.', 'from A');
      const b = await talk(bc, 'Be funny.', 'from B');
      expect(a).toMatchObject({ errors: [], confirmed: 'Be brief.', transcript: 'You said: from A' });
      expect(b).toMatchObject({ errors: [], confirmed: 'Be funny.', transcript: 'You said: from B' });
    } finally {
      await proxy.close();
    }
  });

  it('a first frame no session starts with is a miss naming what differs, and uses up no recording', async () => {
    const warnings: string[] = [];
    const proxy = await startProxy({ tape, mode: 'replay', port: 0, tls, strictOrder: true, onWarning: (w) => warnings.push(w) });
    try {
      const c = await talk(await connect(proxy.url), 'Be verbose.', 'from C');
      expect(c.errors).toHaveLength(1);
      expect(c.errors[0]).toMatch(/client frame 1 \(session\.update\): session\.instructions differs, "Be verbose\." vs "Be brief\." in the recording; re-record/);
      const b = await talk(await connect(proxy.url), 'Be funny.', 'from B');
      const a = await talk(await connect(proxy.url), 'Be brief.', 'from A');
      expect(b).toMatchObject({ errors: [], transcript: 'You said: from B' });
      expect(a).toMatchObject({ errors: [], transcript: 'You said: from A' });
    } finally {
      await proxy.close();
    }
  });

  it('with --strict-order, a session replayed already is a miss that says so, not one that asks to re-record', async () => {
    const proxy = await startProxy({ tape, mode: 'replay', port: 0, tls, strictOrder: true, onWarning: () => {} });
    try {
      const b = await talk(await connect(proxy.url), 'Be funny.', 'from B');
      expect(b.errors).toEqual([]);
      const again = await talk(await connect(proxy.url), 'Be funny.', 'from B');
      expect(again.errors).toHaveLength(1);
      expect(again.errors[0]).toMatch(/session 2 of GET \/v1\/realtime\?model=gpt-realtime starts with this session\.update; it was replayed already/);
      expect(again.errors[0]).not.toMatch(/re-record/);
    } finally {
      await proxy.close();
    }
  });
});

describe('OpenAI Realtime sessions that start alike', () => {
  let tape: string;
  beforeAll(async () => {
    tape = await record('alike', [
      ['Be brief.', 'one'],
      ['Be brief.', 'two'],
    ]);
  });

  it('replay in connect order, one after the other', async () => {
    const proxy = await startProxy({ tape, mode: 'replay', port: 0, tls, strictOrder: true, onWarning: () => {} });
    try {
      const one = await talk(await connect(proxy.url), 'Be brief.', 'one');
      const two = await talk(await connect(proxy.url), 'Be brief.', 'two');
      expect(one).toMatchObject({ errors: [], transcript: 'You said: one' });
      expect(two).toMatchObject({ errors: [], transcript: 'You said: two' });
    } finally {
      await proxy.close();
    }
  });

  it('replay in connect order when the second connect speaks first', async () => {
    const proxy = await startProxy({ tape, mode: 'replay', port: 0, tls, strictOrder: true, onWarning: () => {} });
    try {
      const first = await connect(proxy.url);
      const second = await connect(proxy.url);
      const two = await talk(second, 'Be brief.', 'two');
      const one = await talk(first, 'Be brief.', 'one');
      expect(one).toMatchObject({ errors: [], transcript: 'You said: one' });
      expect(two).toMatchObject({ errors: [], transcript: 'You said: two' });
    } finally {
      await proxy.close();
    }
  });
});
