// A test that asks for faults at a rate (tape.chaos({ faults: { 429: 0.5 } })) without a seed
// gets the same faults on every run: the seed defaults to one of the test's own (from its name
// and file), so a test of a fallback path passes or fails the same way locally and in CI. Before,
// the seed was random on each run and the test took its fallback on other calls each time.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestTape } from '../../src/testing/session.ts';
import { chatText, openai, recordTape, REPLAY_BASE, tempDir } from './record.ts';

const tmp = tempDir('test-tape-seed');
const tape = join(tmp.dir, 'falls-back.tape');
const PROMPTS = Array.from({ length: 16 }, (_, i) => `question ${i}`);

beforeAll(async () => {
  const up = await recordTape(tape, async (c) => {
    for (const p of PROMPTS) await chatText(c, p);
  });
  await up.close();
});
afterAll(() => tmp.remove());

/** One replay run of the test: which calls fell back on an injected rate limit, and the warnings. */
async function run(test: string, runName: string): Promise<{ fellBack: number[]; warnings: string[] }> {
  const warnings: string[] = [];
  const t = openTestTape({ tape, env: { CI: '1' }, runDir: join(tmp.dir, runName), test, file: join(tmp.dir, 'falls-back.test.ts'), root: tmp.dir, onWarning: (m) => warnings.push(m) });
  t.chaos({ faults: { 429: 0.5 } });
  const fellBack: number[] = [];
  try {
    const c = openai(REPLAY_BASE, { fetch: t.fetch });
    for (const [i, p] of PROMPTS.entries()) {
      try {
        await chatText(c, p);
      } catch (e) {
        expect((e as { status?: number }).status).toBe(429);
        fellBack.push(i);
      }
    }
  } finally {
    await t.close();
  }
  return { fellBack, warnings };
}

describe('tape.chaos() without a seed', () => {
  it('injects the same faults on every run of the test', async () => {
    const first = await run('falls back on rate limits', 'run-1');
    const second = await run('falls back on rate limits', 'run-2');
    expect(first.fellBack.length).toBeGreaterThan(0);
    expect(first.fellBack.length).toBeLessThan(PROMPTS.length);
    expect(second.fellBack).toEqual(first.fellBack);
    const seedOf = (w: string[]): string | undefined => w.join('\n').match(/with seed (\d+)/)?.[1];
    expect(seedOf(second.warnings)).toBe(seedOf(first.warnings));
  });
});
