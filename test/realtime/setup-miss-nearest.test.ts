// A Gemini Live connect whose `setup` the tape lacks misses at that frame, and the miss names
// what differs from a recorded `setup`. It was told against the first session not replayed yet,
// else the last one: once every recorded session had been replayed in the proxy (an earlier test
// of the same run), a connect that only added a system instruction to session 1's setup was
// told `responseModalities[0] differs, "TEXT" vs "AUDIO"` against session 2, a difference the
// user never made. Now it is told against the nearest recorded setup (fewest differing members),
// whichever sessions were replayed. The real `@google/genai` package through the proxy.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GoogleGenAI, Modality, type LiveConnectConfig, type LiveServerMessage } from '@google/genai';
import { afterAll, expect, it } from 'vitest';
import { startProxy } from '../../src/proxy/server.ts';
import { startFakeRealtime } from './fake-realtime.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-realtime-setup-nearest-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const KEY = 'AIza' + 'SyNearest-Ab3dEf6hIj9kLm2nOp5qRs8tUv';
const MODEL = 'gemini-live-2.5-flash-preview';
const TEXT: LiveConnectConfig = { responseModalities: [Modality.TEXT] };
const AUDIO_TOOLS: LiveConnectConfig = {
  responseModalities: [Modality.AUDIO],
  tools: [{ functionDeclarations: [{ name: 'get_weather', description: 'weather' }] }],
};

/** One turn with `config`: the model's text, or how the session was closed before it. */
async function turn(url: string, config: LiveConnectConfig, text: string): Promise<{ answered?: true; close?: { code: number; reason: string } }> {
  const ai = new GoogleGenAI({ apiKey: KEY, httpOptions: { baseUrl: url } });
  let closedWith: (c: { code: number; reason: string }) => void = () => {};
  const closed = new Promise<{ code: number; reason: string }>((r) => (closedWith = r));
  let turned: () => void = () => {};
  const done = new Promise<void>((r) => (turned = r));
  // connect() resolves at `setupComplete`: a miss at `setup` closes the socket before.
  const connecting = ai.live.connect({
    model: MODEL,
    config,
    callbacks: {
      onmessage: (m: LiveServerMessage) => {
        if (m.serverContent?.turnComplete || m.toolCall) turned();
      },
      onerror: () => {},
      onclose: (e: { code: number; reason: string }) => closedWith({ code: e.code, reason: e.reason }),
    },
  });
  const session = await Promise.race([connecting, closed.then(() => undefined)]);
  if (session === undefined) return { close: await closed };
  session.sendClientContent({ turns: [{ role: 'user', parts: [{ text }] }], turnComplete: true });
  const first = await Promise.race([done.then(() => 'turn' as const), closed.then(() => 'closed' as const)]);
  if (first === 'closed') return { close: await closed };
  session.close();
  await closed;
  return { answered: true };
}

it('a setup the tape lacks is told against the nearest recorded setup, also once every session was replayed', async () => {
  const tape = join(dir, 'two.tape');
  const fake = await startFakeRealtime();
  const rec = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0 });
  try {
    expect(await turn(rec.url, TEXT, 'Hello')).toEqual({ answered: true });
    expect(await turn(rec.url, AUDIO_TOOLS, 'weather please')).toEqual({ answered: true });
  } finally {
    await rec.close();
    await fake.close();
  }
  const changed: LiveConnectConfig = { ...TEXT, systemInstruction: 'be nice' };
  // The close reason is cut to a close frame's 123 bytes; the warning has the whole line.
  const expected = /^tapedeck miss: client frame 1 \(setup\): setup\.systemInstruction differs, /;
  const warned: string[] = [];
  const play = await startProxy({ tape, mode: 'replay', port: 0, onWarning: (m) => warned.push(m) });
  try {
    // A fresh proxy: session 1 is the first not replayed, and the nearest.
    const fresh = await turn(play.url, changed, 'Hello');
    expect(fresh.close?.code).toBe(1008);
    expect(fresh.close?.reason).toMatch(expected);
    // Both recorded sessions replayed (a miss used none up)...
    expect(await turn(play.url, TEXT, 'Hello')).toEqual({ answered: true });
    expect(await turn(play.url, AUDIO_TOOLS, 'weather please')).toEqual({ answered: true });
    // ...the same connect is told the same, not against the last session (AUDIO, tools).
    const after = await turn(play.url, changed, 'Hello');
    expect(after.close?.code).toBe(1008);
    expect(after.close?.reason).toMatch(expected);
    const misses = warned.filter((m) => m.includes('realtime miss'));
    // The same miss is said once on the warning channel; a miss told otherwise would be another line.
    expect(misses.length).toBeGreaterThan(0);
    for (const m of misses) {
      expect(m).toMatch(/setup\.systemInstruction differs, .* vs \(absent\) in the recording/);
      expect(m).not.toContain('responseModalities');
    }
  } finally {
    await play.close();
  }
});
