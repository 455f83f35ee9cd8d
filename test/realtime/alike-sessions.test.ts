// Realtime sessions that start with the same frames (every session of one voice agent sends the
// same `session.update` or `setup`) and differ later (the user says "Alpha" or "Beta"). Before,
// the k-th connect got the k-th such session for good at its first frame: a new session the tape
// does not have ("Gamma") took Alpha's recording and missed at its second frame, which used the
// recording up, so the unchanged Alpha then got Beta's and missed too, told `"Alpha" vs "Beta"`
// and to re-record (which does not help); Beta connecting before Alpha (shuffled or parallel
// tests) made both miss. Now a session that misses gives its recording back, and one whose frame
// differs from its session goes on with a session not replayed yet that has the client's frames
// so far and sent the same server frames (up to the server's ids and times); two sessions
// replaying at the same time trade their recordings when that is what fits both. A miss names
// a session that does have the client's frames but cannot take over. The real clients (openai's
// OpenAIRealtimeWS over TLS, @google/genai's ai.live.connect) against the loopback fake servers.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GoogleGenAI, Modality, type LiveServerMessage, type Session } from '@google/genai';
import OpenAI from 'openai';
import { OpenAIRealtimeWS } from 'openai/realtime/ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxy } from '../../src/proxy/server.ts';
import { makeLocalCertificate } from '../../src/proxy/tls.ts';
import { pcmFor, startFakeRealtime, type FakeRealtimeOptions } from './fake-realtime.ts';
import { until } from './until-event.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-realtime-alike-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let tls: Awaited<ReturnType<typeof makeLocalCertificate>>;
beforeAll(async () => {
  tls = await makeLocalCertificate();
});

type Event = Record<string, any>;

