// examples/vitest, run by vitest itself (spawned, as a user runs it) on a copy in a temp folder:
// record against the example's fake OpenAI API, replay in CI with the API stopped, CI with one
// recording deleted (fails with the record command, writes nothing; the printed command then
// records it), two workers on one tape (threads, then forks), the unused-recordings summary and
// the prune it prints, and tapes closed after a timeout.
import { createHash } from 'node:crypto';
import { cpSync, existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readTape } from '../../src/store/tape-file.ts';
import { exampleProject, repo, sharedTestFile, summaryLine, type ExampleProject, type Run } from './example-project.ts';

let p: ExampleProject;
let project: string;
let tapes: string;
let fake: ExampleProject['fake'];
const vitest = (args: string[], env: Record<string, string> = {}): Promise<Run> => p.vitest(args, env);
const listTapes = () => p.listTapes();

const timeouts = `
import OpenAI from 'openai';
import { createOpenAI } from '@ai-sdk/openai';
import { streamText } from 'ai';
import { inject } from 'vitest';
import { expect, test } from 'llm-tapedeck/vitest';
const client = (fetch: typeof globalThis.fetch) => new OpenAI({ baseURL: inject('openaiBaseURL'), apiKey: 'sk-x', fetch, maxRetries: 0 });
test('times out', { timeout: 1500 }, async ({ tape }) => {
  await client(tape.fetch).chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'never read' }] }).asResponse();
  await new Promise(() => {});
});
// The AI SDK's streamText gives a miss to onError and then rejects \`text\` with "No output generated".
test('stream text miss', async ({ tape }) => {
  const model = createOpenAI({ baseURL: inject('openaiBaseURL'), apiKey: 'sk-x', fetch: tape.fetch }).chat('gpt-4o-mini');
  const r = streamText({ model, prompt: 'never recorded', maxRetries: 0, onError: () => {} });
  await r.text;
});
test('swallows a miss', async ({ tape }) => {
  try {
    await client(tape.fetch).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'swallowed' }] });
  } catch {}
  expect(1).toBe(1);
});
// Two concurrent tests in one worker: the second install() of the global fetch is refused.
const state = globalThis as { aInstalled?: boolean; bDone?: () => void };
const bDone = new Promise<void>((r) => (state.bDone = r));
test.concurrent('concurrent install a', async ({ tape }) => {
  tape.install();
  state.aInstalled = true;
  await bDone;
});
test.concurrent('concurrent install b', async ({ tape }) => {
  while (!state.aInstalled) await new Promise((r) => setImmediate(r));
  try {
    expect(() => tape.install()).toThrow(/another test .* has the global fetch switched to its tape/);
  } finally {
    state.bDone!();
  }
});
`;

function snapshot(): Record<string, string> {
  return Object.fromEntries(listTapes().map((t) => [t, createHash('sha256').update(readFileSync(join(tapes, t))).digest('hex')]));
}

beforeAll(async () => {
  p = await exampleProject({
    'test/shared-a.test.ts': sharedTestFile('alpha'),
    'test/shared-b.test.ts': sharedTestFile('beta'),
  });
  ({ dir: project, tapes, fake } = p);
});
afterAll(async () => {
  await p?.close();
});

const EXAMPLE_TAPES = [
  'ai-sdk.test/ai-sdk/calls-a-tool.tape',
  'ai-sdk.test/ai-sdk/generates-text.tape',
  'ai-sdk.test/ai-sdk/streams-text.tape',
  'global-fetch.test/app-code-on-the-global-fetch.tape',
  'openai.test/openai-sdk/answers-a-question.tape',
  'openai.test/openai-sdk/calls-a-tool.tape',
  'openai.test/openai-sdk/streams-an-answer.tape',
];

