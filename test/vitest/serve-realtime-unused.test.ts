// Realtime sessions on a test's tape count in the run summary as HTTP recordings do: one no
// connect of the run replayed (or one that missed) is unused, and TAPEDECK_PRUNE=1 after a
// passing run drops it with its parts and its audio, leaving the session the run used whole.
// Before, realtime sessions were never counted unused nor pruned: a run that used one of two
// said "0 unused recordings" and kept both. A real vitest run of a small project (the plugin's
// summary), its test talking to Gemini Live with @google/genai through tape.serve(), against the
// loopback fake of the Live API.
import { mkdirSync, mkdtempSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { GoogleGenAI, Modality } from '@google/genai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatSummary, pruneUnused, readTapeReports, summarizeRun } from '../../src/testing/run-report.ts';
import { openTestTape } from '../../src/testing/session.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { isRealtimeRecord, type RealtimeRecord } from '../../src/store/records.ts';
import { startFakeRealtime, type FakeRealtime } from '../realtime/fake-realtime.ts';
import { upstreamSuite } from '../proxy/upstream-suite.ts';
import { runnerProject, sh } from './runner-project.ts';

const suite = upstreamSuite('serve-realtime-unused');

let fake: FakeRealtime;
beforeAll(async () => {
  fake = await startFakeRealtime();
});
afterAll(() => fake.close());

const root = join(import.meta.dirname, '..', '..');

/** The project: one test that says each of SAY's words in a Gemini Live session of its own, through its tape's proxy. */
function project(): string {
  const dir = runnerProject(suite.dir, 'vitest-realtime-unused', {
    'vitest.config.mjs': `import { defineConfig } from 'vitest/config';\nimport { tapedeck } from 'llm-tapedeck/vitest/plugin';\nexport default defineConfig({ plugins: [tapedeck()] });\n`,
    'voice.test.mjs': `import { test } from 'llm-tapedeck/vitest';
import { GoogleGenAI, Modality } from '@google/genai';
async function say(url, text) {
  const ai = new GoogleGenAI({ apiKey: 'unused-in-replay', httpOptions: { baseUrl: url } });
  const parts = [];
  let done;
  const over = new Promise((r) => (done = r));
  const s = await ai.live.connect({ model: 'gemini-live-2.5-flash-preview', config: { responseModalities: [Modality.TEXT] }, callbacks: {
    onmessage: (m) => { parts.push(m.serverContent?.modelTurn?.parts?.[0]?.text ?? ''); if (m.serverContent?.turnComplete) done(); },
    onclose: (e) => done(e.reason),
  } });
  s.sendClientContent({ turns: [{ role: 'user', parts: [{ text }] }], turnComplete: true });
  const closed = await over;
  s.close();
  return closed ?? parts.join('');
}
test('talks', async ({ tape }) => {
  const { url } = await tape.serve({ upstream: process.env.UPSTREAM, tls: false });
  const said = [];
  for (const text of process.env.SAY.split(',')) said.push(await say(url, text));
  console.log('SAID ' + JSON.stringify(said));
});
`,
  });
  mkdirSync(join(dir, 'node_modules', '@google'), { recursive: true });
  symlinkSync(join(root, 'node_modules', '@google', 'genai'), join(dir, 'node_modules', '@google', 'genai'));
  return dir;
}

const said = (out: string): string[] | undefined => {
  const m = /SAID (\[.*\])/.exec(out);
  return m ? (JSON.parse(m[1]!) as string[]) : undefined;
};

/** The realtime records of the tape: session heads, parts, blobs. */
async function sessions(tape: string) {
  const all = (await readTape(tape)).records.map((r) => r.value).filter(isRealtimeRecord) as RealtimeRecord[];
  const heads = all.filter((r) => r.role === 'session');
  const parts = all.filter((r) => r.role === 'part');
  const blobs = all.filter((r) => r.role === 'blob').map((r) => r.key.slice('blob:'.length));
  const referred = new Set(parts.flatMap((p) => p.frames.flatMap((f) => ('audio' in f ? [f.audio.blob] : 'blob' in f ? [f.blob] : 'blobs' in f ? (f.blobs ?? []) : []))));
  return { heads, parts, blobs, referred };
}

describe('realtime sessions of tape.serve() in the run summary', () => {
  it('one no run replayed is unused, a miss leaves its recording unused, and TAPEDECK_PRUNE=1 drops the unused one whole', { timeout: 120_000 }, async () => {
    const dir = project();
    const tape = join(dir, '__tapes__', 'voice.test', 'talks.tape');
    const rec = await sh('npx vitest run', dir, { UPSTREAM: fake.url, TAPEDECK_MODE: 'record', SAY: 'first,second' });
    expect(rec.code, rec.out).toBe(0);
    expect(said(rec.out), rec.out).toEqual(['You said: first', 'You said: second']);
    expect(rec.out).toMatch(/talks\.tape \(record\): \+2 added/);
    const recorded = await sessions(tape);
    expect(recorded.heads).toHaveLength(2);
    expect(recorded.blobs).toHaveLength(2);

    const ci = { UPSTREAM: 'http://127.0.0.1:9', CI: 'true', TAPEDECK_PRUNE: '1' };
    // The second session changed: it misses, and its recording is unused (not pruned: the run failed).
    const missed = await sh('npx vitest run', dir, { ...ci, SAY: 'first,changed' });
    expect(missed.code, missed.out).not.toBe(0);
    expect(missed.out).toMatch(/tapedeck: 1 tape, 0 written, 0 recordings added, 1 replayed, 1 miss, 1 unused recording/);
    expect(missed.out).toMatch(/talks\.tape \(replay\): 1 missed, 1 unused/);
    expect((await sessions(tape)).heads).toHaveLength(2);

    // A passing run that uses only the first session: the second is unused, and pruned whole.
    const one = await sh('npx vitest run', dir, { ...ci, SAY: 'first' });
    expect(one.code, one.out).toBe(0);
    expect(said(one.out)).toEqual(['You said: first']);
    expect(one.out).toMatch(/tapedeck: 1 tape, 0 written, 0 recordings added, 1 replayed, 0 misses, 1 unused recording \(pruned\)/);
    expect(one.out).toMatch(/talks\.tape \(replay\): 1 unused, pruned/);
    expect(one.out).toMatch(/tapedeck: pruned 1 unused recording/);
    const left = await sessions(tape);
    expect(left.heads.map((h) => h.sid)).toEqual([recorded.heads[0]!.sid]);
    // Every part left is the kept session's, every blob left is referred to, and nothing it refers to is gone.
    expect(new Set(left.parts.map((p) => p.sid))).toEqual(new Set([recorded.heads[0]!.sid]));
    expect(left.parts).toHaveLength(recorded.parts.filter((p) => p.sid === recorded.heads[0]!.sid).length);
    expect(new Set(left.blobs)).toEqual(left.referred);
    expect(left.blobs).toHaveLength(1);

    // The session kept still replays, and is used.
    const again = await sh('npx vitest run', dir, { ...ci, SAY: 'first' });
    expect(again.code, again.out).toBe(0);
    expect(said(again.out)).toEqual(['You said: first']);
    expect(again.out).toMatch(/, 1 replayed, 0 misses, 0 unused recordings/);
  });
});

/** One Gemini Live session through the proxy at `url`: says `text`; the answer, or the close reason of a miss. */
async function say(url: string, text: string): Promise<string> {
  const ai = new GoogleGenAI({ apiKey: 'unused-in-replay', httpOptions: { baseUrl: url } });
  const parts: string[] = [];
  let done!: (reason?: string) => void;
  const over = new Promise<string | undefined>((r) => (done = r));
  const s = await ai.live.connect({
    model: 'gemini-live-2.5-flash-preview',
    config: { responseModalities: [Modality.TEXT] },
    callbacks: {
      onmessage: (m) => {
        parts.push(m.serverContent?.modelTurn?.parts?.[0]?.text ?? '');
        if (m.serverContent?.turnComplete) done();
      },
      onclose: (e: { reason: string }) => done(e.reason),
    },
  });
  s.sendClientContent({ turns: [{ role: 'user', parts: [{ text }] }], turnComplete: true });
  const closed = await over;
  s.close();
  return closed ?? parts.join('');
}

/** A run of one test saying `texts` in sessions through its tape's proxy in `mode`: the run's summary, then pruned (as a passing run does with TAPEDECK_PRUNE=1). */
async function run(tape: string, mode: 'record' | 'replay', texts: string[]) {
  const runDir = mkdtempSync(join(suite.dir, 'run-'));
  const t = openTestTape({ tape, mode, test: 'voice > talks', file: 'voice.test.ts', root: suite.dir, runDir });
  const { url } = await t.serve({ upstream: fake.url, tls: false });
  const got: string[] = [];
  for (const text of texts) got.push(await say(url, text));
  await t.close().catch(() => {});
  const summary = await summarizeRun(readTapeReports(runDir));
  return { got, summary, text: formatSummary(summary, { root: suite.dir }), pruned: mode === 'replay' && summary.misses.length === 0 ? await pruneUnused(summary) : 0 };
}

describe("a test's proxy and its realtime sessions (in process)", () => {
  it('counts the sessions it recorded and replayed as used; a prune drops the others with their parts and audio', async () => {
    const tape = join(suite.dir, 'voice.tape');
    const recorded = await run(tape, 'record', ['first', 'second']);
    expect(recorded.got).toEqual(['You said: first', 'You said: second']);
    expect(recorded.summary.unused).toBe(0);
    const before = await sessions(tape);

    const missed = await run(tape, 'replay', ['first', 'changed']);
    expect(missed.got[1]).toMatch(/^tapedeck miss: client frame 2/);
    expect(missed.summary).toMatchObject({ unused: 1 });
    expect(missed.text).toMatch(/voice\.tape \(replay\): 1 missed, 1 unused$/m);

    const one = await run(tape, 'replay', ['first']);
    expect(one.got).toEqual(['You said: first']);
    expect(one.text).toMatch(/voice\.tape \(replay\): 1 unused$/m);
    expect(one.pruned).toBe(1);
    const left = await sessions(tape);
    expect(left.heads.map((h) => h.sid)).toEqual([before.heads[0]!.sid]);
    expect(new Set(left.parts.map((p) => p.sid))).toEqual(new Set([before.heads[0]!.sid]));
    expect(new Set(left.blobs)).toEqual(left.referred);

    const again = await run(tape, 'replay', ['first']);
    expect(again.got).toEqual(['You said: first']);
    expect(again.summary.unused).toBe(0);
  });
});
