// Gemini Live end to end with the real `@google/genai` package: `ai.live.connect` with an http:
// base URL (the SDK maps it to ws:) through the plain proxy, against a loopback fake of the Live
// API that speaks its messages over a real WebSocket (JSON in binary frames). Record a session
// (text, inline audio out, audio in as chunks, a tool call and its response, an interruption)
// and a second one the server closes with an error; stop the fake; replay both in order with the
// audio chunked differently; a changed message is a close with a code and a reason saying what
// differs; the API key and an ephemeral token never reach the tape.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GoogleGenAI, Modality, type LiveServerMessage, type Session } from '@google/genai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { startProxy } from '../../src/proxy/server.ts';
import { pcmFor, startFakeRealtime, type FakeRealtime } from './fake-realtime.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-realtime-gemini-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const KEY = 'AIza' + 'SyL1ve-Ab3dEf6hIj9kLm2nOp5qRs8tUv1';
const TOKEN = 'auth_tokens/' + 'e7f1c2d3a4b5968778695a4b3c2d1e0f';
const MODEL = 'gemini-live-2.5-flash-preview';

interface Live {
  session: Session;
  messages: Record<string, any>[];
  closed: Promise<{ code: number; reason: string }>;
}

async function open(url: string, apiKey = KEY, apiVersion?: string): Promise<Live> {
  const ai = new GoogleGenAI({ apiKey, httpOptions: { baseUrl: url, ...(apiVersion ? { apiVersion } : {}) } });
  const messages: Record<string, any>[] = [];
  let closedWith: (c: { code: number; reason: string }) => void = () => {};
  const closed = new Promise<{ code: number; reason: string }>((r) => (closedWith = r));
  const session = await ai.live.connect({
    model: MODEL,
    config: { responseModalities: [Modality.AUDIO], tools: [{ functionDeclarations: [{ name: 'get_weather', parameters: { type: 'object' as never, properties: { city: { type: 'string' as never } } } }] }] },
    callbacks: {
      onmessage: (m: LiveServerMessage) => messages.push(JSON.parse(JSON.stringify(m)) as Record<string, any>),
      onerror: () => {},
      onclose: (e: { code: number; reason: string }) => closedWith({ code: e.code, reason: e.reason }),
    },
  });
  return { session, messages, closed };
}

function until(l: Live, pred: (m: Record<string, any>) => boolean, from = 0): Promise<Record<string, any> | undefined> {
  return new Promise((resolve) => {
    let t: ReturnType<typeof setTimeout>;
    const check = () => {
      const m = l.messages.slice(from).find(pred);
      if (m) return resolve(m);
      t = setTimeout(check, 2);
    };
    t = setTimeout(check, 0);
    void l.closed.then(() => {
      clearTimeout(t);
      resolve(l.messages.slice(from).find(pred));
    });
  });
}

const turnDone = (m: Record<string, any>) => m.serverContent?.turnComplete === true;

async function voiceSession(url: string, chunk: number, hello = 'hello there') {
  const l = await open(url);
  const { session } = l;
  let n = l.messages.length;
  session.sendClientContent({ turns: [{ role: 'user', parts: [{ text: hello }] }], turnComplete: true });
  await until(l, turnDone, n);
  n = l.messages.length;
  const speech = pcmFor('what the user said', 32000);
  for (let i = 0; i < speech.length; i += chunk) session.sendRealtimeInput({ audio: { data: speech.subarray(i, i + chunk).toString('base64'), mimeType: 'audio/pcm;rate=16000' } });
  session.sendRealtimeInput({ audioStreamEnd: true });
  await until(l, turnDone, n);
  n = l.messages.length;
  session.sendClientContent({ turns: [{ role: 'user', parts: [{ text: 'what is the weather in Paris?' }] }], turnComplete: true });
  const call = await until(l, (m) => m.toolCall !== undefined, n);
  const fc = call?.toolCall?.functionCalls?.[0];
  n = l.messages.length;
  session.sendToolResponse({ functionResponses: [{ id: fc?.id, name: fc?.name, response: { temp_c: 21 } }] });
  await until(l, turnDone, n);
  n = l.messages.length;
  session.sendClientContent({ turns: [{ role: 'user', parts: [{ text: 'tell me a long story' }] }], turnComplete: true });
  await until(l, (m) => m.serverContent?.interrupted === true, n);
  session.close();
  await l.closed;
  return l;
}

async function failingSession(url: string) {
  const l = await open(url);
  l.session.sendClientContent({ turns: [{ role: 'user', parts: [{ text: 'an invalid request' }] }], turnComplete: true });
  return { messages: l.messages, close: await l.closed };
}

