// Faults on demand for realtime sessions: a replayed session closed (1011) in the middle of a
// response. The real `openai` OpenAIRealtimeWS through the proxy over TLS and the real
// `@google/genai` live session, against sessions recorded from the loopback fake realtime
// server: the client sees its socket closed with 1011 and a reason naming the fault after the
// first events of a response and before the one that completes it; with `attempts: 1` its
// reconnect gets the whole recorded session, and a faulted session never uses up a recording;
// the same seed closes the same sessions again; `x-tapedeck-chaos` forces or forbids the fault
// and never reaches the upstream; `tapedeck serve --chaos close:RATE` counts the faults in its
// closing line; the tape's bytes never change.
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GoogleGenAI, Modality, type LiveServerMessage } from '@google/genai';
import OpenAI from 'openai';
import { OpenAIRealtimeWS } from 'openai/realtime/ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Chaos } from '../../src/chaos/decide.ts';
import { familyOptions, parseChaosSpec, type ChaosOptions } from '../../src/chaos/options.ts';
import { serveOptions } from '../../src/proxy/cli.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { makeLocalCertificate } from '../../src/proxy/tls.ts';
import { openTestTape } from '../../src/testing/session.ts';
import { serve } from '../proxy/serve-cli.ts';
import { startFakeRealtime, type FakeRealtime } from './fake-realtime.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-realtime-chaos-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const KEY = 'sk-test-' + 'chaosRealtime0123456789abcdef';
type Event = Record<string, any>;

interface Asked {
  events: Event[];
  code: number;
  reason: string;
  transcript?: string;
}

/** One OpenAI Realtime session: a user message, a response, then the client's close (unless the server closed first). */
async function ask(url: string, ca: string | undefined, text: string, headers?: Record<string, string>): Promise<Asked> {
  const rt = new OpenAIRealtimeWS({ model: 'gpt-realtime', options: { ca, ...(headers ? { headers } : {}) } }, new OpenAI({ apiKey: KEY, baseURL: `${url}/v1` }));
  const events: Event[] = [];
  rt.on('event', (e) => events.push(e as Event));
  rt.on('error', () => {});
  const closed = new Promise<{ code: number; reason: string }>((r) => rt.socket.once('close', (code, reason) => r({ code, reason: reason.toString() })));
  const done = new Promise<Event | undefined>((r) => {
    rt.on('response.done', (e) => r(e as Event));
    void closed.then(() => r(undefined));
  });
  await new Promise<void>((resolve, reject) => {
    rt.socket.once('open', () => resolve());
    rt.socket.once('error', reject);
  });
  rt.send({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] } });
  rt.send({ type: 'response.create' });
  const d = await done;
  rt.close();
  const { code, reason } = await closed;
  const transcript = (d?.response?.output?.[0] as { content?: { transcript?: string }[] } | undefined)?.content?.[0]?.transcript;
  return { events, code, reason, ...(transcript !== undefined ? { transcript } : {}) };
}

const types = (a: Asked) => a.events.map((e) => e.type as string);
const digest = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

describe('the close fault in a SPEC and beside the HTTP faults', () => {
  it('serve --chaos reads close:RATE beside HTTP faults; an HTTP-only SPEC (createFetch) refuses it', () => {
    expect(serveOptions(['--chaos', '429:0.2,close:0.5,latency=20', '--chaos-seed', '9']).chaos).toEqual({ faults: { 429: 0.2, close: 0.5 }, latencyMs: 20, seed: 9 });
    expect(() => parseChaosSpec('close', 'http')).toThrow(expect.objectContaining({ code: 'E_CHAOS_SPEC' }));
    expect(() => parseChaosSpec('close=3', 'proxy')).toThrow(expect.objectContaining({ code: 'E_CHAOS_SPEC' }));
  });

  it('each family draws from its own faults: adding close never changes which HTTP calls fail, and latency stays HTTP', () => {
    const both: ChaosOptions = { faults: { 429: 0.5, close: 0.5 }, latencyMs: 30, seed: 13 };
    expect(familyOptions(both, 'realtime')).toEqual({ faults: { close: 0.5 }, seed: 13 });
    expect(familyOptions(both, 'http')).toEqual({ faults: { 429: 0.5 }, latencyMs: 30, seed: 13 });
    const alone = new Chaos({ faults: { 429: 0.5 }, seed: 13 }, 'http', () => {});
    const split = new Chaos(familyOptions(both, 'http'), 'http', () => {});
    const a: unknown[] = [];
    const b: unknown[] = [];
    for (let i = 0; i < 100; i++) {
      a.push(alone.decide(`POST /v1/x\0k${i % 7}`)?.fault);
      b.push(split.decide(`POST /v1/x\0k${i % 7}`)?.fault);
    }
    expect(b).toEqual(a);
    expect(a.filter((f) => f === '429').length).toBeGreaterThan(20);
  });
});

