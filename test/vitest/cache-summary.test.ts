// A test tape's ReplayCache recordings in the run summary: the summary names the `.cache.tape`
// they are on (not the test's fetch tape beside it), counts the cache recordings no call of the
// run asked for among the unused ones, and the printed prune drops exactly those, the used one
// still replaying. Before, cache entries the code stopped asking for stayed on the tape forever.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatSummary, openTestTape, pruneUnused, readTapeReports, summarizeRun } from '../../src/testing/index.ts';
import { readTape } from '../../src/store/tape-file.ts';

const ask = (content: string) => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] });

/** The user messages of the requests recorded on a cache tape, in tape order. */
const cachedQuestions = async (tape: string) => (await readTape(tape)).records.map((r) => (r.value as { request: ReturnType<typeof ask> }).request.messages[0]!.content);

describe('ReplayCache recordings in the run summary', () => {
  it('names the .cache.tape, counts its unused recordings, and the prune drops them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tapedeck-cache-summary-'));
    const path = join(dir, 'qa.tape');
    const cacheTape = join(dir, 'qa.cache.tape');

    // Recorded: two cached answers (the code's old plan).
    const recDir = join(dir, 'run-record');
    const t1 = openTestTape({ tape: path, mode: 'record', env: {}, runDir: recDir, test: 'answers questions' });
    const c1 = await t1.cache();
    await c1.put(ask('old question'), { text: 'old answer' });
    await c1.put(ask('current question'), { text: 'current answer' });
    await t1.close();
    const recorded = await summarizeRun(readTapeReports(recDir));
    const recText = formatSummary(recorded, { root: dir });
    expect.soft(recText).toMatch(/^ {2}qa\.cache\.tape \(record\): \+2 added$/m);
    // No fetch call was made: the fetch tape was neither written nor named.
    expect(existsSync(path)).toBe(false);
    expect.soft(recText).not.toMatch(/^ {2}qa\.tape /m);
    expect(recorded.unused).toBe(0);

    // Replayed in CI: the code now only asks the current question. The old entry went unused.
    const repDir = join(dir, 'run-replay');
    const t2 = openTestTape({ tape: path, env: { CI: 'true' }, runDir: repDir, test: 'answers questions' });
    expect(await (await t2.cache()).get(ask('current question'))).toEqual({ text: 'current answer' });
    await t2.close();
    const replayed = await summarizeRun(readTapeReports(repDir));
    const text = formatSummary(replayed, { root: dir, pruneCommand: 'TAPEDECK_PRUNE=1 npx vitest run' });
    expect.soft(text.split('\n')[0]).toBe('tapedeck: 1 tape, 0 written, 0 recordings added, 1 replayed, 0 misses, 1 unused recording');
    expect.soft(text).toContain('  qa.cache.tape (replay): 1 unused');
    expect.soft(text).not.toMatch(/^ {2}qa\.tape /m);
    expect.soft(replayed.unused).toBe(1);

    // The prune the summary prints drops that recording, and the used one still replays.
    expect.soft(await pruneUnused(replayed)).toBe(1);
    expect.soft(await cachedQuestions(cacheTape)).toEqual(['current question']);
    const t3 = openTestTape({ tape: path, env: { CI: 'true' }, test: 'answers questions' });
    expect(await (await t3.cache()).get(ask('current question'))).toEqual({ text: 'current answer' });
    await t3.close();
    rmSync(dir, { recursive: true, force: true });
  });
});
