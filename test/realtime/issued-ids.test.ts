// A replay compares the ids a client echoes with the ones the server issued. A tool's result
// (OpenAI `function_call_output`, Gemini `toolResponse`) names the call by the id the server sent
// with the call; a client that sends another id (the function call's item id, a made-up one)
// gets an error from the API, so its replay must miss there, naming the frame and the member,
// never answer with the recorded success. A client that echoes the id the server sent, and ids
// a client makes up itself (an item's own `id`), still replay. The real openai
// OpenAIRealtimeWS (TLS) and @google/genai live session through the proxy, against sessions
// recorded from the loopback fake realtime server.
import { mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GoogleGenAI, Modality, type LiveServerMessage } from '@google/genai';
import OpenAI from 'openai';
import { OpenAIRealtimeWS } from 'openai/realtime/ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxy } from '../../src/proxy/server.ts';
import { makeLocalCertificate } from '../../src/proxy/tls.ts';
import { startFakeRealtime, type FakeRealtime } from './fake-realtime.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-realtime-issued-ids-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Event = Record<string, any>;

/** Which id a tool's result names its call by. */
type Echo = 'call_id' | 'item id' | 'made up';

interface ToolRun {
  code: number;
  errors: string[];
  /** The status of the response to the tool's result (undefined: none came). */
  after?: string;
  transcript?: string;
}

/** An OpenAI agent with a tool: its own item id on the question, the call, the result naming the call by `echo`. */
async function openaiTool(url: string, ca: string, echo: Echo): Promise<ToolRun> {
  const rt = new OpenAIRealtimeWS({ model: 'gpt-realtime', options: { ca } }, new OpenAI({ apiKey: 'sk-test-issued-ids-0123456789abcdef', baseURL: `${url}/v1` }));
  const errors: string[] = [];
  rt.on('error', (e) => errors.push(e.message));
  const closed = new Promise<number>((r) => rt.socket.once('close', (code) => r(code)));
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
  let after: string | undefined;
  let transcript: string | undefined;
  if (await created) {
    const called = next('response.done');
    rt.send({ type: 'conversation.item.create', item: { id: `msg_${randomBytes(6).toString('hex')}`, type: 'message', role: 'user', content: [{ type: 'input_text', text: 'what is the weather in Paris?' }] } });
    rt.send({ type: 'response.create' });
    const call = (await called)?.response?.output?.[0] as { id: string; call_id: string } | undefined;
    if (call) {
      const done = next('response.done');
      const callId = echo === 'call_id' ? call.call_id : echo === 'item id' ? call.id : 'call_bogus';
      rt.send({ type: 'conversation.item.create', item: { type: 'function_call_output', call_id: callId, output: '{"temp_c":21}' } });
      rt.send({ type: 'response.create' });
      const d = await done;
      after = d?.response?.status;
      transcript = d?.response?.output?.[0]?.content?.[0]?.transcript;
    }
  }
  rt.close();
  return { code: await closed, errors, ...(after ? { after } : {}), ...(transcript ? { transcript } : {}) };
}

/** A Gemini Live agent with a tool: the call, the result naming it by `echo`. */
async function geminiTool(url: string, echo: Echo): Promise<{ code: number; reason: string; answered: boolean }> {
  const ai = new GoogleGenAI({ apiKey: 'AIza' + 'SyIssuedIds0123456789abcdefghijk', httpOptions: { baseUrl: url } });
  let closedWith: (c: { code: number; reason: string }) => void = () => {};
  const closed = new Promise<{ code: number; reason: string }>((r) => (closedWith = r));
  let onCall: (m: LiveServerMessage) => void = () => {};
  const gotCall = new Promise<LiveServerMessage>((r) => (onCall = r));
  let answered = false;
  let onTurn: () => void = () => {};
  const turn = new Promise<void>((r) => (onTurn = r));
  const session = await ai.live.connect({
    model: 'gemini-live-2.5-flash-preview',
    config: { responseModalities: [Modality.AUDIO] },
    callbacks: {
      onmessage: (m: LiveServerMessage) => {
        if (m.toolCall) onCall(m);
        if (m.serverContent?.turnComplete) {
          answered = true;
          onTurn();
        }
      },
      onerror: () => {},
      onclose: (e: { code: number; reason: string }) => closedWith({ code: e.code, reason: e.reason }),
    },
  });
  session.sendClientContent({ turns: [{ role: 'user', parts: [{ text: 'what is the weather?' }] }], turnComplete: true });
  const fc = (await gotCall).toolCall!.functionCalls![0]!;
  session.sendToolResponse({ functionResponses: [{ id: echo === 'call_id' ? fc.id : 'function-call_bogus', name: fc.name, response: { temp_c: 21 } }] });
  await Promise.race([turn, closed]);
  session.close();
  return { ...(await closed), answered };
}

