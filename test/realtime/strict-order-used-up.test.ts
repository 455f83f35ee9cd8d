// `--strict-order` (each recorded session replays once), once every session of a connect was
// replayed: a further connect that sends what a recorded session sent was told the wrong
// reason. OpenAI: "the 1 session recorded at this URL was connected with other headers", though
// the headers were the same, and to re-record a session the tape has. Gemini: a field of another
// session (`responseModalities[0] differs, "TEXT" vs "AUDIO"`) for a setup byte for byte the
// first session's. Now both say the session was replayed already. The real openai client over
// TLS and the real @google/genai package, against the loopback fake of the providers.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GoogleGenAI, Modality, type LiveConnectConfig } from '@google/genai';
import OpenAI from 'openai';
import { OpenAIRealtimeWS } from 'openai/realtime/ws';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startProxy } from '../../src/proxy/server.ts';
import { makeLocalCertificate } from '../../src/proxy/tls.ts';
import { startFakeRealtime } from './fake-realtime.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-realtime-strict-used-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let tls: Awaited<ReturnType<typeof makeLocalCertificate>>;
beforeAll(async () => {
  tls = await makeLocalCertificate();
});

const REPLAYED = 'replayed already (with --strict-order each recorded session replays once)';

/** An OpenAI session's first `session.update`: whether it was answered, and the error events. */
async function update(url: string): Promise<{ updated: boolean; errors: string[] }> {
  const rt = new OpenAIRealtimeWS({ model: 'gpt-realtime', options: { ca: tls.ca } }, new OpenAI({ apiKey: 'sk-test-fixture-0123456789abcdef', baseURL: `${url}/v1` }));
  const errors: string[] = [];
  let updated = false;
  const closed = new Promise<void>((r) => rt.socket.once('close', () => r()));
  const answered = new Promise<void>((r) => {
    rt.on('session.updated', () => {
      updated = true;
      r();
    });
    rt.on('error', (e) => {
      errors.push(e.message);
      r();
    });
    void closed.then(() => r());
  });
  await new Promise((r) => rt.socket.once('open', r));
  rt.send({ type: 'session.update', session: { type: 'realtime', instructions: 'be brief' } });
  await answered;
  rt.close();
  await closed;
  return { updated, errors };
}

/** A Gemini Live connect with `config`: its setup answered, or the close it got. */
async function setup(url: string, config: LiveConnectConfig): Promise<{ ok?: true; close?: { code: number; reason: string } }> {
  const ai = new GoogleGenAI({ apiKey: 'AIza' + 'SyStrict0rder-Ab3dEf6hIj9kLm2nOp5qRs8t', httpOptions: { baseUrl: url } });
  let closedWith: (c: { code: number; reason: string }) => void = () => {};
  const closed = new Promise<{ code: number; reason: string }>((r) => (closedWith = r));
  const connecting = ai.live.connect({ model: 'gemini-live-2.5-flash-preview', config, callbacks: { onmessage: () => {}, onerror: () => {}, onclose: (e: { code: number; reason: string }) => closedWith({ code: e.code, reason: e.reason }) } });
  const session = await Promise.race([connecting, closed.then(() => undefined)]);
  if (session === undefined) return { close: await closed };
  session.close();
  await closed;
  return { ok: true };
}

it('OpenAI: a connect past the last session of its connect is told the session was replayed already', async () => {
  const tape = join(dir, 'openai.tape');
  const fake = await startFakeRealtime();
  const rec = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0, tls });
  try {
    expect(await update(rec.url)).toEqual({ updated: true, errors: [] });
  } finally {
    await rec.close();
    await fake.close();
  }
  const warned: string[] = [];
  const play = await startProxy({ tape, mode: 'replay', port: 0, tls, strictOrder: true, onWarning: (m) => warned.push(m) });
  try {
    expect(await update(play.url)).toEqual({ updated: true, errors: [] });
    const again = await update(play.url);
    expect(again.updated).toBe(false);
    expect(again.errors).toHaveLength(1);
    expect(again.errors[0]).toContain(`the 1 session recorded for this connect was ${REPLAYED}`);
    expect(again.errors[0]).not.toContain('other headers');
    expect(again.errors[0]).not.toContain('re-record');
  } finally {
    await play.close();
  }
});

it('Gemini: a setup a replayed session started with is told it was replayed already, not compared with another session', async () => {
  const tape = join(dir, 'gemini.tape');
  const text: LiveConnectConfig = { responseModalities: [Modality.TEXT] };
  const audio: LiveConnectConfig = { responseModalities: [Modality.AUDIO] };
  const fake = await startFakeRealtime();
  const rec = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0 });
  try {
    expect(await setup(rec.url, text)).toEqual({ ok: true });
    expect(await setup(rec.url, audio)).toEqual({ ok: true });
  } finally {
    await rec.close();
    await fake.close();
  }
  const warned: string[] = [];
  const play = await startProxy({ tape, mode: 'replay', port: 0, strictOrder: true, onWarning: (m) => warned.push(m) });
  try {
    expect(await setup(play.url, text)).toEqual({ ok: true });
    expect(await setup(play.url, audio)).toEqual({ ok: true });
    const again = await setup(play.url, text);
    expect(again.close?.code).toBe(1008);
    // What the client has is the close reason (123 bytes): the reason comes first.
    expect(again.close?.reason).toMatch(/^tapedeck miss: client frame 1 \(setup\) was replayed already/);
    const miss = warned.find((m) => m.includes('realtime miss'));
    expect(miss).toContain('with --strict-order each recorded session replays once (session 1 of GET /ws/');
    expect(miss).not.toContain('responseModalities');
  } finally {
    await play.close();
  }
});
