// A recorded test whose file was moved (test/chat.test.ts to test/chat/chat.test.ts) looks for its
// tape at the new place. Before, the miss said "this test was never recorded" and pointed at a
// live re-record, though its recordings were at the old place and name the test. Now the miss
// says where they are, that their test file is gone, and the command that moves them; the command
// it prints, run as printed, makes the replay pass. Through openTestTape and the real openai SDK.
import OpenAI from 'openai';
import { execSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openTestTape } from '../../src/testing/session.ts';
import { upstreamSuite } from '../proxy/upstream-suite.ts';

const suite = upstreamSuite('moved-test-file');

/** One run of the test `says hello` of `file` (relative to `root`) on `tape`: its answer, or the error it got. */
async function run(root: string, file: string, tape: string, env: Record<string, string>): Promise<{ answer?: string; error?: string; failure?: string }> {
  const t = openTestTape({ tape: join(root, tape), test: 'says hello', file, root, env, failOnMiss: false });
  const client = new OpenAI({ baseURL: `${suite.upstream.url}/v1`, apiKey: 'sk-test', maxRetries: 0, fetch: t.fetch });
  try {
    const r = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] });
    return { answer: r.choices[0]!.message.content! };
  } catch (e) {
    return { error: (e as Error).message, failure: t.missFailure()?.message };
  } finally {
    await t.close();
  }
}

describe('a miss of a test whose file was moved', () => {
  it('says where its recordings are and how to move them, not "never recorded"', async () => {
    const root = join(suite.dir, 'project');
    mkdirSync(join(root, 'test', 'chat'), { recursive: true });
    const recorded = await run(root, 'test/chat.test.ts', 'test/__tapes__/chat.test/says-hello.tape', { TAPEDECK_MODE: 'record' });
    expect(recorded.answer).toContain('hello');

    // The file moved (test/chat.test.ts is gone): its tape is looked for beside the new place.
    const moved = await run(root, 'test/chat/chat.test.ts', 'test/chat/__tapes__/chat.test/says-hello.tape', { CI: '1' });
    expect(moved.error).toBeDefined();
    expect(moved.error).not.toContain('never recorded');
    expect(moved.error).toContain('test/__tapes__/chat.test/says-hello.tape');
    expect(moved.error).toContain('test/chat.test.ts');
    const command = /(mkdir -p \S+ && mv \S+ \S+)/.exec(moved.error!)?.[1];
    expect(command, moved.error).toBeDefined();
    expect(moved.failure).toContain(command!);

    // The command, run as printed from the project root, moves the recordings where the test
    // now looks: the replay passes with the recorded answer.
    execSync(command!, { cwd: root });
    expect(existsSync(join(root, 'test/chat/__tapes__/chat.test/says-hello.tape'))).toBe(true);
    const replayed = await run(root, 'test/chat/chat.test.ts', 'test/chat/__tapes__/chat.test/says-hello.tape', { CI: '1' });
    expect(replayed).toEqual({ answer: recorded.answer });
  });

  it('still says "never recorded" for a test no recording names', async () => {
    const root = join(suite.dir, 'fresh');
    mkdirSync(join(root, 'test'), { recursive: true });
    await run(root, 'test/chat.test.ts', 'test/__tapes__/chat.test/says-hello.tape', { TAPEDECK_MODE: 'record' });
    const other = await run(root, 'test/chat/other.test.ts', 'test/chat/__tapes__/other.test/says-goodbye.tape', { CI: '1' });
    expect(other.error).toContain('never recorded');
  });

  it('still says "never recorded" when the other file of that name is there (two files, not a move)', async () => {
    const root = join(suite.dir, 'two');
    mkdirSync(join(root, 'test'), { recursive: true });
    writeFileSync(join(root, 'test', 'chat.test.ts'), '');
    await run(root, 'test/chat.test.ts', 'test/__tapes__/chat.test/says-hello.tape', { TAPEDECK_MODE: 'record' });
    const second = await run(root, 'test/chat/chat.test.ts', 'test/chat/__tapes__/chat.test/says-hello.tape', { CI: '1' });
    expect(second.error).toContain('never recorded');
  });
});
