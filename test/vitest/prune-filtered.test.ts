// The printed prune after a run of some test files only (`vitest run a.test.ts`), on a tape two
// test files share through a `name` function: the other file's recordings were not asked for in
// this run, so they are neither counted as unused nor pruned, and that file still replays; once
// the file is deleted, they are stale and the prune drops them.
// Spawned vitest runs of the example project, as a user runs them.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { readTape } from '../../src/store/tape-file.ts';
import { exampleProject, sharedTestFile, summaryLine, type ExampleProject } from './example-project.ts';

let p: ExampleProject;
beforeAll(async () => {
  p = await exampleProject({
    'test/shared-a.test.ts': sharedTestFile('alpha'),
    'test/shared-b.test.ts': sharedTestFile('beta'),
  });
});
afterAll(async () => {
  await p?.close();
});

const files = ['test/shared-a.test.ts', 'test/shared-b.test.ts'];

it('a file-filtered run with TAPEDECK_PRUNE=1 keeps the recordings of the test files it did not run', { timeout: 180_000 }, async () => {
  const tape = join(p.dir, 'shared', 'one.tape');
  const rec = await p.vitest([...files, '--mode', 'record']);
  expect(rec.code, rec.out).toBe(0);
  expect((await readTape(tape)).records).toHaveLength(8);

  // Only the first file, told to prune: beta's four recordings are no stale candidates.
  const one = await p.vitest(['test/shared-a.test.ts'], { CI: 'true', TAPEDECK_PRUNE: '1' });
  expect(one.code, one.out).toBe(0);
  expect(summaryLine(one)).toBe('tapedeck: 1 tape, 0 written, 0 recordings added, 4 replayed, 0 misses, 0 unused recordings');
  expect(one.out).not.toContain('pruned');
  expect((await readTape(tape)).records).toHaveLength(8);

  const both = await p.vitest(files, { CI: 'true', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' });
  expect(both.code, both.out).toBe(0);
  expect(summaryLine(both)).toBe('tapedeck: 1 tape, 0 written, 0 recordings added, 8 replayed, 0 misses, 0 unused recordings');

  // A test file deleted since: its recordings are stale, and the prune drops them.
  rmSync(join(p.dir, 'test', 'shared-b.test.ts'));
  const gone = await p.vitest(['test/shared-a.test.ts'], { CI: 'true', TAPEDECK_PRUNE: '1' });
  expect(gone.code, gone.out).toBe(0);
  expect(gone.out).toContain('tapedeck: pruned 4 unused recording(s).');
  expect((await readTape(tape)).records).toHaveLength(4);
});
