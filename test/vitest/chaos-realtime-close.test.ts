// docs/realtime.md's "In tests" recipe for a server that fails mid-answer, as a user runs it: a
// real vitest run of a small project whose tests talk to Gemini Live (@google/genai) and OpenAI
// Realtime (the openai SDK, over the proxy's TLS) through tape.serve(), with
// tape.chaos({ faults: { close: 1 }, attempts: 1 }), against the loopback fake realtime server.
// Before, the close was injected only on a replayed session: the first run (update mode, no
// tape) got the live session whole and then the 1011 on the reconnect, and every
// TAPEDECK_MODE=record run got no fault at all, so the recipe failed on the runs that record.
// Now a session recorded live is cut where its replay will be cut, recorded whole behind the
// fault, and the reconnect replays it: each run passes, the client sees the same cut in the
// recording run as in CI, and the API is reached once per test.
import { mkdirSync, readFileSync, readdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startFakeRealtime, type FakeRealtime } from '../realtime/fake-realtime.ts';
import { upstreamSuite } from '../proxy/upstream-suite.ts';
import { runnerProject, sh } from './runner-project.ts';

const suite = upstreamSuite('chaos-realtime-close');

let fake: FakeRealtime;
beforeAll(async () => {
  fake = await startFakeRealtime();
});
afterAll(() => fake.close());

const root = join(import.meta.dirname, '..', '..');

const voiceTest = `import { expect, test } from 'llm-tapedeck/vitest';
import { GoogleGenAI, Modality } from '@google/genai';
import OpenAI from 'openai';
import { OpenAIRealtimeWS } from 'openai/realtime/ws';

// One Gemini Live session: a question, then the answer's end or the server's close.
async function gemini(url) {
  const ai = new GoogleGenAI({ apiKey: process.env.GEMINI_API_KEY ?? 'unused-in-replay', httpOptions: { baseUrl: url } });
  const messages = [];
  let done;
  const over = new Promise((r) => (done = r));
  const s = await ai.live.connect({ model: 'gemini-live-2.5-flash-preview', config: { responseModalities: [Modality.TEXT] }, callbacks: {
    onmessage: (m) => { messages.push(JSON.parse(JSON.stringify(m))); if (m.serverContent?.turnComplete) done({ how: 'complete' }); },
    onclose: (e) => done({ how: 'closed ' + e.code, reason: e.reason }),
  } });
  s.sendClientContent({ turns: [{ role: 'user', parts: [{ text: 'hello there' }] }], turnComplete: true });
  const end = await over;
  s.close();
  const text = messages.map((m) => m.serverContent?.modelTurn?.parts?.[0]?.text ?? '').join('');
  return { ...end, text, messages };
}

// One OpenAI Realtime session: a message and a response, then the response's end or the server's close.
async function openai(url, ca) {
  const rt = new OpenAIRealtimeWS({ model: 'gpt-realtime', options: { ca } }, new OpenAI({ apiKey: process.env.OPENAI_API_KEY ?? 'unused-in-replay', baseURL: url + '/v1' }));
  const events = [];
  rt.on('event', (e) => events.push(e));
  rt.on('error', () => {});
  const closed = new Promise((r) => rt.socket.once('close', (code, reason) => r({ code, reason: String(reason) })));
  const done = new Promise((r) => { rt.on('response.done', () => r(true)); void closed.then(() => r(false)); });
  await new Promise((resolve, reject) => { rt.socket.once('open', resolve); rt.socket.once('error', reject); });
  rt.send({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'first' }] } });
  rt.send({ type: 'response.create' });
  const complete = await done;
  rt.close();
  const c = await closed;
  const text = events.filter((e) => e.type === 'response.output_audio_transcript.delta').map((e) => e.delta).join('');
  return complete ? { how: 'complete', text, events } : { how: 'closed ' + c.code, reason: c.reason, text, events };
}

test('gemini: the agent reconnects after the server fails mid-answer', async ({ tape }) => {
  const { url } = await tape.serve({ upstream: process.env.UPSTREAM, tls: false });
  tape.chaos({ faults: { close: 1 }, attempts: 1 });
  const a = await gemini(url);
  const b = await gemini(url);
  console.log('SEEN gemini ' + JSON.stringify({ a, b }));
  expect(a.how).toBe('closed 1011');
  expect(a.reason).toMatch(/^tapedeck chaos: close injected \\(1011\\) in the middle of a response; seed \\d+$/);
  expect(b.how).toBe('complete');
  expect(b.text).toBe('You said: hello there');
  // Cut in the middle of the answer the reconnect gets whole.
  expect(a.messages).toEqual(b.messages.slice(0, a.messages.length));
  expect(a.text).not.toBe('');
  expect(a.text.length).toBeLessThan(b.text.length);
});

test('openai: the agent reconnects after the server fails mid-answer', async ({ tape }) => {
  const { url, ca } = await tape.serve({ upstream: process.env.UPSTREAM });
  tape.chaos({ faults: { close: 1 }, attempts: 1 });
  const a = await openai(url, ca);
  const b = await openai(url, ca);
  console.log('SEEN openai ' + JSON.stringify({ a, b }));
  expect(a.how).toBe('closed 1011');
  expect(a.reason).toMatch(/^tapedeck chaos: close injected \\(1011\\) in the middle of a response; seed \\d+$/);
  expect(b.how).toBe('complete');
  expect(b.text).toBe('You said: first');
  expect(a.events.map((e) => e.type)).toContain('response.created');
  expect(a.events).toEqual(b.events.slice(0, a.events.length));
  expect(a.events.length).toBeLessThan(b.events.length - 1);
});
`;

