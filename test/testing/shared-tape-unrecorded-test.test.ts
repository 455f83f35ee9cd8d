// On a tape the tests of a file share (`per: 'file'`), a test that has no recording there (a
// recording run stopped before it, Ctrl-C) missed with "text differs from the closest
// recording": another test's prompt, which this test never made, sending the reader after a
// prompt change that did not happen. Now the miss says this test has no recording on the tape
// (the others' are there), and that the recording run was stopped when its writer note is still
// beside the tape. Through openTestTape and the real openai SDK against a faithful fake upstream.
import OpenAI from 'openai';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openTestTape } from '../../src/testing/session.ts';
import { readTapeReports, summarizeRun } from '../../src/testing/run-report.ts';
import { upstreamSuite } from '../proxy/upstream-suite.ts';

const suite = upstreamSuite('shared-tape-unrecorded');

/** The test `name` of test/steps.test.ts on the file's shared tape: one chat call; its answer or error. */
async function step(root: string, name: string, env: Record<string, string>, runDir?: string): Promise<{ answer?: string; error?: string }> {
  const t = openTestTape({ tape: join(root, 'test/__tapes__/steps.test.tape'), test: name, file: 'test/steps.test.ts', root, env, failOnMiss: false, ...(runDir ? { runDir } : {}) });
  const c = new OpenAI({ baseURL: `${suite.upstream.url}/v1`, apiKey: 'sk-test', maxRetries: 0, fetch: t.fetch });
  try {
    const r = await c.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `question of ${name}` }] });
    return { answer: r.choices[0]!.message.content! };
  } catch (e) {
    return { error: (e as Error).message };
  } finally {
    await t.close();
  }
}

describe('a test with no recording on its file’s shared tape', () => {
  it('misses with "this test has no recording on" the tape, not with another test’s prompt', async () => {
    const root = join(suite.dir, 'project');
    mkdirSync(join(root, 'test'), { recursive: true });
    writeFileSync(join(root, 'test/steps.test.ts'), '');
    expect((await step(root, 'step 1', { TAPEDECK_MODE: 'record' })).answer).toBeDefined();

    const runDir = join(root, 'run');
    const miss = await step(root, 'step 5', { CI: 'true' }, runDir);
    expect(miss.error).toContain('this test has no recording on test/__tapes__/steps.test.tape');
    expect(miss.error).not.toContain('closest recording');
    const summary = await summarizeRun(readTapeReports(runDir));
    expect(summary.misses.map((m) => m.diagnosis).join('\n')).toContain('this test has no recording on this tape');

    // The note of a recording run that was stopped is still beside the tape: said.
    mkdirSync(join(root, 'test/__tapes__/steps.test.tape.writers'));
    writeFileSync(join(root, 'test/__tapes__/steps.test.tape.writers/1-ab.json'), JSON.stringify({ run: 'run-dir:/tmp/x', mode: 'record', pid: 999999, host: 'elsewhere', start: '1' }));
    const stopped = await step(root, 'step 5', { CI: 'true' });
    expect(stopped.error).toMatch(/a recording run of this tape did not end: its note test\/__tapes__\/steps.test.tape.writers\/ is still there/i);

    // A test that has recordings there and changed its prompt still gets the difference.
    const t = openTestTape({ tape: join(root, 'test/__tapes__/steps.test.tape'), test: 'step 1', file: 'test/steps.test.ts', root, env: { CI: 'true' }, failOnMiss: false });
    try {
      const c = new OpenAI({ baseURL: `${suite.upstream.url}/v1`, apiKey: 'sk-test', maxRetries: 0, fetch: t.fetch });
      const err = await c.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'an edited question of step 1' }] }).then(() => '', (e: Error) => e.message);
      expect(err).toContain('closest recording');
      expect(err).not.toContain('this test has no recording');
    } finally {
      await t.close();
    }
  });
});