describe('Gemini Live through tapedeck serve (ai.live.connect)', () => {
  let fake: FakeRealtime;
  const tape = join(dir, 'live.tape');
  let recorded: Live;
  let failed: Awaited<ReturnType<typeof failingSession>>;

  beforeAll(async () => {
    fake = await startFakeRealtime();
    const proxy = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0 });
    try {
      recorded = await voiceSession(proxy.url, 3200);
      failed = await failingSession(proxy.url);
      // An ephemeral token, through the constrained route.
      const eph = await open(proxy.url, TOKEN, 'v1alpha');
      eph.session.close();
      await eph.closed;
    } finally {
      await proxy.close();
      await fake.close();
    }
  });

  it('records text, audio out, a tool call, an interruption, usage; the server error closes with its code', () => {
    expect(recorded.messages[0]).toEqual({ setupComplete: {} });
    expect(recorded.messages.some((m) => m.serverContent?.modelTurn?.parts?.[0]?.inlineData?.data)).toBe(true);
    expect(recorded.messages.some((m) => m.toolCall)).toBe(true);
    expect(recorded.messages.some((m) => m.serverContent?.interrupted)).toBe(true);
    expect(recorded.messages.some((m) => m.usageMetadata?.responseTokenCount > 0)).toBe(true);
    const said = recorded.messages.map((m) => m.serverContent?.modelTurn?.parts?.[0]?.text ?? '').join('');
    expect(said).toContain('audio of 32000 bytes');
    expect(failed.close).toEqual({ code: 1007, reason: 'Request contains an invalid argument.' });
    expect(fake.connects.map((c) => c.url)).toContainEqual(expect.stringContaining('BidiGenerateContentConstrained?access_token='));
  });

  it('replays both sessions in order with the upstream gone: the same messages, audio chunked differently, the same close', async () => {
    const proxy = await startProxy({ tape, mode: 'replay', port: 0, strictOrder: true });
    try {
      const again = await voiceSession(proxy.url, 1000);
      expect(again.messages).toEqual(recorded.messages);
      const f = await failingSession(proxy.url);
      expect(f).toEqual(failed);
      expect(proxy.handler.stats().realtime).toMatchObject({ replayed: 2, misses: 0 });
    } finally {
      await proxy.close();
    }
  });

  it('a changed message closes the session with a code and a reason saying what differs', async () => {
    const proxy = await startProxy({ tape, mode: 'replay', port: 0, onWarning: () => {} });
    try {
      const l = await open(proxy.url);
      l.session.sendClientContent({ turns: [{ role: 'user', parts: [{ text: 'hello world' }] }], turnComplete: true });
      const c = await l.closed;
      expect(c.code).toBe(1008);
      expect(c.reason).toMatch(/^tapedeck miss: client frame 2 \(clientContent\): clientContent\.turns\[0\]\.parts\[0\]\.text differs/);
      expect(Buffer.byteLength(c.reason)).toBeLessThanOrEqual(123);
      // A miss, not a replayed session besides.
      expect(proxy.handler.stats().realtime).toMatchObject({ replayed: 0, misses: 1 });
    } finally {
      await proxy.close();
    }
  });

  it("forwards the SDK's `//ws/...` as Google's `/ws/...`; a client spelling it so replays the same session", async () => {
    // The SDK, given a base URL, asks for `//ws/google.ai...`: the upstream got `/ws/...`.
    expect(fake.connects.map((c) => c.url.split('?')[0])).toContain(`/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent`);
    expect(readFileSync(tape).toString('latin1')).toContain('/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent');
    // A client asking for `/ws/...` (a raw WebSocket, another SDK) gets the same recording.
    const proxy = await startProxy({ tape, mode: 'replay', port: 0 });
    try {
      const ws = new WebSocket(`${proxy.url.replace(/^http/, 'ws')}/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent?key=${KEY}`);
      const first = new Promise<string>((resolve, reject) => {
        ws.once('message', (data) => resolve(String(data)));
        ws.once('close', (code, reason) => reject(new Error(`closed ${code} ${String(reason)}`)));
        ws.once('error', reject);
      });
      ws.once('open', () => ws.send(JSON.stringify(fake.received[0])));
      expect(JSON.parse(await first)).toEqual({ setupComplete: {} });
      ws.close();
    } finally {
      await proxy.close();
    }
  });

  it('keeps neither the API key nor the ephemeral token', () => {
    const text = readFileSync(tape).toString('latin1');
    expect(fake.connects[0]!.url).toContain(`key=${KEY}`);
    expect(text).not.toContain(KEY);
    expect(text).not.toContain(TOKEN);
    expect(text).not.toContain(TOKEN.slice('auth_tokens/'.length));
  });
});
