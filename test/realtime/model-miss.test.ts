// A realtime connect with another model (or Azure deployment) than the tape's sessions were
// recorded with: the model is in the URL, which finds the session, so such a connect missed
// with "no recording of this session (GET /v1/realtime?model=gpt-realtime-mini)" and nothing
// about the recorded one, while bumping the model is the commonest reason a replay misses. Now
// the miss names the sessions recorded at that path and the query they were recorded with.
// The real openai client over TLS, against the loopback fake of the Realtime API.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI, { AzureOpenAI } from 'openai';
import { OpenAIRealtimeWS } from 'openai/realtime/ws';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startProxy } from '../../src/proxy/server.ts';
import { makeLocalCertificate } from '../../src/proxy/tls.ts';
import { startFakeRealtime } from './fake-realtime.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-realtime-model-miss-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let tls: Awaited<ReturnType<typeof makeLocalCertificate>>;
beforeAll(async () => {
  tls = await makeLocalCertificate();
});

/** A session's first `session.update`, answered or not: the error events the client got. */
async function update(rt: OpenAIRealtimeWS): Promise<{ updated: boolean; errors: string[] }> {
  const errors: string[] = [];
  let updated = false;
  rt.on('error', (e) => errors.push(e.message));
  const closed = new Promise<void>((r) => rt.socket.once('close', () => r()));
  await new Promise((r) => rt.socket.once('open', r));
  const answered = new Promise<void>((r) => {
    rt.on('session.updated', () => {
      updated = true;
      r();
    });
    rt.on('error', () => r());
    void closed.then(() => r());
  });
  rt.send({ type: 'session.update', session: { type: 'realtime', instructions: 'be brief' } });
  await answered;
  rt.close();
  await closed;
  return { updated, errors };
}

const openai = (url: string, model: string) => new OpenAIRealtimeWS({ model, options: { ca: tls.ca } }, new OpenAI({ apiKey: 'sk-test-fixture-0123456789abcdef', baseURL: `${url}/v1` }));
const azure = (url: string, deployment: string) => OpenAIRealtimeWS.azure(new AzureOpenAI({ endpoint: url, apiKey: '5f4dcc3b5aa765d61d8327deb882cf99', apiVersion: '2025-04-01-preview', deployment }), { options: { ca: tls.ca } });

it('a connect with another model is told the model the tape has sessions of', async () => {
  const tape = join(dir, 'model.tape');
  const fake = await startFakeRealtime();
  const rec = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0, tls });
  try {
    expect(await update(openai(rec.url, 'gpt-realtime'))).toEqual({ updated: true, errors: [] });
    expect(await update(await azure(rec.url, 'voice-dep'))).toEqual({ updated: true, errors: [] });
  } finally {
    await rec.close();
    await fake.close();
  }
  const play = await startProxy({ tape, mode: 'replay', port: 0, tls, onWarning: () => {} });
  try {
    expect(await update(openai(play.url, 'gpt-realtime'))).toEqual({ updated: true, errors: [] });
    const mini = await update(openai(play.url, 'gpt-realtime-mini'));
    expect(mini.updated).toBe(false);
    expect(mini.errors).toHaveLength(1);
    expect(mini.errors[0]).toContain('no recording of this session (GET /v1/realtime?model=gpt-realtime-mini)');
    expect(mini.errors[0]).toContain('the 1 session recorded at /v1/realtime has model=gpt-realtime; this connect asks for model=gpt-realtime-mini');
    const dep = await update(await azure(play.url, 'voice-dep-2'));
    expect(dep.updated).toBe(false);
    expect(dep.errors[0]).toContain('the 1 session recorded at /openai/realtime has deployment=voice-dep; this connect asks for deployment=voice-dep-2');
  } finally {
    await play.close();
  }
});