describe('a replay checks the ids a client echoes against those the server issued', () => {
  let tls: Awaited<ReturnType<typeof makeLocalCertificate>>;
  let fake: FakeRealtime;
  const tape = join(dir, 'tools.tape');
  const geminiTape = join(dir, 'gemini-tools.tape');

  beforeAll(async () => {
    tls = await makeLocalCertificate();
    fake = await startFakeRealtime();
    const rec = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0, tls });
    try {
      const r = await openaiTool(rec.url, tls.ca, 'call_id');
      expect(r.after).toBe('completed');
    } finally {
      await rec.close();
    }
    const g = await startProxy({ upstream: fake.url, tape: geminiTape, mode: 'record', port: 0 });
    try {
      expect((await geminiTool(g.url, 'call_id')).answered).toBe(true);
    } finally {
      await g.close();
    }
  });
  afterAll(() => fake.close());

  it('OpenAI: the call_id the server sent replays (with the client’s own item id, new every run)', async () => {
    const p = await startProxy({ tape, mode: 'replay', port: 0, tls, onWarning: () => {} });
    try {
      const r = await openaiTool(p.url, tls.ca, 'call_id');
      expect(r.errors).toEqual([]);
      expect(r.after).toBe('completed');
      expect(r.transcript).toBe('You said: tool said {"temp_c":21}');
      expect(p.handler.stats().realtime).toMatchObject({ replayed: 1, misses: 0 });
    } finally {
      await p.close();
    }
  });

  it.each([
    ['item id', /client frame 3 \(conversation\.item\.create\): item\.call_id differs, "item_[0-9a-f]+": the recording has "call_[0-9a-f]+" there, the id the server sent \(this client sends one the server sent for something else\)/],
    ['made up', /client frame 3 \(conversation\.item\.create\): item\.call_id differs, "call_bogus": the recording has "call_[0-9a-f]+" there, the id the server sent \(this client sends one the server never sent\)/],
  ] as const)('OpenAI: a function_call_output naming the call by its %s is a miss, not the recorded success', async (echo, said) => {
    const warnings: string[] = [];
    const p = await startProxy({ tape, mode: 'replay', port: 0, tls, onWarning: (m) => warnings.push(m) });
    try {
      const r = await openaiTool(p.url, tls.ca, echo);
      expect(r.after).toBeUndefined();
      expect(r.code).toBe(1008);
      expect(r.errors.join('\n')).toMatch(said);
      expect(warnings.join('\n')).toMatch(said);
      expect(p.handler.stats().realtime).toMatchObject({ replayed: 0, misses: 1 });
    } finally {
      await p.close();
    }
  });

  it('Gemini Live: the function call id the server sent replays; another one is a miss (1008)', async () => {
    const warnings: string[] = [];
    const p = await startProxy({ tape: geminiTape, mode: 'replay', port: 0, onWarning: (m) => warnings.push(m) });
    try {
      expect(await geminiTool(p.url, 'call_id')).toMatchObject({ answered: true });
      const bad = await geminiTool(p.url, 'made up');
      expect(bad.answered).toBe(false);
      expect(bad.code).toBe(1008);
      expect(warnings.join('\n')).toMatch(/client frame 3 \(toolResponse\): toolResponse\.functionResponses\[0\]\.id differs, "function-call_bogus": the recording has "function-call_[0-9a-f]+" there, the id the server sent/);
    } finally {
      await p.close();
    }
  });
});
