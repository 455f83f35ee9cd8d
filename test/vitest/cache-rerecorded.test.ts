// A test tape's ReplayCache (tape.cache()) in the run summary counts what it wrote, as the test's
// fetch does: in record mode a put whose answer changed replaces the recording of its request and
// is said "re-recorded (replaced)"; one whose answer came out the same keeps the old recording,
// writes nothing and is not said added. Before, every put was said added, and the cache's report
// had no re-recorded count.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openTestTape } from '../../src/testing/session.ts';
import { formatSummary, readTapeReports, summarizeRun } from '../../src/testing/run-report.ts';
import { readTape } from '../../src/store/tape-file.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-cache-rerecorded-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A test that puts each [question, answer] into its tape's cache in record mode; the run's summary and the cache's count. */
async function recordRun(tape: string, puts: [string, string][]) {
  const runDir = mkdtempSync(join(dir, 'run-'));
  const t = openTestTape({ tape, mode: 'record', test: 'cache > answers', file: 'cache.test.ts', root: dir, runDir });
  const cache = await t.cache();
  for (const [q, a] of puts) await cache.put({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: q }] }, { answer: a });
  await t.close();
  return { summary: formatSummary(await summarizeRun(readTapeReports(runDir)), { root: dir }), recorded: cache.recorded };
}

describe("a test tape's cache in the run summary", () => {
  it('says a changed answer re-recorded, an unchanged one neither added nor re-recorded, a new request added', async () => {
    const tape = join(dir, 'chat.tape');
    const cacheTape = join(dir, 'chat.cache.tape');
    const first = await recordRun(tape, [['one', '1'], ['two', '2']]);
    expect(first.summary).toMatch(/chat\.cache\.tape \(record\): \+2 added$/m);
    const before = await readTape(cacheTape);

    // `one` answered otherwise (replaced), `two` the same (kept as it was), `three` new.
    const again = await recordRun(tape, [['one', 'uno'], ['two', '2'], ['three', '3']]);
    expect(again.summary).toMatch(/chat\.cache\.tape \(record\): \+1 added, 1 re-recorded \(replaced\)$/m);
    // ReplayCache's own count: what it wrote in each run.
    expect([first.recorded, again.recorded]).toEqual([2, 2]);
    const after = await readTape(cacheTape);
    expect(after.records).toHaveLength(3);
    // The unchanged recording is the same record, timestamp and all.
    const two = (records: typeof after.records) => records.find((r) => JSON.stringify(r.value).includes('"two"'))?.value;
    expect(two(after.records)).toBeDefined();
    expect(two(after.records)).toEqual(two(before.records));
  });
});