describe('realtime chaos: close (1011) in the middle of a response', () => {
  let tls: Awaited<ReturnType<typeof makeLocalCertificate>>;
  let fake: FakeRealtime;
  const tape = join(dir, 'openai.tape');
  const geminiTape = join(dir, 'gemini.tape');
  const recorded: Asked[] = [];

  beforeAll(async () => {
    tls = await makeLocalCertificate();
    fake = await startFakeRealtime();
    const proxy = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0, tls });
    try {
      // Two sessions of one connect: the k-th connect gets the k-th.
      recorded.push(await ask(proxy.url, tls.ca, 'first'));
      recorded.push(await ask(proxy.url, tls.ca, 'second'));
    } finally {
      await proxy.close();
    }
    const g = await startProxy({ upstream: fake.url, tape: geminiTape, mode: 'record', port: 0 });
    try {
      const l = await live(g.url);
      l.session.sendClientContent({ turns: [{ role: 'user', parts: [{ text: 'hello there' }] }], turnComplete: true });
      await l.turn;
      l.session.close();
      await l.closed;
    } finally {
      await g.close();
    }
  });
  afterAll(() => fake.close());

  it('the recorded sessions are whole answers with deltas (what the faults cut)', () => {
    expect(recorded.map((r) => r.transcript)).toEqual(['You said: first', 'You said: second']);
    expect(types(recorded[0]!).filter((t) => t.endsWith('.delta')).length).toBeGreaterThan(1);
  });

  it('OpenAIRealtimeWS sees 1011 mid-response; its reconnect gets the whole session; a faulted attempt never uses up a recording', async () => {
    const before = digest(tape);
    const proxy = await startProxy({ tape, mode: 'replay', port: 0, tls, chaos: { faults: { close: 1 }, attempts: 1, seed: 7 }, onWarning: () => {} });
    try {
      const runs: Asked[] = [];
      for (const text of ['first', 'first', 'second', 'second']) runs.push(await ask(proxy.url, tls.ca, text));
      for (const i of [0, 2]) {
        const cut = runs[i]!;
        const whole = recorded[i / 2]!;
        expect(cut.code).toBe(1011);
        expect(cut.reason).toMatch(/tapedeck chaos: close injected \(1011\) in the middle of a response; seed 7/);
        expect(cut.transcript).toBeUndefined();
        // In the middle: the response began (and some of it came), it never completed.
        const t = types(cut);
        expect(t).toContain('response.created');
        expect(t).not.toContain('response.done');
        expect(t).toEqual(types(whole).slice(0, t.length));
        expect(t.length).toBeLessThan(types(whole).length - 1);
      }
      // The reconnect (attempt 2) gets the recording the fault was cut from: the same events.
      expect(runs[1]!.events).toEqual(recorded[0]!.events);
      expect(runs[3]!.events).toEqual(recorded[1]!.events);
      expect(runs[1]!.code).toBe(1000); // the client's own close
      const st = proxy.handler.stats();
      expect(st.faults).toEqual({ close: 2 });
      expect(st.realtime?.replayed).toBe(2);
      expect(st.realtime?.misses).toBe(0);
    } finally {
      await proxy.close();
    }
    expect(digest(tape)).toBe(before);
  });

  it('the same seed closes the same sessions over many connects; another seed others', async () => {
    const before = digest(tape);
    const run = async (seed: number) => {
      const proxy = await startProxy({ tape, mode: 'replay', port: 0, tls, chaos: { faults: { close: 0.5 }, seed }, onWarning: () => {} });
      try {
        const seq: string[] = [];
        for (let i = 0; i < 24; i++) {
          const a = await ask(proxy.url, tls.ca, seq.filter((s) => s !== '1011').length === 0 ? 'first' : 'second');
          seq.push(a.code === 1011 ? '1011' : (a.transcript ?? 'none'));
        }
        return { seq, faults: proxy.handler.stats().faults?.close ?? 0 };
      } finally {
        await proxy.close();
      }
    };
    const a = await run(41);
    const again = await run(41);
    const other = await run(42);
    expect(again.seq).toEqual(a.seq);
    expect(other.seq).not.toEqual(a.seq);
    // Faulted and whole sessions both, counted as injected.
    const closes = a.seq.filter((s) => s === '1011').length;
    expect(closes).toBeGreaterThan(3);
    expect(closes).toBeLessThan(21);
    expect(a.faults).toBe(closes);
    expect(digest(tape)).toBe(before);
  });

  it('a client that sends its frames back to back (session.update, the message, response.create) is cut mid-response, not before it', async () => {
    // Every answer then follows the last client frame: session.updated completes first, and the
    // cut still comes between response.created and response.done.
    const b2b = join(dir, 'back-to-back.tape');
    const burst = async (url: string) => {
      const rt = new OpenAIRealtimeWS({ model: 'gpt-realtime', options: { ca: tls.ca } }, new OpenAI({ apiKey: KEY, baseURL: `${url}/v1` }));
      const events: Event[] = [];
      rt.on('event', (e) => events.push(e as Event));
      rt.on('error', () => {});
      const closed = new Promise<number>((r) => rt.socket.once('close', (code) => r(code)));
      rt.on('response.done', () => rt.close());
      await new Promise<void>((resolve, reject) => {
        rt.socket.once('open', () => resolve());
        rt.socket.once('error', reject);
      });
      rt.send({ type: 'session.update', session: { type: 'realtime', instructions: 'be brief' } });
      rt.send({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'all at once' }] } });
      rt.send({ type: 'response.create' });
      return { code: await closed, types: events.map((e) => e.type as string) };
    };
    const rec = await startProxy({ upstream: fake.url, tape: b2b, mode: 'record', port: 0, tls });
    let whole: { code: number; types: string[] };
    try {
      whole = await burst(rec.url);
    } finally {
      await rec.close();
    }
    expect(whole.types).toContain('response.done');
    const proxy = await startProxy({ tape: b2b, mode: 'replay', port: 0, tls, chaos: { faults: { close: 1 }, attempts: 1, seed: 5 }, onWarning: () => {} });
    try {
      const cut = await burst(proxy.url);
      expect(cut.code).toBe(1011);
      expect(cut.types).toContain('response.created');
      expect(cut.types).not.toContain('response.done');
      expect(cut.types).toEqual(whole.types.slice(0, cut.types.length));
      expect((await burst(proxy.url)).types).toEqual(whole.types);
    } finally {
      await proxy.close();
    }
  });

  it('x-tapedeck-chaos: close forces the fault, none forbids it; neither is a miss', async () => {
    const before = digest(tape);
    const proxy = await startProxy({ tape, mode: 'replay', port: 0, tls, chaos: { faults: { close: 1 }, seed: 3 }, onWarning: () => {} });
    try {
      const spared = await ask(proxy.url, tls.ca, 'first', { 'x-tapedeck-chaos': 'none' });
      expect(spared.transcript).toBe('You said: first');
      expect(spared.code).toBe(1000);
      expect(proxy.handler.stats().faults).toBeUndefined();
    } finally {
      await proxy.close();
    }
    // No chaos configured: the header alone asks for it (replay mode).
    const plain = await startProxy({ tape, mode: 'replay', port: 0, tls, onWarning: () => {} });
    try {
      const forced = await ask(plain.url, tls.ca, 'first', { 'x-tapedeck-chaos': 'close' });
      expect(forced.code).toBe(1011);
      expect(forced.reason).toMatch(/close injected/);
      // The forced fault held the first session: the next connect still gets it.
      expect((await ask(plain.url, tls.ca, 'first')).transcript).toBe('You said: first');
      expect(plain.handler.stats().faults).toEqual({ close: 1 });
    } finally {
      await plain.close();
    }
    expect(digest(tape)).toBe(before);
  });

  it('refused in record mode (E_CHAOS_MODE) unless live; with live, the header never reaches the upstream and the session is recorded whole behind the fault', async () => {
    const rec = join(dir, 'live.tape');
    await expect(startProxy({ upstream: fake.url, tape: rec, mode: 'record', port: 0, tls, chaos: { faults: { close: 1 } } })).rejects.toMatchObject({ code: 'E_CHAOS_MODE' });
    const plain = await startProxy({ upstream: fake.url, tape: rec, mode: 'record', port: 0, tls });
    try {
      await expect(ask(plain.url, tls.ca, 'first', { 'x-tapedeck-chaos': 'close' })).rejects.toThrow(/400/);
    } finally {
      await plain.close();
    }
    const connects = fake.connects.length;
    const warnings: string[] = [];
    // No fault drawn: only the header asks for one.
    const live = await startProxy({ upstream: fake.url, tape: rec, mode: 'record', port: 0, tls, chaos: { faults: {}, live: true, seed: 3 }, onWarning: (m) => warnings.push(m) });
    try {
      const a = await ask(live.url, tls.ca, 'first', { 'x-tapedeck-chaos': 'close' });
      expect(a.code).toBe(1011);
      expect(a.reason).toMatch(/close injected \(1011\) in the middle of a response; seed 3/);
      expect(types(a)).toContain('response.created');
      expect(types(a)).not.toContain('response.done');
      expect(warnings.join('\n')).toMatch(/chaos: first fault injected \(close on GET \/v1\/realtime/);
      expect(fake.connects.length).toBe(connects + 1);
      expect(Object.keys(fake.connects.at(-1)!.headers)).not.toContain('x-tapedeck-chaos');
      expect(live.handler.stats().faults).toEqual({ close: 1 });
      expect(live.handler.stats().realtime?.recorded).toBe(1);
      // The reconnect gets the session recorded behind the fault, whole, from the tape's side:
      // the upstream is not asked again.
      const b = await ask(live.url, tls.ca, 'first');
      expect(b.transcript).toBe('You said: first');
      expect(b.events).toEqual(a.events.concat(b.events.slice(a.events.length)));
      expect(fake.connects.length).toBe(connects + 1);
      // A later session goes live as usual, unfaulted without the header.
      expect((await ask(live.url, tls.ca, 'second')).transcript).toBe('You said: second');
      expect(fake.connects.length).toBe(connects + 2);
      expect(live.handler.stats().faults).toEqual({ close: 1 });
      expect(live.handler.stats().realtime).toMatchObject({ recorded: 2, replayed: 1 });
    } finally {
      await live.close();
    }
    const again = await startProxy({ tape: rec, mode: 'replay', port: 0, tls });
    try {
      // What was recorded is the whole session, never the faulted one's half.
      expect((await ask(again.url, tls.ca, 'first')).transcript).toBe('You said: first');
      expect((await ask(again.url, tls.ca, 'second')).transcript).toBe('You said: second');
    } finally {
      await again.close();
    }
  });

  it('@google/genai live session through tape.serve() with tape.chaos(): the close 1011 with its reason, then the whole session on reconnect', async () => {
    const before = digest(geminiTape);
    const t = openTestTape({ tape: geminiTape, mode: 'replay', env: {} });
    const chaos: ChaosOptions = { faults: { close: 1 }, attempts: 1, seed: 5 };
    t.chaos(chaos);
    const { url } = await t.serve({ tls: false });
    const cut = await live(url);
    cut.session.sendClientContent({ turns: [{ role: 'user', parts: [{ text: 'hello there' }] }], turnComplete: true });
    const closedCut = await cut.closed;
    expect(closedCut.code).toBe(1011);
    expect(closedCut.reason).toMatch(/tapedeck chaos: close injected \(1011\) in the middle of a response; seed 5/);
    expect(cut.messages.some((m) => m.serverContent !== undefined)).toBe(true);
    expect(cut.messages.some((m) => m.serverContent?.turnComplete === true)).toBe(false);
    const whole = await live(url);
    whole.session.sendClientContent({ turns: [{ role: 'user', parts: [{ text: 'hello there' }] }], turnComplete: true });
    await whole.turn;
    expect(whole.messages.length).toBeGreaterThan(cut.messages.length);
    expect(whole.messages.slice(0, cut.messages.length)).toEqual(cut.messages);
    whole.session.close();
    await whole.closed;
    const report = await t.close();
    expect(report.faults).toEqual({ close: 1 });
    expect(t.misses).toHaveLength(0);
    expect(digest(geminiTape)).toBe(before);
  });

  it('tapedeck serve --chaos close:0.5 closes sessions and counts them in its closing line', async () => {
    const before = digest(tape);
    const caFile = join(dir, 'ca.pem');
    writeFileSync(caFile, '');
    const srv = serve(['--tape', tape, '--port', '0', '--tls', '--tls-ca', caFile, '--chaos', 'close:0.5', '--chaos-seed', '41']);
    let closes = 0;
    try {
      const url = await srv.url;
      const ca = readFileSync(caFile, 'utf8');
      for (let i = 0; i < 12; i++) if ((await ask(url, ca, closes === i ? 'first' : 'second')).code === 1011) closes++;
    } finally {
      srv.child.kill('SIGTERM');
      await srv.exited;
    }
    expect(closes).toBeGreaterThan(0);
    expect(srv.stderr()).toMatch(/chaos: first fault injected \(close on GET \/v1\/realtime/);
    expect(srv.stderr()).toMatch(/seed 41/);
    expect(srv.stderr()).toContain(`faults injected: close ${closes}`);
    expect(digest(tape)).toBe(before);
    const bad = serve(['--tape', tape, '--port', '0', '--chaos', 'clos:0.5']);
    expect(await bad.exited).not.toBe(0);
    expect(bad.stderr()).toMatch(/E_CHAOS_SPEC[\s\S]*close/);
  });
});

