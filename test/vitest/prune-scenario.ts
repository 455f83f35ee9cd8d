// The prune scenario the jest and mocha suites share: two tests on one tape (a test of two calls,
// which BREAK makes fail between them and SKIP skips, and another, which ONLY marks `.only`), recorded once, then replayed
// with TAPEDECK_PRUNE=1 failed, skipped, filtered and whole; only a whole passing run may prune,
// and it prunes only a recording no test asks for any more.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { readTape } from '../../src/store/tape-file.ts';

type Run = (project: string, env: Record<string, string>, args?: string[]) => Promise<{ code: number | null; out: string }>;

export interface PruneScenario {
  /** Where the project is made. */
  project: string;
  /** The test file's name and text (see the top). */
  file: string;
  text: string;
  /** The line of step two, removed to make its recording stale. */
  stepTwo: string;
  /** The runner's filter for the other test alone, and how the summary names it. */
  filter: string[];
  filtered: string;
  /** Why the summary does not prune when ONLY marks the other test `.only`; undefined: the runner refuses `.only` (mocha --parallel). */
  onlyReason: string | undefined;
  upstream: string;
  run: Run;
}

/** Runs the scenario (see the top), asserting each step. */
export async function pruneScenario(s: PruneScenario): Promise<void> {
  mkdirSync(s.project, { recursive: true });
  writeFileSync(join(s.project, s.file), s.text);
  const tape = join(s.project, 'shared.tape');
  const records = async () => (await readTape(tape)).records.length;
  const rec = await s.run(s.project, { UPSTREAM: s.upstream, TAPEDECK_MODE: 'record' });
  expect(rec.code, rec.out).toBe(0);
  expect(await records()).toBe(3);

  const replay = { UPSTREAM: 'http://127.0.0.1:9', CI: 'true', TAPEDECK_PRUNE: '1' };
  // The test failed before step two: step two's recording is unused in this run, and needed.
  const failed = await s.run(s.project, { ...replay, BREAK: '1' });
  expect(failed.code).toBe(1);
  expect(failed.out).toContain('tapedeck: not pruning: the run did not pass (1 test failed).');
  expect(await records()).toBe(3);

  // A skipped test's recordings are unused too.
  const skipped = await s.run(s.project, { ...replay, SKIP: '1' });
  expect(skipped.code, skipped.out).toBe(0);
  expect(skipped.out).toContain('tapedeck: not pruning: 1 test did not run.');
  expect(await records()).toBe(3);

  // The test filtered out leaves its recordings unused.
  const filtered = await s.run(s.project, replay, s.filter);
  expect(filtered.code, filtered.out).toBe(0);
  expect(filtered.out).toContain(`tapedeck: not pruning: tests were filtered with ${s.filtered}.`);
  expect(await records()).toBe(3);

  // The test .only left out leaves its recordings unused: the runner counts it as skipped or
  // not at all.
  const only = await s.run(s.project, { ...replay, ONLY: '1' });
  if (s.onlyReason === undefined) expect(only.code, only.out).toBe(1);
  else {
    expect(only.code, only.out).toBe(0);
    expect(only.out).toContain(`tapedeck: not pruning: ${s.onlyReason}.`);
  }
  expect(await records()).toBe(3);

  // A full passing run uses every recording: nothing to prune, and nothing was lost.
  const full = await s.run(s.project, replay);
  expect(full.code, full.out).toBe(0);
  expect(full.out).toContain('tapedeck: 1 tape, 0 written, 0 recordings added, 3 replayed, 0 misses, 0 unused recordings');

  // Step two removed from the test: its recording is stale, and a full passing run drops it.
  writeFileSync(join(s.project, s.file), s.text.replace(s.stepTwo, ''));
  const stale = await s.run(s.project, replay);
  expect(stale.code, stale.out).toBe(0);
  expect(stale.out).toContain('tapedeck: pruned 1 unused recording(s).');
  expect(await records()).toBe(2);
}

export interface OrphanScenario {
  /** Where the project is made. */
  project: string;
  /** The test file's name, and its text for the tests named. */
  file: string;
  text: (names: string[]) => string;
  /** Where a test's tape is, in the project. */
  tapeOf: (name: string) => string;
  upstream: string;
  run: Run;
}

/**
 * A deleted test's tape (a tape per test): recorded with two tests, one of them deleted, a full
 * passing replay with TAPEDECK_PRUNE=1 reports its tape as opened by no test and removes it,
 * leaving the other tape as it was.
 */
export async function orphanScenario(s: OrphanScenario): Promise<void> {
  mkdirSync(s.project, { recursive: true });
  writeFileSync(join(s.project, s.file), s.text(['kept', 'deleted']));
  const rec = await s.run(s.project, { UPSTREAM: s.upstream, TAPEDECK_MODE: 'record' });
  expect(rec.code, rec.out).toBe(0);
  const kept = join(s.project, s.tapeOf('kept'));
  const deleted = join(s.project, s.tapeOf('deleted'));
  expect(existsSync(deleted), rec.out).toBe(true);
  const keptBytes = readFileSync(kept);

  writeFileSync(join(s.project, s.file), s.text(['kept']));
  const replay = { UPSTREAM: 'http://127.0.0.1:9', CI: 'true' };
  const ci = await s.run(s.project, replay);
  expect(ci.code, ci.out).toBe(0);
  expect(ci.out).toContain('0 misses, 1 unused recording');
  expect(ci.out).toContain(`${s.tapeOf('deleted')}: 1 unused (no test opened this tape: a deleted or renamed test)`);
  const prune = await s.run(s.project, { ...replay, TAPEDECK_PRUNE: '1' });
  expect(prune.code, prune.out).toBe(0);
  expect(prune.out).toContain('tapedeck: pruned 1 unused recording(s).');
  expect(existsSync(deleted)).toBe(false);
  expect(readFileSync(kept).equals(keptBytes)).toBe(true);
}