describe('OpenAI Realtime sessions that start alike and differ later', () => {
  interface Client {
    rt: OpenAIRealtimeWS;
    events: Event[];
    errors: string[];
    closed: Promise<number>;
  }

  /** Connects OpenAIRealtimeWS through the proxy and sends the agent's one `session.update`; resolves once it is confirmed (or the socket closed). */
  async function start(url: string): Promise<Client> {
    const rt = new OpenAIRealtimeWS({ model: 'gpt-realtime', options: { ca: tls.ca } }, new OpenAI({ apiKey: 'sk-test-fixture-0123456789abcdef', baseURL: `${url}/v1` }));
    const c: Client = { rt, events: [], errors: [], closed: new Promise<number>((r) => rt.socket.once('close', (code) => r(code))) };
    rt.on('event', (e) => c.events.push(e as Event));
    rt.on('error', (e) => c.errors.push(e.message));
    await new Promise<void>((r) => {
      rt.socket.once('open', () => r());
      void c.closed.then(() => r());
    });
    rt.send({ type: 'session.update', session: { type: 'realtime', instructions: 'You are the booking agent.' } });
    await until(c, (e) => e.type === 'session.updated');
    return c;
  }

  /** The user says `text`; the answer's transcript (undefined when the session ended first) and the errors. */
  async function say(c: Client, text: string): Promise<{ transcript?: string; errors: string[] }> {
    const n = c.events.length;
    c.rt.send({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] } });
    c.rt.send({ type: 'response.create' });
    const done = await until(c, (e) => e.type === 'response.done', n);
    c.rt.close();
    await c.closed;
    return { transcript: done?.response?.output?.[0]?.content?.[0]?.transcript as string | undefined, errors: c.errors };
  }

  const session = async (url: string, text: string) => say(await start(url), text);

  /** Records the sessions one after the other on a new tape, the fake's options set for each; returns its path. */
  async function record(name: string, sessions: [text: string, server?: FakeRealtimeOptions][]): Promise<string> {
    const tape = join(dir, `${name}.tape`);
    const options: FakeRealtimeOptions = {};
    const fake = await startFakeRealtime(options);
    const proxy = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0, tls });
    try {
      for (const [text, server] of sessions) {
        options.defaults = server?.defaults;
        expect(await session(proxy.url, text)).toEqual({ transcript: `You said: ${text}`, errors: [] });
      }
    } finally {
      await proxy.close();
      await fake.close();
    }
    return tape;
  }

  let tape: string;
  beforeAll(async () => {
    tape = await record('alpha-beta', [['Alpha'], ['Beta']]);
  });

  const replay = (strictOrder = false) => startProxy({ tape, mode: 'replay', port: 0, tls, strictOrder, onWarning: () => {} });

  for (const strictOrder of [false, true]) {
    it(`a new session that misses leaves the recording it was given to the next connect${strictOrder ? ' (--strict-order)' : ''}`, async () => {
      const proxy = await replay(strictOrder);
      try {
        const gamma = await session(proxy.url, 'Gamma');
        expect(gamma.errors).toHaveLength(1);
        expect(gamma.errors[0]).toMatch(/^tapedeck miss: client frame 2 \(conversation\.item\.create\): item\.content\[0\]\.text differs, "Gamma" vs "Alpha" in the recording; re-record/);
        expect(await session(proxy.url, 'Alpha')).toEqual({ transcript: 'You said: Alpha', errors: [] });
        expect(await session(proxy.url, 'Beta')).toEqual({ transcript: 'You said: Beta', errors: [] });
        expect(proxy.handler.stats().realtime).toMatchObject({ replayed: 2, misses: 1 });
      } finally {
        await proxy.close();
      }
    });
  }

  for (const strictOrder of [false, true]) {
    it(`Beta then Alpha, one after the other: each replays its own recording${strictOrder ? ' (--strict-order)' : ''}`, async () => {
      const proxy = await replay(strictOrder);
      try {
        expect(await session(proxy.url, 'Beta')).toEqual({ transcript: 'You said: Beta', errors: [] });
        expect(await session(proxy.url, 'Alpha')).toEqual({ transcript: 'You said: Alpha', errors: [] });
        expect(proxy.handler.stats().realtime).toMatchObject({ replayed: 2, misses: 0 });
      } finally {
        await proxy.close();
      }
    });
  }

  it('Beta and Alpha at the same time (Beta connected first): they trade recordings and both replay', async () => {
    const proxy = await replay(true);
    try {
      const beta = await start(proxy.url);
      const alpha = await start(proxy.url);
      const [b, a] = await Promise.all([say(beta, 'Beta'), say(alpha, 'Alpha')]);
      expect(b).toEqual({ transcript: 'You said: Beta', errors: [] });
      expect(a).toEqual({ transcript: 'You said: Alpha', errors: [] });
      // One session id per client, from its session.created to its last frame.
      for (const c of [beta, alpha]) expect(new Set(c.events.filter((e) => e.session?.id).map((e) => e.session.id))).toHaveProperty('size', 1);
    } finally {
      await proxy.close();
    }
  });

  it('Alpha twice: the second replays Alpha again, and Beta still gets its own', async () => {
    const proxy = await replay();
    try {
      expect(await session(proxy.url, 'Alpha')).toEqual({ transcript: 'You said: Alpha', errors: [] });
      expect(await session(proxy.url, 'Alpha')).toEqual({ transcript: 'You said: Alpha', errors: [] });
      expect(await session(proxy.url, 'Beta')).toEqual({ transcript: 'You said: Beta', errors: [] });
    } finally {
      await proxy.close();
    }
  });

  it('with --strict-order, Alpha twice: the miss names the session replayed already, not re-record', async () => {
    const proxy = await replay(true);
    try {
      expect(await session(proxy.url, 'Alpha')).toEqual({ transcript: 'You said: Alpha', errors: [] });
      const again = await session(proxy.url, 'Alpha');
      expect(again.errors).toHaveLength(1);
      expect(again.errors[0]).toMatch(/"Alpha" vs "Beta" in the recording; session 1 of GET \/v1\/realtime\?model=gpt-realtime was recorded with the client's 2 frames so far; it was replayed already \(with --strict-order each recorded session replays once\) code=tapedeck_miss/);
      // The miss gave Beta's recording back.
      expect(await session(proxy.url, 'Beta')).toEqual({ transcript: 'You said: Beta', errors: [] });
    } finally {
      await proxy.close();
    }
  });

  it("a session the server answered otherwise before the frames differ cannot take over: the miss names it", async () => {
    // Beta was recorded after the account's defaults changed: its session.updated differs.
    const otherwise = await record('answered-otherwise', [['Alpha'], ['Beta', { defaults: { tracing: 'auto' } }]]);
    const proxy = await startProxy({ tape: otherwise, mode: 'replay', port: 0, tls, onWarning: () => {} });
    try {
      const beta = await session(proxy.url, 'Beta');
      expect(beta.errors).toHaveLength(1);
      expect(beta.errors[0]).toMatch(/"Beta" vs "Alpha" in the recording; session 2 of GET \/v1\/realtime\?model=gpt-realtime was recorded with the client's 2 frames so far, later in connect order, but its server frames before them differ from the ones this connect was sent \(beyond ids and times\): connect the sessions in the order recorded code=tapedeck_miss/);
      expect(await session(proxy.url, 'Alpha')).toEqual({ transcript: 'You said: Alpha', errors: [] });
      expect(await session(proxy.url, 'Beta')).toEqual({ transcript: 'You said: Beta', errors: [] });
    } finally {
      await proxy.close();
    }
  });

  it('sessions that differ after a first response: the ids the client saw and echoed stay its own after the switch', async () => {
    /** Says "hello", then `text` as the item after the assistant's answer (previous_item_id: the answer's item), then updates the session. */
    const twoTurns = async (url: string, text: string) => {
      const c = await start(url);
      let n = c.events.length;
      c.rt.send({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hello' }] } });
      c.rt.send({ type: 'response.create' });
      const first = await until(c, (e) => e.type === 'response.done', n);
      const answer = first?.response?.output?.[0]?.id as string | undefined;
      n = c.events.length;
      c.rt.send({ type: 'conversation.item.create', previous_item_id: answer, item: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] } });
      c.rt.send({ type: 'response.create' });
      const added = await until(c, (e) => e.type === 'conversation.item.added', n);
      const done = await until(c, (e) => e.type === 'response.done', n);
      // The session again, with its id (the server's, sent at connect): named as the client saw it.
      n = c.events.length;
      c.rt.send({ type: 'session.update', session: { type: 'realtime', instructions: 'You are the booking agent.' } });
      await until(c, (e) => e.type === 'session.updated', n);
      c.rt.close();
      await c.closed;
      return { answer, echoed: added?.previous_item_id as string | undefined, transcript: done?.response?.output?.[0]?.content?.[0]?.transcript as string | undefined, errors: c.errors, events: c.events };
    };
    const tape = join(dir, 'two-turns.tape');
    const fake = await startFakeRealtime();
    const rec = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0, tls });
    try {
      for (const text of ['Alpha', 'Beta']) expect(await twoTurns(rec.url, text)).toMatchObject({ transcript: `You said: ${text}`, errors: [] });
    } finally {
      await rec.close();
      await fake.close();
    }
    const proxy = await startProxy({ tape, mode: 'replay', port: 0, tls, strictOrder: true, onWarning: () => {} });
    try {
      // Beta is given Alpha's session (the first that starts so), which it follows up to its
      // fourth frame, then goes on with Beta's: the answer's item id it echoes is the one it saw.
      const beta = await twoTurns(proxy.url, 'Beta');
      expect(beta).toMatchObject({ transcript: 'You said: Beta', errors: [] });
      expect(beta.answer).toMatch(/^item_/);
      expect(beta.echoed).toBe(beta.answer);
      // Ids sent before the switch (the session's, the first response's) name the same in frames after it.
      expect(new Set(beta.events.filter((e) => e.session?.id).map((e) => e.session.id))).toHaveProperty('size', 1);
      expect(await twoTurns(proxy.url, 'Alpha')).toMatchObject({ transcript: 'You said: Alpha', errors: [] });
    } finally {
      await proxy.close();
    }
  });
});