describe('examples/vitest', { timeout: 180_000 }, () => {
  it('0. the committed tapes replay in CI with no API (a fresh clone passes)', async () => {
    cpSync(join(repo, 'examples', 'vitest', 'test', '__tapes__'), tapes, { recursive: true });
    expect(listTapes()).toEqual(EXAMPLE_TAPES);
    const r = await vitest(['--exclude', 'test/shared-*'], { CI: 'true', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' });
    expect(r.code, r.out).toBe(0);
    expect(summaryLine(r)).toBe('tapedeck: 7 tapes, 0 written, 0 recordings added, 7 replayed, 0 misses, 0 unused recordings');
    rmSync(tapes, { recursive: true });
  });

  it('1. records every test on its own tape, with the summary', async () => {
    const r = await vitest(['--exclude', 'test/shared-*']);
    expect(r.code, r.out).toBe(0);
    expect(listTapes()).toEqual(EXAMPLE_TAPES);
    expect(fake.calls).toHaveLength(7);
    expect(summaryLine(r)).toBe('tapedeck: 7 tapes, 7 written, 7 recordings added, 0 replayed, 0 misses, 0 unused recordings');
  });

  it('2. replays in CI with the API stopped, writing nothing', async () => {
    const before = snapshot();
    const r = await vitest(['--exclude', 'test/shared-*'], { CI: 'true', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' });
    expect(r.code, r.out).toBe(0);
    expect(summaryLine(r)).toBe('tapedeck: 7 tapes, 0 written, 0 recordings added, 7 replayed, 0 misses, 0 unused recordings');
    expect(snapshot()).toEqual(before);
    expect(fake.calls).toHaveLength(7);
  });

  it('3. CI with a recording deleted: fails with the exact record command and writes nothing; that command records it', async () => {
    rmSync(join(tapes, 'openai.test/openai-sdk/answers-a-question.tape'));
    const before = snapshot();
    // One file keeps the run short; the other files' tapes are covered by steps 1 and 2.
    const r = await vitest(['test/openai.test.ts'], { CI: 'true' });
    expect(r.code).toBe(1);
    const command = "TAPEDECK_MODE=update npx vitest run test/openai.test.ts -t '^openai sdk answers a question$'";
    expect(r.out).toContain(`400 tapedeck miss: this test was never recorded (CI is set: nothing records): no tape at test/__tapes__/openai.test/openai-sdk/answers-a-question.tape\nRecord it: ${command}`);
    expect(summaryLine(r)).toBe('tapedeck: 3 tapes, 0 written, 0 recordings added, 2 replayed, 1 miss, 0 unused recordings');
    expect(r.out).toContain(`record it: ${command}`);
    expect(snapshot()).toEqual(before);
    expect(fake.calls).toHaveLength(7);

    // The printed command, as printed (npx -> the same vitest binary).
    const [, pattern] = /-t '(.*)'$/.exec(command)!;
    const again = await vitest(['test/openai.test.ts', '-t', pattern!], { TAPEDECK_MODE: 'update' });
    expect(again.code, again.out).toBe(0);
    expect(summaryLine(again)).toBe('tapedeck: 1 tape, 1 written, 1 recording added, 0 replayed, 0 misses, 0 unused recordings');
    expect(listTapes()).toEqual(EXAMPLE_TAPES);
    expect(fake.calls).toHaveLength(8);
  });

  it('4. two workers on one tape: threads record, forks replay, then forks record', async () => {
    const files = ['test/shared-a.test.ts', 'test/shared-b.test.ts', '--maxWorkers=2', '--fileParallelism'];
    const sharedTape = join(project, 'shared', 'one.tape');
    const check = async () => {
      const t = await readTape(sharedTape);
      expect(t.warnings).toEqual([]);
      const prompts = t.records.map((rec) => (rec.value as { request: { body: { messages: { content: unknown }[] } } }).request.body.messages[0]!.content);
      expect(prompts.sort()).toEqual(['alpha 1', 'alpha 2', 'alpha 3', 'alpha 4', 'beta 1', 'beta 2', 'beta 3', 'beta 4']);
    };
    const threads = await vitest([...files, '--pool=threads']);
    expect(threads.code, threads.out).toBe(0);
    expect(summaryLine(threads)).toBe('tapedeck: 1 tape, 1 written, 8 recordings added, 0 replayed, 0 misses, 0 unused recordings');
    await check();

    const replay = await vitest([...files, '--pool=forks'], { CI: '1', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' });
    expect(replay.code, replay.out).toBe(0);
    expect(summaryLine(replay)).toBe('tapedeck: 1 tape, 0 written, 0 recordings added, 8 replayed, 0 misses, 0 unused recordings');

    rmSync(sharedTape);
    const forks = await vitest([...files, '--pool=forks']);
    expect(forks.code, forks.out).toBe(0);
    expect(summaryLine(forks)).toBe('tapedeck: 1 tape, 1 written, 8 recordings added, 0 replayed, 0 misses, 0 unused recordings');
    await check();
  });

  it('5. a changed prompt, recorded with vitest --mode update, leaves one unused recording; the printed prune drops it', async () => {
    const file = join(project, 'test', 'openai.test.ts');
    writeFileSync(file, readFileSync(file, 'utf8').replace("content: 'Hello there' }", "content: 'Hello there, again' }").replace("toContain('Hello there')", "toContain('Hello there, again')"));
    const tape = join(tapes, 'openai.test/openai-sdk/answers-a-question.tape');
    const update = await vitest(['test/openai.test.ts', '--mode', 'update']);
    expect(update.code, update.out).toBe(0);
    expect(summaryLine(update)).toBe('tapedeck: 3 tapes, 1 written, 1 recording added, 2 replayed, 0 misses, 1 unused recording');
    expect(update.out).toContain('test/__tapes__/openai.test/openai-sdk/answers-a-question.tape (update): +1 added, 1 unused');
    expect(update.out).toContain('Drop them after a full passing run: TAPEDECK_PRUNE=1 npx vitest run');
    expect((await readTape(tape)).records).toHaveLength(2);

    const prune = await vitest(['test/openai.test.ts'], { CI: 'true', TAPEDECK_PRUNE: '1' });
    expect(prune.code, prune.out).toBe(0);
    expect(prune.out).toContain('tapedeck: pruned 1 unused recording(s).');
    const left = (await readTape(tape)).records;
    expect(left).toHaveLength(1);
    expect(JSON.stringify(left[0]!.value)).toContain('Hello there, again');
  });

  it('7. record mode, two files recording the same requests one after the other: the run keeps both, the next run replaces them', async () => {
    // The same four requests from two files onto one tape: a record run's workers share a run.
    const same = ['test/same-a.test.ts', 'test/same-b.test.ts'];
    for (const f of same) writeFileSync(join(project, f), sharedTestFile('gamma').replace('shared/one.tape', 'shared/same.tape'));
    const sameTape = join(project, 'shared', 'same.tape');
    const prompts = async () =>
      (await readTape(sameTape)).records.map((rec) => (rec.value as { request: { body: { messages: { content: unknown }[] } } }).request.body.messages[0]!.content).sort();
    // One worker: the second file opens the tape after the first one's tests closed it.
    const args = ['test/same-a.test.ts', 'test/same-b.test.ts', '--mode', 'record', '--maxWorkers=1', '--pool=forks'];
    const first = await vitest(args);
    expect(first.code, first.out).toBe(0);
    const both = ['gamma 1', 'gamma 1', 'gamma 2', 'gamma 2', 'gamma 3', 'gamma 3', 'gamma 4', 'gamma 4'];
    expect(await prompts()).toEqual(both);
    // A later record run has ended runs' recordings to replace: it leaves its own two of each.
    const again = await vitest(args);
    expect(again.code, again.out).toBe(0);
    expect(await prompts()).toEqual(both);
    expect((await readTape(sameTape)).records.map((r) => (r.value as { run: string }).run).filter((v, i, a) => a.indexOf(v) === i)).toHaveLength(1);
    for (const f of same) rmSync(join(project, f));
  });

  it('6. a test that times out still gets its tape closed and recorded; a swallowed miss still fails its test; concurrent install() is refused', async () => {
    writeFileSync(join(project, 'test', 'timeouts.test.ts'), timeouts);
    const r = await vitest(['test/timeouts.test.ts', '-t', 'times out|concurrent install']);
    expect(r.code).toBe(1);
    expect(r.out).toContain('Test timed out in 1500ms');
    // The timeout fails; both concurrent tests pass (the second install() was refused as expected).
    expect(r.out).toMatch(/Tests +1 failed \| 2 passed \| 2 skipped \(5\)/);
    const t = await readTape(join(tapes, 'timeouts.test', 'times-out.tape'));
    expect(t.records).toHaveLength(1);
    expect(statSync(join(tapes, 'timeouts.test', 'times-out.tape')).size).toBeGreaterThan(500);

    const swallowed = await vitest(['test/timeouts.test.ts', '-t', 'swallows'], { CI: 'true' });
    expect(swallowed.code).toBe(1);
    expect(swallowed.out).toContain('TapedeckError: tapedeck miss: 1 request had no recording in test/__tapes__/timeouts.test/swallows-a-miss.tape:');
    expect(swallowed.out).toContain("Record it: TAPEDECK_MODE=update npx vitest run test/timeouts.test.ts -t '^swallows a miss$'");
    expect(existsSync(join(tapes, 'timeouts.test', 'swallows-a-miss.tape'))).toBe(false);

    // What the AI SDK made of the miss, and the miss itself, in one failed test.
    const streamed = await vitest(['test/timeouts.test.ts', '-t', 'stream text miss'], { CI: 'true' });
    expect(streamed.code).toBe(1);
    expect(streamed.out).toContain('No output generated');
    expect(streamed.out).toContain('TapedeckError: tapedeck miss: 1 request had no recording in test/__tapes__/timeouts.test/stream-text-miss.tape:');
    expect(streamed.out).toContain('POST /v1/chat/completions: the tape does not exist yet (this test was never recorded)');
  });
});
