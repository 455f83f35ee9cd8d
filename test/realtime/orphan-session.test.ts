// A deleted test's tape that holds realtime sessions: the run summary reports it unused and the
// prune removes it, counting each session as the one recording it is (its head), not as its
// head, parts and audio blobs. Before, the orphan's count was its raw records: one session said
// "4 unused recordings" there, and "1" on a tape a test still opens.
import { mkdirSync, mkdtempSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GoogleGenAI, Modality } from '@google/genai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { readTape } from '../../src/store/tape-file.ts';
import { recordCount } from '../../src/testing/orphan-tapes.ts';
import { formatSummary, pruneUnused, readTapeReports, summarizeRun } from '../../src/testing/run-report.ts';
import { openTestTape } from '../../src/testing/session.ts';
import { startFakeRealtime, type FakeRealtime } from './fake-realtime.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-orphan-session-'));
let fake: FakeRealtime;
beforeAll(async () => {
  fake = await startFakeRealtime();
});
afterAll(async () => {
  await fake.close();
  rmSync(dir, { recursive: true, force: true });
});

/** One Gemini Live session through the proxy at `url`: says `text`, the answer comes whole (text and audio), then the client closes. */
async function say(url: string, text: string): Promise<void> {
  const ai = new GoogleGenAI({ apiKey: 'unused-in-replay', httpOptions: { baseUrl: url } });
  let done!: () => void;
  const over = new Promise<void>((r) => (done = r));
  const s = await ai.live.connect({ model: 'gemini-live-2.5-flash-preview', config: { responseModalities: [Modality.AUDIO] }, callbacks: { onmessage: (m) => void (m.serverContent?.turnComplete && done()) } });
  s.sendClientContent({ turns: [{ role: 'user', parts: [{ text }] }], turnComplete: true });
  await over;
  s.close();
}

/** A test's tape, recorded or replayed through its proxy in a run whose reports go to `runDir`. */
async function talk(tape: string, test: string, mode: 'record' | 'replay', runDir: string, texts: string[]): Promise<void> {
  const t = openTestTape({ tape, mode, test: `voice > ${test}`, file: join(dir, 'voice.test.ts'), root: dir, runDir, env: {} });
  const { url } = await t.serve({ upstream: fake.url, tls: false });
  for (const text of texts) await say(url, text);
  await t.close();
}

it('a tape no test opened counts its sessions, one recording each, and the prune removes it', async () => {
  const folder = join(dir, '__tapes__', 'voice.test');
  mkdirSync(folder, { recursive: true });
  const kept = join(folder, 'kept.tape');
  const deleted = join(folder, 'deleted.tape');
  const rec = mkdtempSync(join(dir, 'run-'));
  await talk(kept, 'kept', 'record', rec, ['hello']);
  await talk(deleted, 'deleted', 'record', rec, ['first', 'second']);
  // Two sessions: two heads, their parts, their audio.
  const records = (await readTape(deleted)).records.length;
  expect(records).toBeGreaterThan(4);
  expect(await recordCount(deleted)).toBe(2);

  // The test is gone: only the kept one runs.
  const run = mkdtempSync(join(dir, 'run-'));
  await talk(kept, 'kept', 'replay', run, ['hello']);
  const summary = await summarizeRun(readTapeReports(run), { testFiles: [join(dir, 'voice.test.ts')] });
  expect(summary.unused).toBe(2);
  expect(summary.tapes.find((t) => t.tape === deleted)).toMatchObject({ orphan: true, unused: 2 });
  expect(formatSummary(summary, { root: dir })).toContain('__tapes__/voice.test/deleted.tape: 2 unused (no test opened this tape: a deleted or renamed test)');
  expect(await pruneUnused(summary)).toBe(2);
  expect(existsSync(deleted)).toBe(false);
  expect(existsSync(kept)).toBe(true);
});
