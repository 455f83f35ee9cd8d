// Gemini Live names its model in the `setup` frame, not in the URL, so the sessions of one route
// are told apart by that first frame: with the real `@google/genai` package through the plain
// proxy, sessions recorded with two models replay in either order; a connect with a model the
// tape lacks misses at `setup` and uses up no recording; in update mode such a session goes live
// and is recorded, and replays after.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GoogleGenAI, Modality, type LiveServerMessage } from '@google/genai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { startProxy } from '../../src/proxy/server.ts';
import { startFakeRealtime, type FakeRealtime } from './fake-realtime.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-realtime-models-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const KEY = 'AIza' + 'SyM0dels-Ab3dEf6hIj9kLm2nOp5qRs8tUv';

interface Turn {
  /** The model's text of the turn, or undefined when the session closed first. */
  text?: string;
  close?: { code: number; reason: string };
}

/** One Gemini Live turn with `model`: the user's text, the model's answer, then the client's close. */
async function turn(url: string, model: string, text: string): Promise<Turn> {
  const ai = new GoogleGenAI({ apiKey: KEY, httpOptions: { baseUrl: url } });
  const parts: string[] = [];
  let closedWith: (c: { code: number; reason: string }) => void = () => {};
  const closed = new Promise<{ code: number; reason: string }>((r) => (closedWith = r));
  let turned: () => void = () => {};
  const done = new Promise<void>((r) => (turned = r));
  // connect() resolves at `setupComplete`: a miss at `setup` closes the socket before, and the
  // SDK's promise never settles, so the close is raced against it.
  const connecting = ai.live.connect({
    model,
    config: { responseModalities: [Modality.TEXT] },
    callbacks: {
      onmessage: (m: LiveServerMessage) => {
        for (const p of m.serverContent?.modelTurn?.parts ?? []) if (p.text) parts.push(p.text);
        if (m.serverContent?.turnComplete) turned();
      },
      onerror: () => {},
      onclose: (e: { code: number; reason: string }) => closedWith({ code: e.code, reason: e.reason }),
    },
  });
  const opened = await Promise.race([connecting, closed.then(() => undefined)]);
  if (opened === undefined) return { close: await closed };
  const session = opened;
  session.sendClientContent({ turns: [{ role: 'user', parts: [{ text }] }], turnComplete: true });
  const first = await Promise.race([done.then(() => 'turn' as const), closed.then(() => 'closed' as const)]);
  if (first === 'closed') return { close: await closed };
  session.close();
  await closed;
  return { text: parts.join('') };
}

