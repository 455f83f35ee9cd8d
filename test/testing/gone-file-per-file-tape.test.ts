// A tape per test file (`per: 'file'`: test/__tapes__/b.test.tape) of a test file since deleted:
// every recording on it names a test of a file that is gone, so a run of every test file lists it
// as unused (its test file is gone) and the prune deletes it with its `.cache.tape`, as it does
// the `__tapes__/<file>/` folder of a gone file's tapes per test. A tape of a file that exists,
// one a `name` function put in `__tapes__/` for a test of a file that exists, and any tape in a
// run of some files only, are kept. Through openTestTape, its run reports and the run summary.
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openTestTape } from '../../src/testing/session.ts';
import { formatSummary, pruneUnused, readTapeReports, summarizeRun } from '../../src/testing/run-report.ts';
import { upstreamSuite } from '../proxy/upstream-suite.ts';

const suite = upstreamSuite('gone-per-file');

/** One test of `file` on `tape` (relative to root) asking `text`, and a cache get/put when `withCache`. */
async function ask(root: string, runDir: string, tape: string, file: string, text: string, env: Record<string, string>, withCache = false): Promise<void> {
  const t = openTestTape({ tape: join(root, tape), test: `${file} > asks ${text}`, file, root, env, runDir });
  try {
    expect((await suite.chat(t.fetch, text)).status).toBe(200);
    if (withCache) {
      const cache = await t.cache();
      const request = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: `cached ${text}` }] };
      if ((await cache.get(request)) === undefined) await cache.put(request, { n: 1 });
    }
  } finally {
    await t.close();
  }
}

describe("a per-file tape of a deleted test file", () => {
  it('is listed as its test file gone and pruned after a whole run; others are kept', async () => {
    const root = join(suite.dir, 'project');
    mkdirSync(join(root, 'test'), { recursive: true });
    for (const f of ['a', 'b', 'c']) writeFileSync(join(root, `test/${f}.test.ts`), '');
    const rec = join(root, 'run-record');
    const record = { TAPEDECK_MODE: 'record' };
    await ask(root, rec, 'test/__tapes__/a.test.tape', 'test/a.test.ts', 'a', record);
    await ask(root, rec, 'test/__tapes__/b.test.tape', 'test/b.test.ts', 'b', record, true);
    // A tape a `name` function put in __tapes__ for a test of c.test.ts, which stays.
    await ask(root, rec, 'test/__tapes__/shared.tape', 'test/c.test.ts', 'c', record);
    const gone = join(root, 'test/__tapes__/b.test.tape');
    const goneCache = join(root, 'test/__tapes__/b.test.cache.tape');
    expect(existsSync(gone) && existsSync(goneCache)).toBe(true);

    rmSync(join(root, 'test/b.test.ts'));
    const ci = { CI: 'true' };
    const rerun = join(root, 'run-ci');
    await ask(root, rerun, 'test/__tapes__/a.test.tape', 'test/a.test.ts', 'a', ci);
    const reports = readTapeReports(rerun);
    const testFiles = [join(root, 'test/a.test.ts')];

    // A run of some files says nothing of the others' tapes.
    const some = await summarizeRun(reports, { testFiles });
    expect(some.tapes.filter((t) => t.orphan)).toEqual([]);

    const whole = await summarizeRun(reports, { testFiles, wholeProject: true });
    const listed = whole.tapes.filter((t) => t.goneFile).map((t) => t.tape);
    expect(listed.sort()).toEqual([goneCache, gone]);
    expect(whole.unused).toBe(2);
    expect(formatSummary(whole, { root })).toContain('test/__tapes__/b.test.tape: 1 unused (its test file is gone: moved, renamed or deleted)');
    expect(await pruneUnused(whole)).toBe(2);
    expect(existsSync(gone) || existsSync(goneCache)).toBe(false);
    expect(existsSync(join(root, 'test/__tapes__/a.test.tape'))).toBe(true);
    expect(existsSync(join(root, 'test/__tapes__/shared.tape'))).toBe(true);
  });

  it('is kept while any of its recordings names a test of a file that exists', async () => {
    const root = join(suite.dir, 'mixed');
    mkdirSync(join(root, 'test'), { recursive: true });
    for (const f of ['a', 'b']) writeFileSync(join(root, `test/${f}.test.ts`), '');
    const rec = join(root, 'run-record');
    await ask(root, rec, 'test/__tapes__/a.test.tape', 'test/a.test.ts', 'a', { TAPEDECK_MODE: 'record' });
    // b.test.tape holds a recording of a test of a.test.ts too (a `name` function put it there).
    await ask(root, rec, 'test/__tapes__/b.test.tape', 'test/b.test.ts', 'b', { TAPEDECK_MODE: 'record' });
    await ask(root, rec, 'test/__tapes__/b.test.tape', 'test/a.test.ts', 'a2', { TAPEDECK_MODE: 'update' });
    rmSync(join(root, 'test/b.test.ts'));
    const rerun = join(root, 'run-ci');
    await ask(root, rerun, 'test/__tapes__/a.test.tape', 'test/a.test.ts', 'a', { CI: 'true' });
    const whole = await summarizeRun(readTapeReports(rerun), { testFiles: [join(root, 'test/a.test.ts')], wholeProject: true });
    expect(whole.tapes.filter((t) => t.orphan)).toEqual([]);
    expect(await pruneUnused(whole)).toBe(0);
    expect(existsSync(join(root, 'test/__tapes__/b.test.tape'))).toBe(true);
  });
});
