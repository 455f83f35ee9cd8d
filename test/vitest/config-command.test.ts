// The record and prune commands a run prints are run as printed: a run started with its own
// config file (`vitest run -c vitest.tapes.config.ts`) prints them with that file, or they would
// run another config (or none) and record nothing where the miss was. The example project, run
// by vitest itself (spawned) in a temp folder.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleProject, repo, type ExampleProject } from './example-project.ts';

let p: ExampleProject;
beforeAll(async () => {
  // The example's config under a name vitest does not look for by itself.
  p = await exampleProject({ 'vitest.tapes.config.ts': readFileSync(join(repo, 'examples', 'vitest', 'vitest.config.ts'), 'utf8') });
}, 60_000);
afterAll(() => p?.close());

describe('a run with its own config file', () => {
  it('prints the record command with -c and that file', async () => {
    const r = await p.vitest(['-c', 'vitest.tapes.config.ts', 'test/openai.test.ts'], { CI: 'true' });
    expect(r.code).toBe(1);
    expect(r.out).toContain("Record it: TAPEDECK_MODE=update npx vitest run -c vitest.tapes.config.ts test/openai.test.ts -t '^openai sdk answers a question$'");
  }, 60_000);

  it('the default config file gets no -c', async () => {
    const r = await p.vitest(['test/openai.test.ts'], { CI: 'true' });
    expect(r.code).toBe(1);
    expect(r.out).toContain("Record it: TAPEDECK_MODE=update npx vitest run test/openai.test.ts -t '^openai sdk answers a question$'");
  }, 60_000);
});