describe('Gemini Live sessions that start alike and differ later', () => {
  const MODEL = 'gemini-live-2.5-flash-preview';

  interface Live {
    session: Session;
    messages: Record<string, any>[];
    closed: Promise<{ code: number; reason: string }>;
  }

  /** ai.live.connect through the proxy (the SDK sends `setup`); resolves once `setupComplete` came (or the socket closed). */
  async function start(url: string): Promise<Live> {
    const ai = new GoogleGenAI({ apiKey: 'AIza' + 'SyFAKE-GeminiKey_0123456789abcdefghij', httpOptions: { baseUrl: url } });
    const messages: Record<string, any>[] = [];
    let closedWith: (c: { code: number; reason: string }) => void = () => {};
    const closed = new Promise<{ code: number; reason: string }>((r) => (closedWith = r));
    const session = await ai.live.connect({
      model: MODEL,
      config: { responseModalities: [Modality.TEXT], systemInstruction: 'You are the booking agent.' },
      callbacks: {
        onmessage: (m: LiveServerMessage) => messages.push(JSON.parse(JSON.stringify(m)) as Record<string, any>),
        onerror: () => {},
        onclose: (e: { code: number; reason: string }) => closedWith({ code: e.code, reason: e.reason }),
      },
    });
    const l = { session, messages, closed };
    await waitFor(l, (m) => m.setupComplete !== undefined);
    return l;
  }

  function waitFor(l: Live, pred: (m: Record<string, any>) => boolean, from = 0): Promise<Record<string, any> | undefined> {
    return until({ events: l.messages, closed: l.closed.then((c) => c.code) }, pred, from);
  }

  /** The user says `text`: the model's text, and the close when the proxy closed the session (a miss). */
  async function say(l: Live, text: string): Promise<{ text: string; close?: { code: number; reason: string } }> {
    const n = l.messages.length;
    l.session.sendClientContent({ turns: [{ role: 'user', parts: [{ text }] }], turnComplete: true });
    const done = await waitFor(l, (m) => m.serverContent?.turnComplete === true, n);
    const said = l.messages.slice(n).map((m) => m.serverContent?.modelTurn?.parts?.[0]?.text ?? '').join('');
    if (!done) return { text: said, close: await l.closed };
    l.session.close();
    await l.closed;
    return { text: said };
  }

  const session = async (url: string, text: string) => say(await start(url), text);

  let tape: string;
  beforeAll(async () => {
    tape = join(dir, 'live-alpha-beta.tape');
    const fake = await startFakeRealtime();
    const proxy = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0 });
    try {
      expect(await session(proxy.url, 'Alpha')).toEqual({ text: 'You said: Alpha' });
      expect(await session(proxy.url, 'Beta')).toEqual({ text: 'You said: Beta' });
    } finally {
      await proxy.close();
      await fake.close();
    }
  });

  const replay = (strictOrder = false) => startProxy({ tape, mode: 'replay', port: 0, strictOrder, onWarning: () => {} });

  for (const strictOrder of [false, true]) {
    it(`a new session that misses leaves the recording it was given to the next connect${strictOrder ? ' (--strict-order)' : ''}`, async () => {
      const proxy = await replay(strictOrder);
      try {
        const gamma = await session(proxy.url, 'Gamma');
        expect(gamma.close?.code).toBe(1008);
        expect(gamma.close?.reason).toMatch(/^tapedeck miss: client frame 2 \(clientContent\): clientContent\.turns\[0\]\.parts\[0\]\.text differs, "Gamma" vs "Alpha"/);
        expect(await session(proxy.url, 'Alpha')).toEqual({ text: 'You said: Alpha' });
        expect(await session(proxy.url, 'Beta')).toEqual({ text: 'You said: Beta' });
        expect(proxy.handler.stats().realtime).toMatchObject({ replayed: 2, misses: 1 });
      } finally {
        await proxy.close();
      }
    });
  }

  for (const strictOrder of [false, true]) {
    it(`Beta then Alpha, one after the other: each replays its own recording${strictOrder ? ' (--strict-order)' : ''}`, async () => {
      const proxy = await replay(strictOrder);
      try {
        expect(await session(proxy.url, 'Beta')).toEqual({ text: 'You said: Beta' });
        expect(await session(proxy.url, 'Alpha')).toEqual({ text: 'You said: Alpha' });
        expect(proxy.handler.stats().realtime).toMatchObject({ replayed: 2, misses: 0 });
      } finally {
        await proxy.close();
      }
    });
  }

  it('Beta and Alpha at the same time (Beta connected first): they trade recordings and both replay', async () => {
    const proxy = await replay(true);
    try {
      const beta = await start(proxy.url);
      const alpha = await start(proxy.url);
      const [b, a] = await Promise.all([say(beta, 'Beta'), say(alpha, 'Alpha')]);
      expect(b).toEqual({ text: 'You said: Beta' });
      expect(a).toEqual({ text: 'You said: Alpha' });
    } finally {
      await proxy.close();
    }
  });

  it('voice sessions whose audio differs after its first half: the one given the other recording goes on with its own mid-audio', async () => {
    const speech = (rest: number) => Buffer.concat([pcmFor('Book a table for', 8000), pcmFor(`at ${rest}`, rest)]);
    const speak = async (url: string, rest: number, chunk: number) => {
      const l = await start(url);
      const n = l.messages.length;
      const audio = speech(rest);
      for (let i = 0; i < audio.length; i += chunk) l.session.sendRealtimeInput({ audio: { data: audio.subarray(i, i + chunk).toString('base64'), mimeType: 'audio/pcm;rate=16000' } });
      l.session.sendRealtimeInput({ audioStreamEnd: true });
      const done = await waitFor(l, (m) => m.serverContent?.turnComplete === true, n);
      const said = l.messages.slice(n).map((m) => m.serverContent?.modelTurn?.parts?.[0]?.text ?? '').join('');
      if (!done) return { text: said, close: await l.closed };
      l.session.close();
      await l.closed;
      return { text: said };
    };
    const voice = join(dir, 'live-voice.tape');
    const fake = await startFakeRealtime();
    const rec = await startProxy({ upstream: fake.url, tape: voice, mode: 'record', port: 0 });
    try {
      expect(await speak(rec.url, 8000, 3200)).toEqual({ text: 'You said: audio of 16000 bytes' });
      expect(await speak(rec.url, 9600, 3200)).toEqual({ text: 'You said: audio of 17600 bytes' });
    } finally {
      await rec.close();
      await fake.close();
    }
    const proxy = await startProxy({ tape: voice, mode: 'replay', port: 0, strictOrder: true, onWarning: () => {} });
    try {
      // Chunks of 3000 bytes: the audio differs from the first recording at byte 8000, inside the third chunk.
      expect(await speak(proxy.url, 9600, 3000)).toEqual({ text: 'You said: audio of 17600 bytes' });
      expect(await speak(proxy.url, 8000, 2000)).toEqual({ text: 'You said: audio of 16000 bytes' });
    } finally {
      await proxy.close();
    }
  });
});
