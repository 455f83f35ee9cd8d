// A call that an injected fault answered (429, 5xx, reset, timeout) never took the recording it
// would have got, so a run with such faults cannot tell a stale recording from one the next run
// needs: the run summary does not count that tape's unused recordings, and the prune it prints
// (TAPEDECK_PRUNE=1, pruneUnused) keeps them. Before, a test falling back on rate limits at a
// rate of 0.5 had the recordings of its faulted calls pruned, and its next run with another seed
// missed them. Through the test tape's run report (what the vitest, jest and mocha summaries add
// up and prune by), createFetch and the proxy with pruneUnused, and the real openai SDK.
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { openTestTape } from '../../src/testing/session.ts';
import { formatSummary, pruneUnused, readTapeReports, summarizeRun } from '../../src/testing/run-report.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { chatText, openai, recordTape, REPLAY_BASE, tempDir } from './record.ts';

const tmp = tempDir('faulted-unused');
const tape = join(tmp.dir, 'fallback.tape');
const PROMPTS = ['one', 'two', 'three', 'four'];

beforeAll(async () => {
  const up = await recordTape(tape, async (c) => {
    for (const p of PROMPTS) await chatText(c, p);
  });
  await up.close();
});
afterAll(() => tmp.remove());

/** One replay run of the test tape with `chaos`: each call falls back to 'busy' on an error. */
async function runWith(name: string, chaos: Parameters<ReturnType<typeof openTestTape>['chaos']>[0]): Promise<{ runDir: string; answers: string[] }> {
  const runDir = join(tmp.dir, `run-${name}`);
  const t = openTestTape({ tape, env: { CI: '1' }, runDir, test: 'falls back' });
  t.chaos(chaos);
  const answers: string[] = [];
  try {
    const c = openai(REPLAY_BASE, { fetch: t.fetch });
    for (const p of PROMPTS) answers.push(await chatText(c, p).catch(() => 'busy'));
  } finally {
    await t.close();
  }
  return { runDir, answers };
}

describe('recordings of calls answered by injected faults', () => {
  it.each(['429', '503', 'reset'])('%s: the run summary counts none of them unused, and the prune keeps them', async (fault) => {
    const before = readFileSync(tape);
    const { runDir, answers } = await runWith(fault, { faults: { [fault]: 0.5 }, seed: 3 });
    expect(answers).toContain('busy');
    expect(answers.some((a) => a !== 'busy')).toBe(true);
    const summary = await summarizeRun(readTapeReports(runDir));
    expect(summary).toMatchObject({ unused: 0, misses: [] });
    const faulted = answers.filter((a) => a === 'busy').length;
    expect(formatSummary(summary)).toContain(`(replay): unused recordings not checked: ${faulted} ${faulted === 1 ? 'call was' : 'calls were'} answered by injected faults (${fault} ${faulted}), not by recordings`);
    expect(await pruneUnused(summary)).toBe(0);
    expect(readFileSync(tape).equals(before)).toBe(true);
    expect((await readTape(tape)).records).toHaveLength(PROMPTS.length);
  });

  it('a run without faults still finds its unused recordings', async () => {
    const runDir = join(tmp.dir, 'run-partial');
    const t = openTestTape({ tape, env: { CI: '1' }, runDir, test: 'falls back' });
    try {
      expect(await chatText(openai(REPLAY_BASE, { fetch: t.fetch }), 'one')).toContain('one');
    } finally {
      await t.close();
    }
    expect(await summarizeRun(readTapeReports(runDir))).toMatchObject({ unused: PROMPTS.length - 1 });
  });

  it('createFetch and the proxy with pruneUnused: the faulted run removes nothing and says why', async () => {
    const before = readFileSync(tape);
    const warnings: string[] = [];
    const f = createFetch({ tape, mode: 'replay', pruneUnused: true, chaos: { faults: { 429: 0.5 }, seed: 3 }, onWarning: (m) => warnings.push(m) });
    try {
      const c = openai(REPLAY_BASE, { fetch: f });
      for (const p of PROMPTS) await chatText(c, p).catch(() => 'busy');
      expect((await f.stats()).faults?.['429']).toBeGreaterThan(0);
    } finally {
      await f.close();
    }
    expect(warnings.join('\n')).toMatch(/not removing unused recordings from .*fallback\.tape: \d+ calls? w[ae]re? answered by injected faults \(429 \d+\)/);
    expect(readFileSync(tape).equals(before)).toBe(true);

    const proxyWarnings: string[] = [];
    const p = await startProxy({ tape, mode: 'replay', port: 0, pruneUnused: true, chaos: { faults: { 503: 0.5 }, seed: 3 }, onWarning: (m) => proxyWarnings.push(m) });
    try {
      const c = openai(p.url);
      for (const q of PROMPTS) await chatText(c, q).catch(() => 'busy');
    } finally {
      await p.close();
    }
    expect(proxyWarnings.join('\n')).toContain('answered by injected faults (503');
    expect(readFileSync(tape).equals(before)).toBe(true);
  });
});
