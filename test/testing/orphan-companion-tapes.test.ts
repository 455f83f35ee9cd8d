// The `<tape>.cache.tape` (`.mcp.tape`) of a test that ran but did not call tape.cache()
// (tape.mcp()) this run is the test's all the same (its call may be behind a flag that is off):
// listed with its recordings not checked, never as a tape no test opened, and the prune keeps it.
// Only a companion whose test is gone is an orphan (test/testing/companion-of-test-that-ran.test.ts).
// Through openTestTape, its run reports and the run summary.
import OpenAI from 'openai';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openTestTape } from '../../src/testing/session.ts';
import { formatSummary, pruneUnused, readTapeReports, summarizeRun } from '../../src/testing/run-report.ts';
import { upstreamSuite } from '../proxy/upstream-suite.ts';

const suite = upstreamSuite('orphan-companion');

/** One run of the test `asks` of test/agent.test.ts: a chat call, and a cache get/put when `withCache`. */
async function run(root: string, name: string, env: Record<string, string>, withCache: boolean): Promise<string> {
  const runDir = join(root, `run-${name}`);
  const t = openTestTape({ tape: join(root, 'test/__tapes__/agent.test/asks.tape'), test: 'asks', file: 'test/agent.test.ts', root, env, runDir });
  try {
    const c = new OpenAI({ baseURL: `${suite.upstream.url}/v1`, apiKey: 'sk-test', maxRetries: 0, fetch: t.fetch });
    await c.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] });
    if (withCache) {
      const cache = await t.cache();
      const request = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'cached' }] };
      if ((await cache.get(request)) === undefined) await cache.put(request, { n: 1 });
    }
  } finally {
    await t.close();
  }
  return runDir;
}

describe('the companion tape of a test that stopped using it this run', () => {
  it('is kept and said not checked; one still used is judged', async () => {
    const root = join(suite.dir, 'project');
    mkdirSync(join(root, 'test'), { recursive: true });
    writeFileSync(join(root, 'test/agent.test.ts'), '');
    const testFiles = [join(root, 'test/agent.test.ts')];
    const cacheTape = join(root, 'test/__tapes__/agent.test/asks.cache.tape');
    await run(root, 'record', { TAPEDECK_MODE: 'record' }, true);
    expect(existsSync(cacheTape)).toBe(true);

    // Still used: not listed.
    const still = await summarizeRun(readTapeReports(await run(root, 'still', { CI: 'true' }, true)), { testFiles });
    expect(still.tapes.filter((t) => t.orphan)).toEqual([]);
    expect(still.unused).toBe(0);

    // The test made no cache call this run: its cache tape is its own still.
    const without = await summarizeRun(readTapeReports(await run(root, 'without', { CI: 'true' }, false)), { testFiles });
    expect(without.tapes.filter((t) => t.orphan)).toEqual([]);
    expect(without.unused).toBe(0);
    expect(formatSummary(without, { root })).toContain('test/__tapes__/agent.test/asks.cache.tape (replay): unused recordings not checked: its test (asks) made no request through it in this run');
    expect(await pruneUnused(without)).toBe(0);
    expect(existsSync(cacheTape)).toBe(true);
    expect(existsSync(join(root, 'test/__tapes__/agent.test/asks.tape'))).toBe(true);
  });
});
