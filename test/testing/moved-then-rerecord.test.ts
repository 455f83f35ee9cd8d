// A test file was renamed and its tapes moved with the command the miss printed: the recordings
// on them still name the test in the old file (`test/a.test.mjs > chat`). Recording the test
// again (TAPEDECK_MODE=record) then kept them beside the new ones, as another test's ("+1 added,
// 1 unused"), and `tapedeck diff` called the new answer "added, replay serves them in turn".
// Now a record run of the test takes the recordings of its own name in a test file that is gone
// as its own: it replaces them, and the tape holds the new answer alone, naming the test where it
// is now. A test of that name in a file that still exists keeps its recordings. Through
// openTestTape and the real openai SDK.
import OpenAI from 'openai';
import { execSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openTestTape } from '../../src/testing/session.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { formatSummary, readTapeReports, summarizeRun } from '../../src/testing/run-report.ts';
import { upstreamSuite } from '../proxy/upstream-suite.ts';

const suite = upstreamSuite('moved-then-rerecord');

/** The test `chat` of `file` on `tape`: its answer and the run summary. */
async function chat(root: string, file: string, tape: string, name: string, env: Record<string, string>, chaosFirst = false): Promise<{ answer: string; summary: string }> {
  const runDir = join(root, `run-${name}`);
  const t = openTestTape({ tape: join(root, tape), test: 'chat', file, root, env, runDir });
  // A test that asks for faults (none drawn here) before its first request opens its tape then.
  if (chaosFirst) t.chaos({ faults: { 500: 0 } });
  let answer: string;
  try {
    const client = new OpenAI({ baseURL: `${suite.upstream.url}/v1`, apiKey: 'sk-test', maxRetries: 0, fetch: t.fetch });
    const r = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] });
    answer = r.choices[0]!.message.content!;
  } finally {
    await t.close();
  }
  return { answer, summary: formatSummary(await summarizeRun(readTapeReports(runDir)), { root }) };
}

const tests = async (file: string) => (await readTape(file)).records.map((r) => (r.value as { test?: string }).test).filter((t) => t !== undefined);

describe('record mode after a test file moved', () => {
  it("replaces the recordings of the test's own name in its gone file", async () => {
    const root = join(suite.dir, 'moved');
    mkdirSync(join(root, 'test'), { recursive: true });
    const old = await chat(root, 'test/a.test.mjs', 'test/__tapes__/a.test/chat.tape', 'old', { TAPEDECK_MODE: 'record' });
    execSync('mkdir -p test/__tapes__ && mv test/__tapes__/a.test test/__tapes__/b.test', { cwd: root });
    const tape = join(root, 'test/__tapes__/b.test/chat.tape');
    expect(await tests(tape)).toEqual(['test/a.test.mjs > chat']);

    const again = await chat(root, 'test/b.test.mjs', 'test/__tapes__/b.test/chat.tape', 'again', { TAPEDECK_MODE: 'record' });
    expect(again.answer).not.toBe(old.answer);
    expect(await tests(tape)).toEqual(['test/b.test.mjs > chat']);
    expect(again.summary).toContain('1 re-recorded');
    expect(again.summary).not.toMatch(/[1-9]\d* unused/);
    expect((await chat(root, 'test/b.test.mjs', 'test/__tapes__/b.test/chat.tape', 'ci', { CI: 'true' })).answer).toBe(again.answer);
  });

  it('keeps the recordings of a test of that name in a file that exists', async () => {
    const root = join(suite.dir, 'shared');
    mkdirSync(join(root, 'test'), { recursive: true });
    writeFileSync(join(root, 'test/a.test.mjs'), '');
    await chat(root, 'test/a.test.mjs', 'tapes/chat.tape', 'a', { TAPEDECK_MODE: 'record' });
    await chat(root, 'test/b.test.mjs', 'tapes/chat.tape', 'b', { TAPEDECK_MODE: 'record' });
    expect((await tests(join(root, 'tapes/chat.tape'))).sort()).toEqual(['test/a.test.mjs > chat', 'test/b.test.mjs > chat']);
  });

  it('the same when the test asks for faults before its first request (the tape opened then)', async () => {
    const root = join(suite.dir, 'moved-chaos');
    mkdirSync(join(root, 'test'), { recursive: true });
    await chat(root, 'test/a.test.mjs', 'test/__tapes__/a.test/chat.tape', 'old', { TAPEDECK_MODE: 'record' });
    execSync('mkdir -p test/__tapes__ && mv test/__tapes__/a.test test/__tapes__/b.test', { cwd: root });
    const tape = join(root, 'test/__tapes__/b.test/chat.tape');
    const again = await chat(root, 'test/b.test.mjs', 'test/__tapes__/b.test/chat.tape', 'again', { TAPEDECK_MODE: 'record' }, true);
    expect(await tests(tape)).toEqual(['test/b.test.mjs > chat']);
    expect(again.summary).toContain('1 re-recorded');
  });
});
