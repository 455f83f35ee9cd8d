// OpenAI Realtime end to end with the real `openai` package: OpenAIRealtimeWS through the proxy
// served over TLS (its CA trusted through the client's `{ ca }` option), against a loopback fake
// of the Realtime API that speaks its events over a real WebSocket. Record a session (text, audio
// in chunks with server VAD, a function call and its result, an interruption, a server error),
// stop the fake, replay it with a different chunking of the same audio and get the same events in
// the same order; a changed client event is the SDK's own error naming what differs; two sessions
// replay in order; no credential reaches the tape; a proxy killed with -9 mid-session keeps every
// response its client saw complete.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI, { AzureOpenAI } from 'openai';
import { OpenAIRealtimeWS } from 'openai/realtime/ws';
import { WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxy, type ProxyServer } from '../../src/proxy/server.ts';
import { makeLocalCertificate } from '../../src/proxy/tls.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { isRealtimeRecord } from '../../src/store/records.ts';
import { serve } from '../proxy/serve-cli.ts';
import { pcmFor, startFakeRealtime, type FakeRealtime } from './fake-realtime.ts';
import { until } from './until-event.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-realtime-openai-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const KEY = 'sk-proj-' + 'R3altimeT3stKey0123456789abcdefXYZ';
const EPHEMERAL = 'ek_' + '68a1b2c3d4e5f60718293a4b5c6d7e8f';
let tls: Awaited<ReturnType<typeof makeLocalCertificate>>;
beforeAll(async () => {
  tls = await makeLocalCertificate();
});

type Event = Record<string, any>;

interface Script {
  /** Chunk size of the appended audio (bytes). */
  chunk?: number;
  /** The first user message. */
  hello?: string;
  apiKey?: string;
}

/** Opens OpenAIRealtimeWS through the proxy and resolves once it is open. */
async function connect(url: string, apiKey = KEY, ca = tls.ca): Promise<{ rt: OpenAIRealtimeWS; events: Event[]; errors: Error[]; closed: Promise<number> }> {
  const client = new OpenAI({ apiKey, baseURL: `${url}/v1` });
  const rt = new OpenAIRealtimeWS({ model: 'gpt-realtime', options: { ca } }, client);
  const events: Event[] = [];
  const errors: Error[] = [];
  rt.on('event', (e) => events.push(e as Event));
  rt.on('error', (e) => errors.push(e));
  const closed = new Promise<number>((r) => rt.socket.once('close', (code) => r(code)));
  await new Promise<void>((resolve, reject) => {
    rt.socket.once('open', () => resolve());
    rt.socket.once('error', reject);
  });
  return { rt, events, errors, closed };
}


const done = (e: Event) => e.type === 'response.done';

/** A voice agent's session: every kind of event the Realtime API has. */
async function agentSession(url: string, script: Script = {}) {
  const s = await connect(url, script.apiKey);
  const { rt } = s;
  await until(s, (e) => e.type === 'session.created');
  rt.send({ type: 'session.update', event_id: `evt_${randomBytes(4).toString('hex')}`, session: { type: 'realtime', instructions: 'Be brief.', tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }] } });
  await until(s, (e) => e.type === 'session.updated');
  // Text in, audio and transcript out. The item id is the client's own, new every run.
  let n = s.events.length;
  const itemId = `msg_${randomBytes(6).toString('hex')}`;
  rt.send({ type: 'conversation.item.create', event_id: `evt_${randomBytes(4).toString('hex')}`, item: { id: itemId, type: 'message', role: 'user', content: [{ type: 'input_text', text: script.hello ?? 'hello there' }] } });
  rt.send({ type: 'response.create' });
  await until(s, done, n);
  // Audio in, in chunks; server VAD speaks up while it arrives.
  n = s.events.length;
  const speech = pcmFor('what the user said', 24000);
  const chunk = script.chunk ?? 4096;
  for (let i = 0; i < speech.length; i += chunk) rt.send({ type: 'input_audio_buffer.append', audio: speech.subarray(i, i + chunk).toString('base64') });
  rt.send({ type: 'input_audio_buffer.commit' });
  rt.send({ type: 'response.create' });
  await until(s, done, n);
  // A function call and its result.
  n = s.events.length;
  rt.send({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'what is the weather in Paris?' }] } });
  rt.send({ type: 'response.create' });
  const call = await until(s, done, n);
  const callId = call?.response?.output?.[0]?.call_id as string;
  n = s.events.length;
  rt.send({ type: 'conversation.item.create', item: { type: 'function_call_output', call_id: callId, output: '{"temp_c":21}' } });
  rt.send({ type: 'response.create' });
  await until(s, done, n);
  // An interruption: the listener talks over the answer.
  n = s.events.length;
  rt.send({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'tell me a long story' }] } });
  rt.send({ type: 'response.create' });
  const first = await until(s, (e) => e.type === 'response.output_audio.delta', n);
  rt.send({ type: 'response.cancel' });
  rt.send({ type: 'conversation.item.truncate', item_id: first?.item_id, content_index: 0, audio_end_ms: 40 + Math.floor(Math.random() * 50) });
  await until(s, done, n);
  await until(s, (e) => e.type === 'conversation.item.truncated', n);
  // A server error.
  n = s.events.length;
  rt.send({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'please fail' }] } });
  rt.send({ type: 'response.create' });
  await until(s, done, n);
  rt.close();
  await s.closed;
  return { ...s, itemId };
}

