// Runs that did not run every test whole must not judge tapes no test opened. Before: a test
// file that failed to load (an import error), and every file `--bail` stopped before it ran, had
// no tests, so "every test of it passed" held, and each of its tapes was listed as "no test
// opened this tape: a deleted or renamed test". A `test.todo` anywhere refused every prune ("…
// did not run"), and the summary then printed the same prune command. Now a file that failed to
// load, or a run that stopped early, leaves its tapes unjudged and says so; a todo (no body, no
// recording) does not stop the prune; a refused prune says what stops it and prints no prune
// command. A file that defines no test in a run (its tests behind a flag, --passWithNoTests)
// is not whole either. Spawned vitest runs of the example project, as a user runs them.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { exampleProject, type ExampleProject } from './example-project.ts';

/** A test file of tests `names`: each makes one chat call; the first fails after it when FAIL_FIRST is set. */
const testFile = (names: string[], extra = '', head = '') => `${head}
import { inject } from 'vitest';
import { test } from 'llm-tapedeck/vitest';
for (const name of ${JSON.stringify(names)}) {
  test(name, async ({ tape, expect }) => {
    const r = await tape.fetch(inject('openaiBaseURL') + '/chat/completions', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: name }] }),
    });
    expect(r.status).toBe(200);
    if (process.env.FAIL_FIRST && name === ${JSON.stringify(names[0])}) throw new Error('failed on purpose');
  });
}
${extra}
`;

const FILES = ['test/alpha.test.ts', 'test/beta.test.ts'];
const ORPHAN = 'no test opened this tape';

let p: ExampleProject;
beforeAll(async () => {
  p = await exampleProject({ 'test/alpha.test.ts': testFile(['one', 'two']), 'test/beta.test.ts': testFile(['three', 'four']) });
  const rec = await p.vitest(FILES);
  expect(rec.code, rec.out).toBe(0);
  expect(p.listTapes()).toEqual(['alpha.test/one.tape', 'alpha.test/two.tape', 'beta.test/four.tape', 'beta.test/three.tape']);
}, 180_000);
afterAll(async () => {
  await p?.close();
});

it('a test file that failed to load has its tapes left unjudged, and the summary says so', { timeout: 180_000 }, async () => {
  writeFileSync(join(p.dir, 'test/beta.test.ts'), testFile(['three', 'four'], '', "import './does-not-exist';"));
  try {
    const run = await p.vitest(FILES, { CI: 'true', TAPEDECK_PRUNE: '1' });
    expect(run.code, run.out).not.toBe(0);
    expect(run.out).toContain('does-not-exist');
    expect(run.out, run.out).not.toContain(ORPHAN);
    expect(run.out).toContain('tapedeck: test/beta.test.ts failed to load: its tapes were not checked for tapes no test opened.');
    expect(p.listTapes()).toHaveLength(4);
  } finally {
    writeFileSync(join(p.dir, 'test/beta.test.ts'), testFile(['three', 'four']));
  }
});

it('a run --bail stopped leaves the tapes of the files it did not run unjudged, and says it stopped early', { timeout: 180_000 }, async () => {
  const run = await p.vitest([...FILES, '--bail=1', '--no-file-parallelism'], { CI: 'true', FAIL_FIRST: '1', TAPEDECK_PRUNE: '1' });
  expect(run.code, run.out).not.toBe(0);
  expect(run.out).toContain('failed on purpose');
  expect(run.out, run.out).not.toContain(ORPHAN);
  expect(run.out).toContain('tapedeck: the run stopped early (interrupted): tapes no test opened were not looked for.');
  expect(p.listTapes()).toHaveLength(4);
});

// Tests behind a flag that is off (`if (process.env.X) ...` around them), with --passWithNoTests:
// the file defines no test in this run, so none of its tapes is judged, and none is pruned.
it('a test file that defines no test this run (--passWithNoTests) has its tapes left unjudged', { timeout: 180_000 }, async () => {
  writeFileSync(join(p.dir, 'test/beta.test.ts'), testFile(['three', 'four']).replace('for (const name of ', 'for (const name of process.env.SKIP_BETA ? [] : '));
  try {
    const run = await p.vitest([...FILES, '--passWithNoTests'], { CI: 'true', SKIP_BETA: '1', TAPEDECK_PRUNE: '1' });
    expect(run.code, run.out).toBe(0);
    expect(run.out, run.out).not.toContain(ORPHAN);
    expect(run.out).not.toContain('pruned');
    expect(p.listTapes()).toHaveLength(4);
  } finally {
    writeFileSync(join(p.dir, 'test/beta.test.ts'), testFile(['three', 'four']));
  }
});

it('a test.todo does not stop the prune; a skipped test does, and the summary says why instead of the prune command', { timeout: 180_000 }, async () => {
  // `four` deleted: its tape is stale. A todo beside it has no body and no recording.
  writeFileSync(join(p.dir, 'test/alpha.test.ts'), testFile(['one', 'two'], "test.todo('later');"));
  writeFileSync(join(p.dir, 'test/beta.test.ts'), testFile(['three']));
  const pruned = await p.vitest(FILES, { CI: 'true', TAPEDECK_PRUNE: '1' });
  expect(pruned.code, pruned.out).toBe(0);
  expect(pruned.out).not.toContain('not pruning');
  expect(pruned.out).toContain('tapedeck: pruned 1 unused recording(s).');
  expect(existsSync(join(p.tapes, 'beta.test/four.tape'))).toBe(false);

  // `three` deleted too, and a skipped test: the prune is refused, and said why and what to do.
  writeFileSync(join(p.dir, 'test/alpha.test.ts'), testFile(['one', 'two'], "test.skip('not now', () => {});"));
  writeFileSync(join(p.dir, 'test/beta.test.ts'), testFile([], "test('other', () => {});"));
  const refused = await p.vitest(FILES, { CI: 'true', TAPEDECK_PRUNE: '1' });
  expect(refused.code, refused.out).toBe(0);
  expect(refused.out).toContain('tapedeck: not pruning: test/alpha.test.ts > not now was skipped');
  expect(refused.out).toContain('test/__tapes__/beta.test/three.tape: 1 unused');
  expect(refused.out).not.toContain('Drop them after a full passing run');
  expect(existsSync(join(p.tapes, 'beta.test/three.tape'))).toBe(true);
});
