// A request asked more often than when it was recorded gets its last recording again, so a loop
// that now runs longer passes in CI. The run summary now says how many calls were answered past
// their recordings, per tape and with what to do (strictOrder); a run within its recordings says
// nothing of it. A later run cannot tell such a loop from a request update mode recorded once and
// the test asks twice: its advice names both. Tapes noted only for repeats are listed after
// those that changed. Through a test tape's report, with the real openai SDK.
import OpenAI from 'openai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestTape } from '../../src/testing/session.ts';
import { formatSummary, readTapeReports, summarizeRun, type RunSummary, type TapeSummary } from '../../src/testing/run-report.ts';
import { startUpstream, type Upstream } from '../proxy/fake-upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-repeats-summary-'));
let up: Upstream;
beforeAll(async () => {
  up = await startUpstream();
});
afterAll(async () => {
  await up.close();
  rmSync(dir, { recursive: true, force: true });
});

/** One test run of `calls` identical calls on the tape, in `env`'s mode; the summary of its run. */
async function run(name: string, calls: number, env: Record<string, string>, tape = 'loop.tape', content = 'next step?'): Promise<string> {
  const runDir = join(dir, `run-${name}`);
  const t = openTestTape({ tape: join(dir, tape), env, runDir, test: 'agent loops' });
  try {
    const c = new OpenAI({ baseURL: `${up.url}/v1`, apiKey: 'sk-test', maxRetries: 0, fetch: t.fetch });
    for (let i = 0; i < calls; i++) await c.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] });
  } finally {
    await t.close();
  }
  return formatSummary(await summarizeRun(readTapeReports(runDir)), { root: dir });
}

describe('calls answered past their recordings', () => {
  it('are counted in the run summary, with strictOrder named', async () => {
    await run('record', 2, { TAPEDECK_MODE: 'record' });
    const same = await run('same', 2, { CI: 'true' });
    expect(same).not.toContain('answered again');
    const longer = await run('longer', 4, { CI: 'true' });
    expect(longer).toContain('loop.tape (replay): 2 answered again past their recordings');
    expect(longer).toContain('2 calls were answered by a recording again, past those recorded for their request');
    expect(longer).toContain('strictOrder: true');
  });

  // Update mode answers a request asked again with the recording its first ask just made, unsent
  // (a prompt-caching test never sees its cache read): that is no loop that runs longer.
  it('in the run that first records the request (update mode), are said unsent, with record mode named', async () => {
    // 3 calls: the second is served by the matcher, the third by the path for a body seen before.
    const first = await run('update-new', 3, { TAPEDECK_MODE: 'update' }, 'cache.tape');
    expect(first).toContain('cache.tape (update): +1 added, 2 answered again unsent by this run\'s recording');
    expect(first).toContain('2 calls were answered without being sent, by the recording this run made of the same request asked earlier (update mode');
    expect(first).toContain('TAPEDECK_MODE=record');
    expect(first).not.toContain('asked more often than when recorded');
    expect(first).not.toContain('past their recordings');

    // A request new to a tape that exists: the same.
    const added = await run('update-added', 2, { TAPEDECK_MODE: 'update' }, 'cache.tape', 'another prompt');
    expect(added).toContain('1 call was answered without being sent, by the recording this run made');
    expect(added).not.toContain('asked more often than when recorded');

    // The next update run asks more often than the tape recorded: that one is a repeat past the
    // recordings, as in replay.
    const later = await run('update-later', 3, { TAPEDECK_MODE: 'update' }, 'cache.tape');
    expect(later).toContain('cache.tape (update): 2 answered again past their recordings');
    expect(later).toContain('2 calls were answered by a recording again, past those recorded for their request.');
    expect(later).not.toContain('without being sent');
  });

  // A later run cannot tell a request update mode recorded once, asked twice by its test, from a
  // loop that runs longer: the advice names both, with record mode for the first.
  it('in a later run of a request update mode recorded once, name both causes', async () => {
    await run('twice-record', 2, { TAPEDECK_MODE: 'update' }, 'twice.tape', 'same question');
    for (const [name, env] of [['twice-ci', { CI: 'true' }], ['twice-update', { TAPEDECK_MODE: 'update' }]] as const) {
      const later = await run(name, 2, env, 'twice.tape', 'same question');
      expect(later).toContain('1 call was answered by a recording again, past those recorded for its request. Either update mode recorded the request once and the test asks again (update mode answers a repeat from its first recording; TAPEDECK_MODE=record records each call');
      expect(later).toContain('or a loop runs longer now: tapedeckFixtures({ strictOrder: true }) makes such calls misses');
      expect(later).not.toContain('asked more often than when recorded');
    }
    // Recorded call by call, the tape holds both answers: no repeat is left to tell of.
    await run('twice-rerecord', 2, { TAPEDECK_MODE: 'record' }, 'twice.tape', 'same question');
    expect(await run('twice-after', 2, { CI: 'true' }, 'twice.tape', 'same question')).not.toContain('answered again');
  });
});

describe('the tape lines of the summary', () => {
  // At scale, tapes noted only for repeats (every run of a request recorded once, asked twice)
  // outnumber those that changed: the changed ones come first, within the list's cap.
  it('list tapes that changed before tapes noted only for repeats', async () => {
    const repeatsOnly = (i: number): TapeSummary => ({ tape: join(dir, `a-${String(i).padStart(2, '0')}.tape`), mode: 'replay', added: 0, hits: 2, misses: 0, unused: 0, unusedTraces: [], repeats: 1 });
    const tapes: TapeSummary[] = Array.from({ length: 40 }, (_, i) => repeatsOnly(i));
    tapes.push(
      { tape: join(dir, 'z-added.tape'), mode: 'update', added: 1, hits: 0, misses: 0, unused: 1, unusedTraces: ['t1'], repeats: 1 },
      { tape: join(dir, 'z-missed.tape'), mode: 'replay', added: 0, hits: 0, misses: 1, unused: 0, unusedTraces: [] },
      { tape: join(dir, 'z-unused.tape'), mode: 'replay', added: 0, hits: 1, misses: 0, unused: 2, unusedTraces: ['t2', 't3'] },
    );
    const summary: RunSummary = { tapes, tapesWritten: 1, added: 1, hits: 81, misses: [], unused: 3, repeats: 41 };
    const lines = formatSummary(summary, { root: dir }).split('\n');
    const tapeLines = lines.filter((l) => l.startsWith('  ') && l.includes('.tape'));
    expect(tapeLines.slice(0, 3)).toEqual([
      '  z-added.tape (update): +1 added, 1 answered again past their recordings, 1 unused',
      '  z-missed.tape (replay): 1 missed',
      '  z-unused.tape (replay): 2 unused',
    ]);
    expect(tapeLines[3]).toBe('  a-00.tape (replay): 1 answered again past their recordings');
    // The cap holds: 30 lines, the rest counted.
    expect(tapeLines).toHaveLength(30);
    expect(lines).toContain('  ... and 13 more tapes');
  });
});
