// mocha names a test by its title alone (`done skips with done`), with no file. Two files with a
// test of that title, each skipping itself after a miss, failed the run with "1 test skipped
// itself" above two lines that both said `done skips with done`: the count took the tests of the
// two files for one, and the lines did not say which file. Now each is counted and named with its
// file; the same for misses in an afterEach hook after mocha reported the test passed.
import { describe, expect, it } from 'vitest';
import { afterPassFailure, skippedFailure, summarizeRun, type MissReport, type TapeReport } from '../../src/testing/run-report.ts';

const report = (file: string, flag: 'skipped' | 'afterPass'): TapeReport => {
  const miss: MissReport = { test: 'done skips with done', route: 'POST /v1/chat/completions', diagnosis: 'the tape does not exist yet (this test was never recorded)', command: `TAPEDECK_MODE=update npx mocha --require llm-tapedeck/mocha ${file} --grep '^done skips with done$'`, [flag]: true };
  return { tape: `/p/dn/__tapes__/${file}/done/skips-with-done.tape`, test: 'done skips with done', file, testFile: file, root: '/p', mode: 'replay', added: 0, hits: 0, misses: [miss], used: [] };
};

describe('run failures of tests of one title in two files', () => {
  it('counts two tests that skipped themselves, each named with its file', async () => {
    const s = await summarizeRun([report('dn/d.test.mjs', 'skipped'), report('dn/e.test.mjs', 'skipped')]);
    const text = skippedFailure(s)!;
    expect(text).toContain('2 tests skipped themselves');
    expect(text).toContain('  dn/d.test.mjs > done skips with done: POST /v1/chat/completions');
    expect(text).toContain('  dn/e.test.mjs > done skips with done: POST /v1/chat/completions');
  });

  it('says "their tests" for afterEach misses of two files', async () => {
    const s = await summarizeRun([report('dn/d.test.mjs', 'afterPass'), report('dn/e.test.mjs', 'afterPass')]);
    const text = afterPassFailure(s)!;
    expect(text).toContain('after mocha reported their tests passed');
    expect(text).toContain('  dn/e.test.mjs > done skips with done: POST');
  });

  it('keeps one test that missed twice one test', async () => {
    const r = report('dn/d.test.mjs', 'skipped');
    const s = await summarizeRun([{ ...r, misses: [r.misses[0]!, { ...r.misses[0]! }] }]);
    expect(skippedFailure(s)).toContain('1 test skipped itself');
  });
});
