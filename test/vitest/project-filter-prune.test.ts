// Two vitest projects run the same test file, each with its own environment (a prompt that
// depends on it, as an app's system prompt may). A prune in a run narrowed to one project with
// `--project` took the other project's recordings, which no test of this run asked for, for
// stale, and deleted them: the next full run missed in that project. A run narrowed by
// --project is a partial run, as one filtered with -t: it prunes nothing and says why. Spawned
// vitest runs of the example project, as a user runs them.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { exampleProject, type ExampleProject } from './example-project.ts';

const TEST_FILE = `
import { inject } from 'vitest';
import { test } from 'llm-tapedeck/vitest';
for (const name of ['one', 'two']) {
  test(name, async ({ tape, expect }) => {
    const r = await tape.fetch(inject('openaiBaseURL') + '/chat/completions', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: name + ' in ' + (process.env.PROJECT ?? 'fast') }] }),
    });
    expect(r.status).toBe(200);
  });
}
`;

const CONFIG = `import { defineConfig } from 'vitest/config';
import { tapedeck } from 'llm-tapedeck/vitest/plugin';
export default defineConfig({
  plugins: [tapedeck()],
  test: {
    globalSetup: ['./global-setup.ts'],
    projects: [
      { extends: true, test: { name: 'fast', include: ['test/shared.test.ts'] } },
      { extends: true, test: { name: 'again', include: ['test/shared.test.ts'], env: { PROJECT: 'again' } } },
    ],
  },
});
`;

let p: ExampleProject;
beforeAll(async () => {
  p = await exampleProject({ 'test/shared.test.ts': TEST_FILE });
  writeFileSync(join(p.dir, 'vitest.projects.config.ts'), CONFIG);
}, 60_000);
afterAll(async () => {
  await p?.close();
});

it('a prune in a run narrowed by --project keeps the recordings the other project needs', { timeout: 180_000 }, async () => {
  const cfg = ['-c', 'vitest.projects.config.ts'];
  const rec = await p.vitest(cfg, { TAPEDECK_MODE: 'update' });
  expect(rec.code, rec.out).toBe(0);
  const full = await p.vitest(cfg, { CI: 'true' });
  expect(full.code, full.out).toBe(0);

  const narrowed = await p.vitest([...cfg, '--project', 'fast'], { CI: 'true', TAPEDECK_PRUNE: '1' });
  expect(narrowed.code, narrowed.out).toBe(0);
  expect(narrowed.out).not.toContain('tapedeck: pruned');
  expect(narrowed.out).toContain('tapedeck: not pruning: the run was narrowed to some projects with --project');

  const after = await p.vitest(cfg, { CI: 'true' });
  expect(after.code, after.out).toBe(0);
  expect(after.out).not.toContain('tapedeck miss');
});
