// A request asked more often than when it was recorded gets its last recording again, so a loop
// that now runs longer passes in CI. The run summary now says how many calls were answered past
// their recordings, per tape and with what to do (strictOrder); a run within its recordings says
// nothing of it. Through a test tape's report, with the real openai SDK.
import OpenAI from 'openai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestTape } from '../../src/testing/session.ts';
import { formatSummary, readTapeReports, summarizeRun } from '../../src/testing/run-report.ts';
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
    expect(later).toContain('2 calls were answered by a recording again, past those recorded for their request (asked more often than when recorded');
    expect(later).not.toContain('without being sent');
  });
});
