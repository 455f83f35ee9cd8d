// A request sent again after a cut or malformed answer is taken for the app's retry of that call
// and gets the same recording whole (docs/chaos.md). When those requests were in fact the app's
// next identical calls, the recordings after it are never reached in that run, though a run
// without the faults asks for them. So a prune after such a run removes nothing, as after a
// rate limit: before, `pruneUnused` removed them, and the next plain replay of the three calls
// was served the first answer three times (the proxy serves the last recording again past the end).
import { join } from 'node:path';
import { copyFileSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { openTestTape } from '../../src/testing/session.ts';
import { readTapeReports, summarizeRun } from '../../src/testing/run-report.ts';
import { chatText, openai, recordTape, REPLAY_BASE, tempDir } from './record.ts';

const tmp = tempDir('prune-after-damage');
const recordedTape = join(tmp.dir, 'same.tape');
const recorded: string[] = [];

beforeAll(async () => {
  const up = await recordTape(recordedTape, async (c) => {
    for (let i = 0; i < 3; i++) recorded.push(await chatText(c, 'same'));
  });
  await up.close();
});
afterAll(() => tmp.remove());

/** A copy of the recorded tape for one test, so a prune in one test cannot hide another's. */
function tapeFor(name: string): string {
  const tape = join(tmp.dir, `${name}.tape`);
  copyFileSync(recordedTape, tape);
  return tape;
}

/** Three identical calls through `f`, each error caught. */
async function threeCalls(f: typeof fetch): Promise<string[]> {
  const c = openai(REPLAY_BASE, { fetch: f });
  const out: string[] = [];
  for (let i = 0; i < 3; i++) out.push(await chatText(c, 'same').catch(() => 'failed'));
  return out;
}

describe('a prune after cut or malformed answers keeps the recordings the run did not reach', () => {
  it.each(['cut', 'malformed'] as const)('createFetch pruneUnused after %s removes nothing, and a plain replay still gets every answer', async (fault) => {
    expect(new Set(recorded).size).toBe(3);
    const tape = tapeFor(`fetch-${fault}`);
    const before = readFileSync(tape);
    const warnings: string[] = [];
    const f = createFetch({ tape, mode: 'replay', pruneUnused: true, onWarning: (w) => warnings.push(String((w as Error).message ?? w)), chaos: { faults: { [fault]: 1 }, seed: 1 } });
    try {
      expect(await threeCalls(f)).toEqual(['failed', 'failed', 'failed']);
    } finally {
      await f.close();
    }
    expect(readFileSync(tape).equals(before)).toBe(true);
    expect(warnings.join('\n')).toContain('not removing unused recordings');
    const plain = createFetch({ tape, mode: 'replay' });
    try {
      expect(await threeCalls(plain)).toEqual(recorded);
    } finally {
      await plain.close();
    }
  });

  it('proxy pruneUnused after cut answers removes nothing', async () => {
    const tape = tapeFor('proxy-cut');
    const before = readFileSync(tape);
    const p = await startProxy({ tape, mode: 'replay', port: 0, pruneUnused: true, chaos: { faults: { cut: 1 }, seed: 1 }, onWarning: () => {} });
    try {
      const c = openai(p.url);
      for (let i = 0; i < 3; i++) await chatText(c, 'same').catch(() => 'failed');
    } finally {
      await p.close();
    }
    expect(readFileSync(tape).equals(before)).toBe(true);
  });

  it('the test run report does not count unused recordings after malformed answers', async () => {
    const tape = tapeFor('test-malformed');
    const runDir = join(tmp.dir, 'run-malformed');
    const t = openTestTape({ tape, env: { CI: '1' }, runDir, test: 'three identical calls' });
    t.chaos({ faults: { malformed: 1 }, seed: 1 });
    try {
      await threeCalls(t.fetch);
    } finally {
      await t.close();
    }
    const run = await summarizeRun(readTapeReports(runDir));
    expect(run.unused).toBe(0);
  });
});