describe('realtime chaos on sessions recorded live: cut as their replay is cut, recorded whole behind the fault', () => {
  let tls: Awaited<ReturnType<typeof makeLocalCertificate>>;
  let fake: FakeRealtime;
  beforeAll(async () => {
    tls = await makeLocalCertificate();
    fake = await startFakeRealtime();
  });
  afterAll(() => fake.close());

  it('record mode (startProxy, chaos live): the first connect is closed 1011 mid-response, the reconnect replays the session recorded behind it; a replay cuts the same place', async () => {
    const tape = join(dir, 'record-live.tape');
    const chaos = { faults: { close: 1 }, attempts: 1, seed: 7, live: true };
    const warnings: string[] = [];
    const rec = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0, tls, chaos, onWarning: (m) => warnings.push(m) });
    let cut: Asked;
    let whole: Asked;
    const connects = fake.connects.length;
    try {
      cut = await ask(rec.url, tls.ca, 'first');
      expect(cut.code).toBe(1011);
      expect(cut.reason).toBe('tapedeck chaos: close injected (1011) in the middle of a response; seed 7');
      expect(cut.transcript).toBeUndefined();
      const t = types(cut);
      expect(t).toContain('response.created');
      expect(t).not.toContain('response.done');
      whole = await ask(rec.url, tls.ca, 'first');
      expect(whole.transcript).toBe('You said: first');
      expect(whole.code).toBe(1000);
      // In the middle of the response the reconnect gets whole: the events up to the cut are the same ones.
      expect(cut.events).toEqual(whole.events.slice(0, cut.events.length));
      expect(cut.events.length).toBeLessThan(whole.events.length - 1);
      // The API was asked once: the reconnect replayed the session stored behind the fault.
      expect(fake.connects.length).toBe(connects + 1);
      const st = rec.handler.stats();
      expect(st.faults).toEqual({ close: 1 });
      expect(st.realtime).toMatchObject({ recorded: 1, replayed: 1, misses: 0 });
      expect(warnings.join('\n')).toMatch(/chaos: first fault injected \(close on GET \/v1\/realtime\?model=gpt-realtime\) with seed 7/);
    } finally {
      await rec.close();
    }
    // The tape has the session whole, ended by the proxy: a replay without chaos gives all of it
    // and leaves the socket for the client to close.
    const plain = await startProxy({ tape, mode: 'replay', port: 0, tls });
    try {
      const again = await ask(plain.url, tls.ca, 'first');
      expect(again.events).toEqual(whole.events);
      expect(again.code).toBe(1000);
    } finally {
      await plain.close();
    }
    // CI: the same chaos on the replay cuts at the very place the recording run did.
    const replay = await startProxy({ tape, mode: 'replay', port: 0, tls, chaos: { ...chaos, live: false }, onWarning: () => {} });
    try {
      const c = await ask(replay.url, tls.ca, 'first');
      expect(c.code).toBe(1011);
      expect(c.reason).toBe(cut.reason);
      expect(c.events).toEqual(cut.events);
      expect((await ask(replay.url, tls.ca, 'first')).events).toEqual(whole.events);
    } finally {
      await replay.close();
    }
  });

  it('a client that sends its frames back to back is cut where the replay of its session is cut', async () => {
    const tape = join(dir, 'record-b2b.tape');
    const burst = async (url: string) => {
      const rt = new OpenAIRealtimeWS({ model: 'gpt-realtime', options: { ca: tls.ca } }, new OpenAI({ apiKey: KEY, baseURL: `${url}/v1` }));
      const events: Event[] = [];
      rt.on('event', (e) => events.push(e as Event));
      rt.on('error', () => {});
      const closed = new Promise<number>((r) => rt.socket.once('close', (code) => r(code)));
      rt.on('response.done', () => rt.close());
      await new Promise<void>((resolve, reject) => {
        rt.socket.once('open', () => resolve());
        rt.socket.once('error', reject);
      });
      rt.send({ type: 'session.update', session: { type: 'realtime', instructions: 'be brief' } });
      rt.send({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'all at once' }] } });
      rt.send({ type: 'response.create' });
      return { code: await closed, events };
    };
    const chaos = { faults: { close: 1 }, attempts: 1, seed: 5, live: true };
    const rec = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0, tls, chaos, onWarning: () => {} });
    let cut: { code: number; events: Event[] };
    try {
      cut = await burst(rec.url);
      const whole = await burst(rec.url);
      expect(cut.code).toBe(1011);
      expect(whole.code).toBe(1000);
      expect(cut.events.map((e) => e.type)).toContain('response.created');
      expect(cut.events.map((e) => e.type)).not.toContain('response.done');
      expect(cut.events).toEqual(whole.events.slice(0, cut.events.length));
    } finally {
      await rec.close();
    }
    const replay = await startProxy({ tape, mode: 'replay', port: 0, tls, chaos: { ...chaos, live: false }, onWarning: () => {} });
    try {
      expect(await burst(replay.url)).toEqual(cut);
    } finally {
      await replay.close();
    }
  });

  it('a client that waits for the last event of a step before its next frame is not kept waiting by the cut (the upstream went quiet)', async () => {
    const tape = join(dir, 'record-waits.tape');
    // The message, then response.create only once the server said the item is done: the step of
    // the message has two events, the second of which the cut would hold for a response.
    const stepwise = async (url: string) => {
      const rt = new OpenAIRealtimeWS({ model: 'gpt-realtime', options: { ca: tls.ca } }, new OpenAI({ apiKey: KEY, baseURL: `${url}/v1` }));
      const events: Event[] = [];
      rt.on('event', (e) => events.push(e as Event));
      rt.on('error', () => {});
      const closed = new Promise<number>((r) => rt.socket.once('close', (code) => r(code)));
      rt.on('response.done', () => rt.close());
      rt.on('conversation.item.done', () => rt.send({ type: 'response.create' }));
      await new Promise<void>((resolve, reject) => {
        rt.socket.once('open', () => resolve());
        rt.socket.once('error', reject);
      });
      rt.send({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'step by step' }] } });
      return { code: await closed, events };
    };
    const chaos = { faults: { close: 1 }, attempts: 1, seed: 4, live: true };
    const rec = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0, tls, chaos, onWarning: () => {} });
    let cut: { code: number; events: Event[] };
    try {
      cut = await stepwise(rec.url);
      expect(cut.code).toBe(1011);
      const t = cut.events.map((e) => e.type);
      expect(t).toContain('conversation.item.done');
      expect(t).toContain('response.created');
      expect(t).not.toContain('response.done');
      const whole = await stepwise(rec.url);
      expect(whole.events.map((e) => e.type)).toContain('response.done');
      expect(cut.events).toEqual(whole.events.slice(0, cut.events.length));
    } finally {
      await rec.close();
    }
    const replay = await startProxy({ tape, mode: 'replay', port: 0, tls, chaos: { ...chaos, live: false }, onWarning: () => {} });
    try {
      expect(await stepwise(replay.url)).toEqual(cut);
    } finally {
      await replay.close();
    }
  });

  it('update mode, @google/genai: a connect the tape has no session of is cut mid-answer and recorded; the reconnect replays it', async () => {
    const tape = join(dir, 'update-gemini.tape');
    const chaos = { faults: { close: 1 }, attempts: 1, seed: 9, live: true };
    const connects = fake.connects.length;
    const up = await startProxy({ upstream: fake.url, tape, mode: 'update', port: 0, chaos, onWarning: () => {} });
    let cutMessages: Record<string, any>[];
    try {
      const cut = await live(up.url);
      cut.session.sendClientContent({ turns: [{ role: 'user', parts: [{ text: 'hello there' }] }], turnComplete: true });
      // A session that is not cut completes its turn and stays open: that is the failure, not a wait.
      const closed = await Promise.race([cut.closed, cut.turn.then(() => 'the turn completed')]);
      expect(closed).toEqual({ code: 1011, reason: 'tapedeck chaos: close injected (1011) in the middle of a response; seed 9' });
      cutMessages = cut.messages;
      expect(cutMessages.some((m) => m.serverContent?.modelTurn !== undefined)).toBe(true);
      expect(cutMessages.some((m) => m.serverContent?.turnComplete === true)).toBe(false);
      const whole = await live(up.url);
      whole.session.sendClientContent({ turns: [{ role: 'user', parts: [{ text: 'hello there' }] }], turnComplete: true });
      await whole.turn;
      expect(whole.messages.slice(0, cutMessages.length)).toEqual(cutMessages);
      expect(whole.messages.length).toBeGreaterThan(cutMessages.length + 1);
      whole.session.close();
      await whole.closed;
      expect(fake.connects.length).toBe(connects + 1);
      expect(up.handler.stats().faults).toEqual({ close: 1 });
      expect(up.handler.stats().realtime).toMatchObject({ recorded: 1, replayed: 1 });
    } finally {
      await up.close();
    }
    const replay = await startProxy({ tape, mode: 'replay', port: 0, chaos: { ...chaos, live: false }, onWarning: () => {} });
    try {
      const again = await live(replay.url);
      again.session.sendClientContent({ turns: [{ role: 'user', parts: [{ text: 'hello there' }] }], turnComplete: true });
      expect((await again.closed).code).toBe(1011);
      expect(again.messages).toEqual(cutMessages);
    } finally {
      await replay.close();
    }
  });

  it('a session that ends before its first response completes is not faulted, and its fault not counted', async () => {
    const tape = join(dir, 'record-no-response.tape');
    const rec = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0, tls, chaos: { faults: { close: 1 }, live: true, seed: 2 }, onWarning: () => {} });
    try {
      const rt = new OpenAIRealtimeWS({ model: 'gpt-realtime', options: { ca: tls.ca } }, new OpenAI({ apiKey: KEY, baseURL: `${rec.url}/v1` }));
      const created = new Promise<void>((r) => rt.on('session.created', () => r()));
      const closed = new Promise<number>((r) => rt.socket.once('close', (code) => r(code)));
      await created;
      rt.close();
      expect(await closed).toBe(1000);
      // The proxy settles the session once both sides closed.
      await new Promise((r) => setTimeout(r, 100));
      expect(rec.handler.stats().faults).toBeUndefined();
    } finally {
      await rec.close();
    }
  });
});

