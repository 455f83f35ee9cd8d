// A test tape's report counts its re-recordings (record mode: recordings that took the place of
// an older recording of the same request) from what its writers' close replaced, through
// tape.fetch and through the proxies of tape.serve(); the run summary says them "re-recorded
// (replaced)", not added. Before, they were found by reading the tape around the close and
// matching the traces of the fetch's answers, which a proxy's are not among: through serve()
// they were all said added. The real vitest run is test/vitest/rerecorded-summary.test.ts.
import OpenAI from 'openai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestTape, type TestTape } from '../../src/testing/session.ts';
import { formatSummary, readTapeReports, summarizeRun } from '../../src/testing/run-report.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { startUpstream, type Upstream } from '../proxy/fake-upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-rerecorded-'));
let up: Upstream;
beforeAll(async () => {
  up = await startUpstream();
});
afterAll(async () => {
  await up?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** `texts` asked in turn by a test that records on `tape`, through its fetch or its proxy; its report and the run's summary. */
async function recordRun(tape: string, texts: string[], via: 'fetch' | 'serve') {
  const runDir = mkdtempSync(join(dir, 'run-'));
  const t: TestTape = openTestTape({ tape, mode: 'record', test: 'chat > asks', file: 'chat.test.ts', root: dir, runDir });
  const baseURL = via === 'fetch' ? `${up.url}/v1` : `${(await t.serve({ upstream: up.url, tls: false })).url}/v1`;
  const client = new OpenAI({ baseURL, apiKey: 'sk-test', maxRetries: 0, ...(via === 'fetch' ? { fetch: t.fetch } : {}) });
  for (const content of texts) await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] });
  const report = await t.close();
  const summary = formatSummary(await summarizeRun(readTapeReports(runDir)), { root: dir });
  return { report, summary };
}

describe('re-recordings in a test tape report', () => {
  for (const via of ['fetch', 'serve'] as const) {
    it(`through tape.${via}: one per recording replaced, extra recordings added`, async () => {
      const tape = join(dir, `${via}.tape`);
      const first = await recordRun(tape, ['one', 'two'], via);
      expect(first.report.added).toBe(2);
      expect(first.report.rerecorded).toBeUndefined();

      const again = await recordRun(tape, ['one', 'one', 'three'], via);
      expect(again.report.added).toBe(3);
      expect(again.report.rerecorded).toBe(1);
      expect(again.summary).toContain(`${via}.tape (record): +2 added, 1 re-recorded (replaced)`);
      // `one` twice and `three`; `two`, not asked for, stays.
      expect((await readTape(tape)).records).toHaveLength(4);
    });
  }
});
