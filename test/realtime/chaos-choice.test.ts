// Chaos's close on replayed sessions chosen by the client's frames. Two sessions of one voice
// agent send the same session.update and differ at their second frame ("Hello there" vs
// "Goodbye"), as a test suite's sessions do. Under `close:1, attempts: 1` each connect must still
// get the session its frames choose, in any connect order, and each reconnect the session its
// own fault was cut from (never another client's), as without chaos; a connect that misses is
// a miss, its fault never counted. The real openai OpenAIRealtimeWS through the proxy over TLS,
// against sessions recorded from the loopback fake realtime server.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { OpenAIRealtimeWS } from 'openai/realtime/ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxy } from '../../src/proxy/server.ts';
import { makeLocalCertificate } from '../../src/proxy/tls.ts';
import { startFakeRealtime, type FakeRealtime } from './fake-realtime.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-realtime-chaos-choice-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Said {
  code: number;
  reason: string;
  transcript?: string;
  errors: string[];
}

/** One agent session: the same session.update, then `text`, a response, the client's close (unless the server closed first). */
async function agent(url: string, ca: string, text: string): Promise<Said> {
  const rt = new OpenAIRealtimeWS({ model: 'gpt-realtime', options: { ca } }, new OpenAI({ apiKey: 'sk-test-chaos-choice-0123456789', baseURL: `${url}/v1` }));
  const errors: string[] = [];
  rt.on('error', (e) => errors.push(e.message));
  const closed = new Promise<{ code: number; reason: string }>((r) => rt.socket.once('close', (code, reason) => r({ code, reason: reason.toString() })));
  const next = (type: string) =>
    new Promise<Record<string, any> | undefined>((r) => {
      rt.on(type as 'response.done', (e) => r(e as Record<string, any>));
      void closed.then(() => r(undefined));
    });
  const created = next('session.created');
  await new Promise<void>((resolve, reject) => {
    rt.socket.once('open', () => resolve());
    rt.socket.once('error', reject);
  });
  let transcript: string | undefined;
  if (await created) {
    const updated = next('session.updated');
    rt.send({ type: 'session.update', session: { type: 'realtime', instructions: 'Be brief.' } });
    if (await updated) {
      const done = next('response.done');
      rt.send({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] } });
      rt.send({ type: 'response.create' });
      const d = await done;
      transcript = (d?.response?.output?.[0] as { content?: { transcript?: string }[] } | undefined)?.content?.[0]?.transcript;
    }
  }
  rt.close();
  const { code, reason } = await closed;
  return { code, reason, errors, ...(transcript !== undefined ? { transcript } : {}) };
}

describe('realtime chaos: close on sessions chosen by their frames', () => {
  let tls: Awaited<ReturnType<typeof makeLocalCertificate>>;
  let fake: FakeRealtime;
  const tape = join(dir, 'agent.tape');

  beforeAll(async () => {
    tls = await makeLocalCertificate();
    fake = await startFakeRealtime();
    const rec = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0, tls });
    try {
      expect((await agent(rec.url, tls.ca, 'Hello there')).transcript).toBe('You said: Hello there');
      expect((await agent(rec.url, tls.ca, 'Goodbye')).transcript).toBe('You said: Goodbye');
    } finally {
      await rec.close();
    }
  });
  afterAll(() => fake.close());

  const replay = () => startProxy({ tape, mode: 'replay', port: 0, tls, chaos: { faults: { close: 1 }, attempts: 1, seed: 3 }, onWarning: () => {} });

  it('in another order than recorded (Goodbye, its reconnect, Hello, its reconnect): each connect cut mid-answer, each reconnect gets its own session whole', async () => {
    const proxy = await replay();
    try {
      const runs: Said[] = [];
      for (const text of ['Goodbye', 'Goodbye', 'Hello there', 'Hello there']) runs.push(await agent(proxy.url, tls.ca, text));
      expect(runs.map((r) => r.code)).toEqual([1011, 1000, 1011, 1000]);
      expect(runs[0]!.reason).toMatch(/tapedeck chaos: close injected \(1011\) in the middle of a response; seed 3/);
      expect(runs.map((r) => r.transcript)).toEqual([undefined, 'You said: Goodbye', undefined, 'You said: Hello there']);
      expect(runs.flatMap((r) => r.errors)).toEqual([]);
      const st = proxy.handler.stats();
      expect(st.faults).toEqual({ close: 2 });
      expect(st.realtime).toMatchObject({ replayed: 2, misses: 0 });
    } finally {
      await proxy.close();
    }
  });

  it('interleaved (Hello, Goodbye, then their reconnects): a reconnect gets the session its own fault was cut from, never the other client’s', async () => {
    const proxy = await replay();
    try {
      const runs: Said[] = [];
      for (const text of ['Hello there', 'Goodbye', 'Hello there', 'Goodbye']) runs.push(await agent(proxy.url, tls.ca, text));
      expect(runs.map((r) => r.code)).toEqual([1011, 1011, 1000, 1000]);
      expect(runs.map((r) => r.transcript)).toEqual([undefined, undefined, 'You said: Hello there', 'You said: Goodbye']);
      expect(runs.flatMap((r) => r.errors)).toEqual([]);
      expect(proxy.handler.stats().faults).toEqual({ close: 2 });
      expect(proxy.handler.stats().realtime).toMatchObject({ replayed: 2, misses: 0 });
    } finally {
      await proxy.close();
    }
  });

  it('a connect whose frames the tape does not have misses, and no fault is counted for it', async () => {
    const proxy = await replay();
    try {
      const gamma = await agent(proxy.url, tls.ca, 'Gamma');
      expect(gamma.code).toBe(1008);
      expect(gamma.errors.join('\n')).toMatch(/tapedeck miss: client frame 2 \(conversation.item.create\)/);
      expect(proxy.handler.stats().faults).toBeUndefined();
      // The sessions it did not use are still there, each faulted once and whole on reconnect.
      const runs: Said[] = [];
      for (const text of ['Hello there', 'Hello there']) runs.push(await agent(proxy.url, tls.ca, text));
      expect(runs.map((r) => r.code)).toEqual([1011, 1000]);
      expect(runs[1]!.transcript).toBe('You said: Hello there');
      expect(proxy.handler.stats().faults).toEqual({ close: 1 });
    } finally {
      await proxy.close();
    }
  });
});
