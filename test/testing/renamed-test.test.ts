// A renamed test (its tape is named after it) missed in CI with "this test was never recorded",
// though the tape of its old name, beside the new one and opened by no test, holds this exact
// request; so did a test moved to another test file while the old file stays. Now the miss names
// that tape and the test its recording names, and prints the command that moves it (hedged: the
// tape may be another test's that makes the same request); run as printed, the replay passes.
// A request no tape holds is still "never recorded". Through openTestTape and the real openai SDK.
import OpenAI from 'openai';
import { execSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openTestTape } from '../../src/testing/session.ts';
import { upstreamSuite } from '../proxy/upstream-suite.ts';

const suite = upstreamSuite('renamed-test');

/** The test `test` of `file` on `tape`, asking `question`: its answer, or its error and failure. */
async function run(root: string, file: string, test: string, tape: string, question: string, env: Record<string, string>): Promise<{ answer?: string; error?: string; failure?: string }> {
  const t = openTestTape({ tape: join(root, tape), test, file, root, env, failOnMiss: false });
  const client = new OpenAI({ baseURL: `${suite.upstream.url}/v1`, apiKey: 'sk-test', maxRetries: 0, fetch: t.fetch });
  try {
    const r = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: question }] });
    return { answer: r.choices[0]!.message.content! };
  } catch (e) {
    return { error: (e as Error).message, failure: t.missFailure()?.message };
  } finally {
    await t.close();
  }
}

const MOVE = /(mkdir -p \S+ && mv \S+ \S+)/;

describe('the miss of a renamed test', () => {
  it('names the tape of its old name that holds the request, and the command that moves it', async () => {
    const root = join(suite.dir, 'renamed');
    mkdirSync(join(root, 'test'), { recursive: true });
    writeFileSync(join(root, 'test/chat.test.mjs'), '');
    const recorded = await run(root, 'test/chat.test.mjs', 'says hello', 'test/__tapes__/chat.test/says-hello.tape', 'Hello', { TAPEDECK_MODE: 'record' });
    const renamed = await run(root, 'test/chat.test.mjs', 'greets the user', 'test/__tapes__/chat.test/greets-the-user.tape', 'Hello', { CI: 'true' });
    expect(renamed.error).toContain('holds this exact request');
    expect(renamed.error).toContain('test/__tapes__/chat.test/says-hello.tape');
    expect(renamed.error).toContain('says hello');
    expect(renamed.failure).toContain('test/__tapes__/chat.test/says-hello.tape');
    const command = MOVE.exec(renamed.error!)?.[1];
    expect(command, renamed.error).toBeDefined();
    execSync(command!, { cwd: root });
    expect(await run(root, 'test/chat.test.mjs', 'greets the user', 'test/__tapes__/chat.test/greets-the-user.tape', 'Hello', { CI: 'true' })).toEqual({ answer: recorded.answer });
  });

  it('moved to another test file that exists beside the old one: names the old file\'s tape', async () => {
    const root = join(suite.dir, 'split');
    mkdirSync(join(root, 'test'), { recursive: true });
    writeFileSync(join(root, 'test/agents.test.mjs'), '');
    writeFileSync(join(root, 'test/openai.test.mjs'), '');
    const recorded = await run(root, 'test/agents.test.mjs', 'agent > openai answers', 'test/__tapes__/agents.test/agent/openai-answers.tape', 'Weather?', { TAPEDECK_MODE: 'record' });
    const moved = await run(root, 'test/openai.test.mjs', 'agent > openai answers', 'test/__tapes__/openai.test/agent/openai-answers.tape', 'Weather?', { CI: 'true' });
    expect(moved.error).toContain('test/__tapes__/agents.test/agent/openai-answers.tape');
    execSync(MOVE.exec(moved.error!)![1]!, { cwd: root });
    expect(await run(root, 'test/openai.test.mjs', 'agent > openai answers', 'test/__tapes__/openai.test/agent/openai-answers.tape', 'Weather?', { CI: 'true' })).toEqual({ answer: recorded.answer });
  });

  it('a request no tape holds is still "never recorded"', async () => {
    const root = join(suite.dir, 'fresh');
    mkdirSync(join(root, 'test'), { recursive: true });
    writeFileSync(join(root, 'test/chat.test.mjs'), '');
    await run(root, 'test/chat.test.mjs', 'says hello', 'test/__tapes__/chat.test/says-hello.tape', 'Hello', { TAPEDECK_MODE: 'record' });
    const other = await run(root, 'test/chat.test.mjs', 'says bye', 'test/__tapes__/chat.test/says-bye.tape', 'Bye', { CI: 'true' });
    expect(other.error).toContain('never recorded');
    expect(other.error).not.toContain('says-hello.tape');
  });
});