/** The project: the recipe for each provider, one test each (a tape each), through the plugin for its summary. */
function project(): string {
  const dir = runnerProject(suite.dir, 'vitest-realtime-close', {
    'vitest.config.mjs': `import { defineConfig } from 'vitest/config';\nimport { tapedeck } from 'llm-tapedeck/vitest/plugin';\nexport default defineConfig({ plugins: [tapedeck()] });\n`,
    'voice.test.mjs': voiceTest,
  });
  mkdirSync(join(dir, 'node_modules', '@google'), { recursive: true });
  symlinkSync(join(root, 'node_modules', '@google', 'genai'), join(dir, 'node_modules', '@google', 'genai'));
  return dir;
}

interface Seen {
  how: string;
  reason?: string;
  text: string;
}

/** What each test's two connects saw, by provider. */
function seen(out: string): Record<string, { a: Seen; b: Seen } & Record<string, unknown>> {
  const got: Record<string, { a: Seen; b: Seen }> = {};
  for (const m of out.matchAll(/^SEEN (\w+) (.*)$/gm)) got[m[1]!] = JSON.parse(m[2]!) as { a: Seen; b: Seen };
  return got;
}

/** The gist of what a connect saw: how it ended, and the answer's text so far. */
const gist = (s: Seen) => ({ how: s.how, text: s.text });

const summary = (out: string) => out.split('\n').find((l) => l.startsWith('tapedeck: '));

it('the recipe passes on its first run (update mode, no tape), on a TAPEDECK_MODE=record run and in CI, with the same cut in each', { timeout: 180_000 }, async () => {
  const dir = project();
  const tapes = join(dir, '__tapes__', 'voice.test');
  const up = { UPSTREAM: fake.url };

  // Locally, no tape yet: update mode. The first connect goes to the API, is cut mid-answer
  // (1011) and recorded whole behind the cut; the reconnect replays it.
  const first = await sh('npx vitest run', dir, up);
  expect(first.code, first.out).toBe(0);
  const firstSeen = seen(first.out);
  const cutGemini = { how: 'closed 1011', text: 'You said: hello ' };
  expect(gist(firstSeen.gemini!.a)).toEqual(cutGemini);
  expect(gist(firstSeen.gemini!.b)).toEqual({ how: 'complete', text: 'You said: hello there' });
  expect(firstSeen.openai!.a.how).toBe('closed 1011');
  expect(gist(firstSeen.openai!.b)).toEqual({ how: 'complete', text: 'You said: first' });
  // One connect to the API per test: the reconnects replayed.
  expect(fake.connects).toHaveLength(2);
  expect(summary(first.out)).toBe('tapedeck: 2 tapes, 2 written, 2 recordings added, 2 replayed, 0 misses, 0 unused recordings, 2 faults injected (close 2)');
  expect(readdirSync(tapes).sort()).toEqual(['gemini-the-agent-reconnects-after-the-server-fails-mid-answer.tape', 'openai-the-agent-reconnects-after-the-server-fails-mid-answer.tape']);

  // Re-recorded on purpose: the same, in record mode.
  const record = await sh('npx vitest run', dir, { ...up, TAPEDECK_MODE: 'record' });
  expect(record.code, record.out).toBe(0);
  const recordSeen = seen(record.out);
  expect(gist(recordSeen.gemini!.a)).toEqual(cutGemini);
  expect(gist(recordSeen.gemini!.b)).toEqual({ how: 'complete', text: 'You said: hello there' });
  expect(recordSeen.openai!.a.how).toBe('closed 1011');
  expect(gist(recordSeen.openai!.b)).toEqual({ how: 'complete', text: 'You said: first' });
  expect(fake.connects).toHaveLength(4);
  expect(summary(record.out)).toMatch(/^tapedeck: 2 tapes, 2 written, 2 recordings added, 2 replayed, 0 misses, 0 unused recordings, 2 faults injected \(close 2\)/);

  // CI replays the tapes the record run wrote, the API out of reach: the very frames the
  // recording run's client saw, cut at the same place, and the same whole reconnect.
  const files = readdirSync(tapes).map((f) => join(tapes, f));
  const bytes = files.map((f) => readFileSync(f));
  const ci = await sh('npx vitest run', dir, { UPSTREAM: 'http://127.0.0.1:9', CI: 'true' });
  expect(ci.code, ci.out).toBe(0);
  const ciSeen = seen(ci.out);
  const noReason = (s: Seen & Record<string, unknown>) => ({ ...s, reason: undefined });
  for (const p of ['gemini', 'openai']) {
    // The seed in the close reason is each run's own (random): all else is the same.
    expect(noReason(ciSeen[p]!.a)).toEqual(noReason(recordSeen[p]!.a));
    expect(ciSeen[p]!.b).toEqual(recordSeen[p]!.b);
  }
  expect(summary(ci.out)).toBe('tapedeck: 2 tapes, 0 written, 0 recordings added, 2 replayed, 0 misses, 0 unused recordings, 2 faults injected (close 2)');
  expect(files.map((f, i) => readFileSync(f).equals(bytes[i]!))).toEqual([true, true]);
  expect(fake.connects).toHaveLength(4);
});