/** Events with every occurrence of one id replaced by another (as JSON text). */
const withId = (events: Event[], from: string, to: string): Event[] => JSON.parse(JSON.stringify(events).split(`"${from}"`).join(`"${to}"`)) as Event[];

const tapeText = (file: string) => readFileSync(file).toString('latin1');

describe('OpenAI Realtime through tapedeck serve --tls (OpenAIRealtimeWS)', () => {
  let fake: FakeRealtime;
  const tape = join(dir, 'agent.tape');
  let recorded: Awaited<ReturnType<typeof agentSession>>;

  beforeAll(async () => {
    fake = await startFakeRealtime();
    const proxy = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0, tls });
    try {
      expect(proxy.url.startsWith('https://')).toBe(true);
      recorded = await agentSession(proxy.url, { chunk: 4096 });
    } finally {
      await proxy.close();
      await fake.close();
    }
  });

  it('records every kind of event live, and the server error reaches the SDK as its error', () => {
    const types = recorded.events.map((e) => e.type);
    for (const t of ['session.created', 'session.updated', 'response.output_audio.delta', 'response.output_audio_transcript.delta', 'response.output_text.delta', 'input_audio_buffer.speech_started', 'input_audio_buffer.committed', 'response.function_call_arguments.delta', 'conversation.item.truncated', 'error', 'response.done']) {
      expect(types).toContain(t);
    }
    expect(recorded.errors.map((e) => e.message).join('\n')).toMatch(/server had an error/);
    expect(fake.received.length).toBeGreaterThan(10);
  });

  it('replays the session with the upstream gone: the same events in the same order, audio chunked differently', async () => {
    const proxy = await startProxy({ tape, mode: 'replay', port: 0, tls });
    try {
      const replayed = await agentSession(proxy.url, { chunk: 1000 });
      // The item id is the client's own, new every run: the server echoes this client's, as the
      // API would; every other event is the recorded one.
      expect(replayed.itemId).not.toBe(recorded.itemId);
      const added = replayed.events.filter((e) => e.type === 'conversation.item.added' && e.item?.role === 'user');
      expect(added[0]!.item.id).toBe(replayed.itemId);
      expect(JSON.stringify(replayed.events)).not.toContain(recorded.itemId);
      expect(replayed.events).toEqual(withId(recorded.events, recorded.itemId, replayed.itemId));
      expect(replayed.errors.map((e) => e.message)).toEqual(recorded.errors.map((e) => e.message));
      const st = proxy.handler.stats();
      expect(st.realtime?.replayed).toBe(1);
      expect(st.realtime?.misses).toBe(0);
    } finally {
      await proxy.close();
    }
  });

  it('a changed client event is the SDK error naming what differs and how to re-record, then a close', async () => {
    const proxy = await startProxy({ tape, mode: 'replay', port: 0, tls, onWarning: () => {} });
    try {
      const s = await connect(proxy.url);
      await until(s, (e) => e.type === 'session.created');
      s.rt.send({ type: 'session.update', session: { type: 'realtime', instructions: 'Be verbose.' } });
      const code = await s.closed;
      expect(s.errors).toHaveLength(1);
      expect(s.errors[0]!.message).toMatch(/session\.instructions differs, "Be verbose\." vs "Be brief\."/);
      expect(s.errors[0]!.message).toMatch(/re-record/);
      expect((s.errors[0] as { error?: { code?: string } }).error?.code).toBe('tapedeck_miss');
      expect(code).toBe(1008);
    } finally {
      await proxy.close();
    }
  });

  it('audio that differs from the recorded run is a miss naming the byte where it differs', async () => {
    const proxy = await startProxy({ tape, mode: 'replay', port: 0, tls, onWarning: () => {} });
    try {
      const s = await connect(proxy.url);
      await until(s, (e) => e.type === 'session.created');
      const replay = recorded.events;
      void replay;
      s.rt.send({ type: 'session.update', session: { type: 'realtime', instructions: 'Be brief.', tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }] } });
      await until(s, (e) => e.type === 'session.updated');
      s.rt.send({ type: 'conversation.item.create', item: { id: 'msg_other', type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hello there' }] } });
      s.rt.send({ type: 'response.create' });
      await until(s, done);
      const speech = Buffer.from(pcmFor('what the user said', 24000));
      speech[5000] = (speech[5000]! + 1) & 0xff;
      s.rt.send({ type: 'input_audio_buffer.append', audio: speech.toString('base64') });
      await s.closed;
      expect(s.errors.at(-1)?.message).toMatch(/audio differs from the recording at byte 5000 of 24000/);
    } finally {
      await proxy.close();
    }
  });

  it('keeps no credential: not the Authorization key, not an ephemeral ek_ key, not a key in a subprotocol or the query', async () => {
    const text = tapeText(tape);
    expect(text).not.toContain(KEY);
    const fake2 = await startFakeRealtime();
    const t2 = join(dir, 'secrets.tape');
    const proxy = await startProxy({ upstream: fake2.url, tape: t2, mode: 'record', port: 0, tls });
    try {
      // The SDK with an ephemeral key.
      const s = await connect(proxy.url, EPHEMERAL);
      await until(s, (e) => e.type === 'session.created');
      s.rt.close();
      await s.closed;
      // A browser-style client: the key as a subprotocol, and an api-key in the query.
      const ws = new WebSocket(`${proxy.url.replace('https', 'wss')}/v1/realtime?model=gpt-realtime&api-key=${KEY}`, ['realtime', `openai-insecure-api-key.${KEY}`], { ca: tls.ca });
      const first = await new Promise<string>((r, j) => {
        ws.once('message', (d) => r(d.toString()));
        ws.once('error', j);
      });
      expect(ws.protocol).toBe('realtime');
      expect(JSON.parse(first).type).toBe('session.created');
      ws.close();
      await new Promise((r) => ws.once('close', r));
    } finally {
      await proxy.close();
      await fake2.close();
    }
    // The upstream got the credentials; the tape has none of them.
    expect(fake2.connects[0]!.headers.authorization).toBe(`Bearer ${EPHEMERAL}`);
    expect(fake2.connects[1]!.protocols).toContain(`openai-insecure-api-key.${KEY}`);
    const t = tapeText(t2);
    expect(t).not.toContain(EPHEMERAL);
    expect(t).not.toContain(KEY);
    expect(t).not.toContain(EPHEMERAL.slice(3));
    const heads = (await readTape(t2)).records.map((r) => r.value).filter((v) => isRealtimeRecord(v) && v.role === 'session');
    expect(heads).toHaveLength(2);
  });

  it('Azure OpenAI (OpenAIRealtimeWS.azure): its realtime route recorded and replayed, its api-key never on tape', async () => {
    const fake2 = await startFakeRealtime();
    const t = join(dir, 'azure.tape');
    const AZURE_KEY = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';
    const run = async (url: string) => {
      const client = new AzureOpenAI({ endpoint: url, apiKey: AZURE_KEY, apiVersion: '2025-04-01-preview', deployment: 'gpt-realtime' });
      const rt = await OpenAIRealtimeWS.azure(client, { options: { ca: tls.ca } });
      const s = { events: [] as Event[], closed: new Promise<number>((r) => rt.socket.once('close', (c) => r(c))) };
      rt.on('event', (e) => s.events.push(e as Event));
      await new Promise<void>((r) => rt.socket.once('open', () => r()));
      rt.send({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi azure' }] } });
      rt.send({ type: 'response.create' });
      await until(s, done);
      rt.close();
      await s.closed;
      return s.events;
    };
    let live: Event[];
    const rec = await startProxy({ upstream: fake2.url, tape: t, mode: 'record', port: 0, tls });
    try {
      live = await run(rec.url);
    } finally {
      await rec.close();
      await fake2.close();
    }
    expect(fake2.connects[0]!.url).toMatch(/^\/openai\/realtime\?api-version=2025-04-01-preview&deployment=gpt-realtime$/);
    expect(fake2.connects[0]!.headers['api-key']).toBe(AZURE_KEY);
    const heads = (await readTape(t)).records.map((r) => r.value).filter((v) => isRealtimeRecord(v) && v.role === 'session');
    expect(heads).toEqual([expect.objectContaining({ provider: 'azure' })]);
    expect(tapeText(t)).not.toContain(AZURE_KEY);
    const play = await startProxy({ tape: t, mode: 'replay', port: 0, tls });
    try {
      expect(await run(play.url)).toEqual(live);
    } finally {
      await play.close();
    }
  });

  it('the browser-style OpenAIRealtimeWebSocket', async (ctx) => {
    if (typeof (globalThis as { WebSocket?: unknown }).WebSocket !== 'function') ctx.skip(true, 'this Node has no global WebSocket (Node 22+, or --experimental-websocket on 20)');
  });
});

describe('OpenAI Realtime: repeated sessions and a recorder killed mid-session', () => {
  it('two sessions that open the same way replay in order, the k-th connect getting the k-th session', async () => {
    const fake = await startFakeRealtime();
    const tape = join(dir, 'two.tape');
    const proxy = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0, tls });
    const one = async (url: string, text: string) => {
      const s = await connect(url);
      await until(s, (e) => e.type === 'session.created');
      s.rt.send({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] } });
      s.rt.send({ type: 'response.create' });
      const d = await until(s, done);
      s.rt.close();
      await s.closed;
      return { events: s.events, transcript: d?.response?.output?.[0]?.content?.[0]?.transcript as string };
    };
    let live: { events: Event[] }[];
    try {
      live = [await one(proxy.url, 'first'), await one(proxy.url, 'second')];
    } finally {
      await proxy.close();
      await fake.close();
    }
    const replay = await startProxy({ tape, mode: 'replay', port: 0, tls, strictOrder: true, onWarning: () => {} });
    try {
      const a = await one(replay.url, 'first');
      const b = await one(replay.url, 'second');
      expect(a.transcript).toBe('You said: first');
      expect(b.transcript).toBe('You said: second');
      expect([a.events, b.events]).toEqual(live.map((l) => l.events));
      // A third connect: strict order, nothing recorded for it.
      const s = await connect(replay.url);
      await s.closed;
      expect(s.errors[0]?.message).toMatch(/no recording of this session/);
    } finally {
      await replay.close();
    }
  });

  it('kill -9 of tapedeck serve --tls mid-session keeps every response the client saw complete; replay cuts where the recorder died', async () => {
    const fake = await startFakeRealtime();
    const tape = join(dir, 'killed.tape');
    const caFile = join(dir, 'ca.pem');
    const srv = serve(['--upstream', fake.url, '--tape', tape, '--mode', 'record', '--port', '0', '--tls', '--tls-ca', caFile]);
    const url = await srv.url;
    expect(url.startsWith('https://')).toBe(true);
    expect(srv.stderr()).toContain(caFile);
    const ca = readFileSync(caFile, 'utf8');
    const s = await connect(url, KEY, ca);
    let seen: Event[];
    try {
      await until(s, (e) => e.type === 'session.created');
      s.rt.send({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'first' }] } });
      s.rt.send({ type: 'response.create' });
      await until(s, done);
      // The long answer is in flight (not complete) when the recorder dies.
      const n = s.events.length;
      s.rt.send({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'tell me a long story' }] } });
      s.rt.send({ type: 'response.create' });
      await until(s, (e) => e.type === 'response.output_audio.delta', n);
      seen = s.events.slice(0, n);
      srv.child.kill('SIGKILL');
      await srv.exited;
      await s.closed;
    } finally {
      await fake.close();
    }
    const replay = await startProxy({ tape, mode: 'replay', port: 0, tls, onWarning: () => {} });
    try {
      const r = await connect(replay.url);
      await until(r, (e) => e.type === 'session.created');
      r.rt.send({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'first' }] } });
      r.rt.send({ type: 'response.create' });
      await until(r, done);
      expect(r.events).toEqual(seen);
      // Past the last complete response the recording was cut: so is the replay (1006).
      r.rt.send({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'tell me a long story' }] } });
      expect(await r.closed).toBe(1006);
    } finally {
      await replay.close();
    }
  });
});
