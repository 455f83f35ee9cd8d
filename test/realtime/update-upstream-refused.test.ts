// Update mode, a Gemini Live session whose turn the tape lacks goes live, and the upstream
// refuses it (HTTP 401). The client has only the close reason (123 bytes), which began with the
// route and was cut before the cause: `tapedeck: this session has no recording (GET
// /ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateConte...`, with the code
// of a miss (1008). Now the reason says the upstream failed, and why, first, with the code of a
// failed gateway (1014). The real @google/genai package through the proxy.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GoogleGenAI, Modality } from '@google/genai';
import { afterAll, expect, it } from 'vitest';
import { startProxy } from '../../src/proxy/server.ts';
import { startFakeRealtime } from './fake-realtime.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-realtime-upstream-refused-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A turn of `text`: the model's answer, or the close the session got. */
async function turn(url: string, text: string): Promise<{ answered?: true; close?: { code: number; reason: string } }> {
  const ai = new GoogleGenAI({ apiKey: 'AIza' + 'SyRefused-Ab3dEf6hIj9kLm2nOp5qRs8tUvWx', httpOptions: { baseUrl: url } });
  let closedWith: (c: { code: number; reason: string }) => void = () => {};
  const closed = new Promise<{ code: number; reason: string }>((r) => (closedWith = r));
  let turned: () => void = () => {};
  const done = new Promise<void>((r) => (turned = r));
  const connecting = ai.live.connect({
    model: 'gemini-live-2.5-flash-preview',
    config: { responseModalities: [Modality.TEXT] },
    callbacks: { onmessage: (m) => (m.serverContent?.turnComplete ? turned() : undefined), onerror: () => {}, onclose: (e: { code: number; reason: string }) => closedWith({ code: e.code, reason: e.reason }) },
  });
  const session = await Promise.race([connecting, closed.then(() => undefined)]);
  if (session === undefined) return { close: await closed };
  session.sendClientContent({ turns: [{ role: 'user', parts: [{ text }] }], turnComplete: true });
  if ((await Promise.race([done.then(() => 'turn'), closed.then(() => 'closed')])) === 'closed') return { close: await closed };
  session.close();
  await closed;
  return { answered: true };
}

it('update mode: a session the upstream refuses is closed with the cause first (1014), not read as a miss', async () => {
  const tape = join(dir, 'gemini.tape');
  const fake = await startFakeRealtime();
  const rec = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0 });
  try {
    expect(await turn(rec.url, 'Hello')).toEqual({ answered: true });
  } finally {
    await rec.close();
    await fake.close();
  }
  // An upstream that refuses every WebSocket (a revoked key).
  const refusing = createServer((_q, s) => s.end());
  refusing.on('upgrade', (_q, sock) => sock.end('HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\n\r\n{"error":{"message":"bad key"}}'));
  await new Promise<void>((r) => refusing.listen(0, '127.0.0.1', () => r()));
  const up = await startProxy({ upstream: `http://127.0.0.1:${(refusing.address() as AddressInfo).port}`, tape, mode: 'update', port: 0, onWarning: () => {} });
  try {
    // The recorded turn replays; a new one goes live, and the upstream refuses it.
    expect(await turn(up.url, 'Hello')).toEqual({ answered: true });
    const failed = await turn(up.url, 'a new question');
    expect(failed.close?.code).toBe(1014);
    expect(failed.close?.reason).toMatch(/^tapedeck: the upstream refused the session \(it answered HTTP 401\)/);
  } finally {
    await up.close();
    await new Promise((r) => refusing.close(r));
  }
});