interface Live {
  session: Awaited<ReturnType<GoogleGenAI['live']['connect']>>;
  messages: Record<string, any>[];
  turn: Promise<void>;
  closed: Promise<{ code: number; reason: string }>;
}

/** A Gemini Live session through `url` (http: base URL; the SDK speaks ws: to it). */
async function live(url: string): Promise<Live> {
  const ai = new GoogleGenAI({ apiKey: 'AIza' + 'SyChaosLive0123456789abcdefghijk', httpOptions: { baseUrl: url } });
  const messages: Record<string, any>[] = [];
  let closedWith: (c: { code: number; reason: string }) => void = () => {};
  const closed = new Promise<{ code: number; reason: string }>((r) => (closedWith = r));
  let turned: () => void = () => {};
  const turn = new Promise<void>((r) => (turned = r));
  const session = await ai.live.connect({
    model: 'gemini-live-2.5-flash-preview',
    config: { responseModalities: [Modality.AUDIO] },
    callbacks: {
      onmessage: (m: LiveServerMessage) => {
        messages.push(JSON.parse(JSON.stringify(m)) as Record<string, any>);
        if (m.serverContent?.turnComplete) turned();
      },
      onerror: () => {},
      onclose: (e: { code: number; reason: string }) => closedWith({ code: e.code, reason: e.reason }),
    },
  });
  return { session, messages, turn, closed };
}
