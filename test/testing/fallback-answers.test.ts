// Under `match: 'hybrid'` (or 'signature') a request with no recording of its own may be answered
// by another request's recording. A test whose prompt was edited got the old prompt's answer in
// update mode (whose promise is: what is not recorded is sent live and recorded) and in CI, and
// the run summary said nothing: 0 misses, nothing recorded, the old recording counted used.
// Now update mode records the edited prompt; a replay that answers with a fallback is counted in
// the run summary, with the tape and what differed. Through a test tape, with the real openai SDK.
import OpenAI from 'openai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestTape } from '../../src/testing/session.ts';
import { formatSummary, readTapeReports, summarizeRun } from '../../src/testing/run-report.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { startUpstream, type Upstream } from '../proxy/fake-upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-fallback-answers-'));
let up: Upstream;
beforeAll(async () => {
  up = await startUpstream();
});
afterAll(async () => {
  await up.close();
  rmSync(dir, { recursive: true, force: true });
});

/** One run of the test asking `question` on `tape` with hybrid matching: its answer, how it matched, and the run's summary. */
async function ask(tape: string, name: string, question: string, env: Record<string, string>, match: 'hybrid' | 'sequential' = 'hybrid'): Promise<{ answer: string; how: string | null; summary: string; fallbacks: number }> {
  const runDir = join(dir, `run-${name}`);
  const t = openTestTape({ tape: join(dir, tape), env, runDir, test: 'asks a capital', match });
  let how: string | null = null;
  const f: typeof fetch = async (input, init) => {
    const r = await t.fetch(input as string, init);
    how = r.headers.get('x-tapedeck-match');
    return r;
  };
  let answer: string;
  try {
    const c = new OpenAI({ baseURL: `${up.url}/v1`, apiKey: 'sk-test', maxRetries: 0, fetch: f });
    const r = await c.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: question }] });
    answer = r.choices[0]!.message.content!;
  } finally {
    await t.close();
  }
  const s = await summarizeRun(readTapeReports(runDir));
  return { answer, how, summary: formatSummary(s, { root: dir }), fallbacks: s.fallbacks ?? 0 };
}

describe('an edited prompt under hybrid matching', () => {
  it('is recorded in update mode, not answered by the old prompt\'s recording', async () => {
    const first = await ask('update.tape', 'u1', 'What is the capital of France?', { TAPEDECK_MODE: 'record' });
    expect(first.answer).toContain('France');
    const calls = up.calls.length;
    const edited = await ask('update.tape', 'u2', 'What is the capital of Germany?', { TAPEDECK_MODE: 'update' });
    // Sent live (the fake answers with the question) and recorded beside the old one.
    expect(up.calls.length).toBe(calls + 1);
    expect(edited.answer).toContain('Germany');
    expect(edited.summary).toContain('1 recording added');
    expect((await readTape(join(dir, 'update.tape'))).records.filter((r) => (r.value as { kind?: string }).kind !== 'header').length).toBeGreaterThanOrEqual(2);
    // Replayed now by its own recording.
    const again = await ask('update.tape', 'u3', 'What is the capital of Germany?', { CI: 'true' });
    expect(again.how).toBe('exact');
    expect(again.answer).toBe(edited.answer);
  });

  it('answered in CI by another request\'s recording is counted in the run summary, with the tape and what differed', async () => {
    await ask('ci.tape', 'c1', 'What is the capital of France?', { TAPEDECK_MODE: 'record' });
    const ci = await ask('ci.tape', 'c2', 'What is the capital of Germany?', { CI: 'true' });
    // By design the fallback answers (CI records nothing) ...
    expect(ci.how).toBe('signature');
    expect(ci.answer).toContain('France');
    // ... and the summary says so.
    expect(ci.fallbacks).toBe(1);
    expect(ci.summary).toContain('ci.tape (replay): 1 answered by another request\'s recording');
    expect(ci.summary).toMatch(/1 call was answered by another request's recording \(match hybrid\)/);
    expect(ci.summary).toContain('Germany');
    // A run that answers exactly says nothing of it.
    const exact = await ask('ci.tape', 'c3', 'What is the capital of France?', { CI: 'true' });
    expect(exact.how).toBe('exact');
    expect(exact.summary).not.toContain("another request's recording");
  });

  it("under match: 'sequential' every call is answered in order by design: none is counted as another request's", async () => {
    await ask('seq.tape', 's1', 'What is the capital of France?', { TAPEDECK_MODE: 'record' }, 'sequential');
    const replay = await ask('seq.tape', 's2', 'What is the capital of France?', { CI: 'true' }, 'sequential');
    expect(replay.how).toBe('sequential');
    expect(replay.fallbacks).toBe(0);
    expect(replay.summary).not.toContain("another request's recording");
  });
});
