// A retried test in record mode, on a tape that held its recordings from an earlier run: the
// run summary says what the run did to the tape. The first attempt's recording took the place
// of the earlier run's (re-recorded); the retry's took the place of the first attempt's, which
// is neither added nor re-recorded (the attempt's report said it added already); the retry's
// new request is added. Before, the retry's replacement was said re-recorded too (2 re-recorded
// for one recording replaced). test/vitest/retry-record.test.ts runs the real runners.
import OpenAI from 'openai';
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openTestTape } from '../../src/testing/session.ts';
import { formatSummary, readTapeReports, summarizeRun } from '../../src/testing/run-report.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { upstreamSuite } from '../proxy/upstream-suite.ts';

const suite = upstreamSuite('retry-rerecorded');
const dir = suite.dir;

/** One attempt of a test that records `texts` on `tape` in the run of `runDir`, through its fetch or its proxy. */
async function attempt(tape: string, runDir: string, retry: number, texts: string[], via: 'fetch' | 'serve'): Promise<void> {
  const t = openTestTape({ tape, mode: 'record', test: 'chat > asks', file: 'chat.test.ts', root: dir, runDir, retry });
  const baseURL = via === 'fetch' ? `${suite.upstream.url}/v1` : `${(await t.serve({ upstream: suite.upstream.url, tls: false })).url}/v1`;
  const client = new OpenAI({ baseURL, apiKey: 'sk-test', maxRetries: 0, ...(via === 'fetch' ? { fetch: t.fetch } : {}) });
  for (const content of texts) await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] });
  await t.close();
}

const summaryOf = async (runDir: string) => formatSummary(await summarizeRun(readTapeReports(runDir)), { root: dir });

describe('a retried test re-recording a tape', () => {
  for (const via of ['fetch', 'serve'] as const) {
    it(`through tape.${via}: says the earlier run's recording re-recorded once, the retry's new request added`, async () => {
      const tape = join(dir, `${via}.tape`);
      const earlier = mkdtempSync(join(dir, 'run-'));
      await attempt(tape, earlier, 0, ['one'], via);
      expect(await summaryOf(earlier)).toMatch(/\(record\): \+1 added$/m);

      const run = mkdtempSync(join(dir, 'run-'));
      await attempt(tape, run, 0, ['one'], via); // fails after its call
      await attempt(tape, run, 1, ['one', 'two'], via); // the retry, which passes
      expect(await summaryOf(run)).toMatch(/\(record\): \+1 added, 1 re-recorded \(replaced\)$/m);
      expect((await readTape(tape)).records).toHaveLength(2);
    });
  }
});