describe('Gemini Live sessions of one route, told apart by the model in setup', () => {
  let fake: FakeRealtime;
  const tape = join(dir, 'models.tape');
  const recorded: Record<string, string | undefined> = {};

  beforeAll(async () => {
    fake = await startFakeRealtime();
    const rec = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0 });
    try {
      recorded.a = (await turn(rec.url, 'gemini-model-a', 'hello from a')).text;
      recorded.b = (await turn(rec.url, 'gemini-model-b', 'hello from b')).text;
    } finally {
      await rec.close();
    }
  });
  afterAll(() => fake.close());

  it('recorded two sessions with different answers', () => {
    expect(recorded.a).toBeTruthy();
    expect(recorded.b).toBeTruthy();
    expect(recorded.a).not.toBe(recorded.b);
  });

  it('replays them in the other order, each with its own answer', async () => {
    const proxy = await startProxy({ tape, mode: 'replay', port: 0, onWarning: () => {} });
    try {
      expect(await turn(proxy.url, 'gemini-model-b', 'hello from b')).toEqual({ text: recorded.b });
      expect(await turn(proxy.url, 'gemini-model-a', 'hello from a')).toEqual({ text: recorded.a });
      expect(proxy.handler.stats().realtime).toMatchObject({ replayed: 2, misses: 0 });
    } finally {
      await proxy.close();
    }
  });

  it('a model the tape lacks misses at setup, saying so, and uses up no recording', async () => {
    const warnings: string[] = [];
    const proxy = await startProxy({ tape, mode: 'replay', port: 0, onWarning: (m) => warnings.push(m) });
    try {
      const miss = await turn(proxy.url, 'gemini-model-c', 'hello from a');
      expect(miss.close?.code).toBe(1008);
      expect(miss.close?.reason).toMatch(/setup\.model differs, "models\/gemini-model-c" vs "models\/gemini-model-a"/);
      expect(warnings.join('\n')).toMatch(/realtime miss/);
      // The sessions are all still there, in either order.
      expect(await turn(proxy.url, 'gemini-model-a', 'hello from a')).toEqual({ text: recorded.a });
      expect(await turn(proxy.url, 'gemini-model-b', 'hello from b')).toEqual({ text: recorded.b });
    } finally {
      await proxy.close();
    }
  });

  it('a client that sends its next frames before the session is chosen (no wait for setupComplete) loses none of them', async () => {
    // A raw client: setup and the user's turn back to back, as fast as the socket takes them.
    const burst = (url: string, model = 'models/gemini-model-raw') =>
      new Promise<string[]>((resolve, reject) => {
        const ws = new WebSocket(`${url.replace('http', 'ws')}/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent?key=${KEY}`);
        const got: string[] = [];
        const timer = setTimeout(() => reject(new Error(`no turnComplete; got ${JSON.stringify(got)}`)), 3000);
        ws.on('open', () => {
          ws.send(JSON.stringify({ setup: { model } }));
          ws.send(JSON.stringify({ clientContent: { turns: [{ role: 'user', parts: [{ text: 'all at once' }] }], turnComplete: true } }));
        });
        ws.on('message', (d) => {
          const m = JSON.parse(d.toString()) as { setupComplete?: unknown; serverContent?: { turnComplete?: boolean; modelTurn?: { parts?: { text?: string }[] } } };
          got.push(m.setupComplete ? 'setupComplete' : m.serverContent?.turnComplete ? 'turnComplete' : (m.serverContent?.modelTurn?.parts?.map((p) => p.text).join('') ?? 'other'));
          if (m.serverContent?.turnComplete) {
            clearTimeout(timer);
            ws.close();
            resolve(got);
          }
        });
        ws.on('error', reject);
      });
    const rawTape = join(dir, 'raw.tape');
    const rec = await startProxy({ upstream: fake.url, tape: rawTape, mode: 'record', port: 0 });
    let live: string[];
    try {
      live = await burst(rec.url);
    } finally {
      await rec.close();
    }
    const proxy = await startProxy({ tape: rawTape, mode: 'replay', port: 0, onWarning: () => {} });
    try {
      expect(await burst(proxy.url)).toEqual(live);
    } finally {
      await proxy.close();
    }
    const upd = await startProxy({ upstream: fake.url, tape: rawTape, mode: 'update', port: 0, onWarning: () => {} });
    try {
      expect(await burst(upd.url)).toEqual(live);
      // A model the tape lacks goes live: its frames held while the upstream opens.
      expect(await burst(upd.url, 'models/gemini-model-raw2')).toEqual(live);
    } finally {
      await upd.close();
    }
  });

  it('update mode records a session with a new model live, and replays the recorded ones', async () => {
    const connects = fake.connects.length;
    const upd = await startProxy({ upstream: fake.url, tape, mode: 'update', port: 0, onWarning: () => {} });
    let c: Turn;
    try {
      expect(await turn(upd.url, 'gemini-model-b', 'hello from b')).toEqual({ text: recorded.b });
      expect(fake.connects.length).toBe(connects);
      c = await turn(upd.url, 'gemini-model-c', 'hello from c');
      expect(c.text).toBeTruthy();
      expect(fake.connects.length).toBe(connects + 1);
    } finally {
      await upd.close();
    }
    const proxy = await startProxy({ tape, mode: 'replay', port: 0, onWarning: () => {} });
    try {
      expect(await turn(proxy.url, 'gemini-model-c', 'hello from c')).toEqual({ text: c.text });
      expect(await turn(proxy.url, 'gemini-model-a', 'hello from a')).toEqual({ text: recorded.a });
    } finally {
      await proxy.close();
    }
  });
});
