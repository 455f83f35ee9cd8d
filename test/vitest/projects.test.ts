// A monorepo run by vitest's `test.projects`: every project is one run. Each project's config
// with the plugin (as docs/vitest.md says to add it) once made a run directory and a summary of
// its own, and each summary took the tapes of the other projects, whose test files all passed,
// for tapes no test opened: TAPEDECK_PRUNE=1 deleted every other project's recordings. The
// plugin only in the root config reached no project: no summary, no `--mode`. Spawned vitest
// runs of a two-package workspace, as a user runs them.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from '../../examples/vitest/fake-openai.ts';
import { repo, type Run } from './example-project.ts';

const PLUGIN_CONFIG = `import { defineConfig } from 'vitest/config';
import { tapedeck } from 'llm-tapedeck/vitest/plugin';
export default defineConfig({ plugins: [tapedeck()] });
`;
const BARE_CONFIG = `export default {};\n`;
const rootConfig = (plugin: boolean) => `import { defineConfig } from 'vitest/config';
${plugin ? "import { tapedeck } from 'llm-tapedeck/vitest/plugin';\n" : ''}export default defineConfig({ ${plugin ? 'plugins: [tapedeck()], ' : ''}test: { projects: ['packages/*'] } });
`;
const testFile = (pkg: string) => `import { test } from 'llm-tapedeck/vitest';
test('answers ${pkg}', async ({ tape, expect }) => {
  const r = await tape.fetch(process.env.OPENAI_BASE_URL + '/chat/completions', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello from ${pkg}' }] }),
  });
  expect(r.status).toBe(200);
});
`;

let fake: FakeOpenAI;
const dirs: string[] = [];
beforeAll(async () => {
  fake = await startFakeOpenAI();
});
afterAll(async () => {
  await fake?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A workspace of packages a and b, the plugin where asked. */
function workspace(where: { root: boolean; projects: boolean }): string {
  const dir = mkdtempSync(join(tmpdir(), 'tapedeck-projects-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'mono', private: true, type: 'module', workspaces: ['packages/*'] }));
  writeFileSync(join(dir, 'vitest.config.ts'), rootConfig(where.root));
  for (const pkg of ['a', 'b']) {
    mkdirSync(join(dir, 'packages', pkg, 'test'), { recursive: true });
    writeFileSync(join(dir, 'packages', pkg, 'package.json'), JSON.stringify({ name: pkg, type: 'module' }));
    writeFileSync(join(dir, 'packages', pkg, 'vitest.config.ts'), where.projects ? PLUGIN_CONFIG : BARE_CONFIG);
    writeFileSync(join(dir, 'packages', pkg, 'test', 'q.test.ts'), testFile(pkg));
  }
  mkdirSync(join(dir, 'node_modules'));
  symlinkSync(join(repo, 'node_modules', 'vitest'), join(dir, 'node_modules', 'vitest'));
  symlinkSync(repo, join(dir, 'node_modules', 'llm-tapedeck'));
  return dir;
}

function vitest(dir: string, args: string[], env: Record<string, string> = {}): Promise<Run> {
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined || /^(VITEST|TAPEDECK_|CACHE_MODE$|CI$|NODE_ENV$|NODE_OPTIONS$|OPENAI_)/.test(k)) continue;
    base[k] = v;
  }
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(repo, 'node_modules', 'vitest', 'vitest.mjs'), 'run', ...args],
      { cwd: dir, env: { ...base, NO_COLOR: '1', FORCE_COLOR: '0', OPENAI_BASE_URL: fake.url, ...env }, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: `${stdout}\n${stderr}` }),
    );
  });
}

const summaries = (r: Run) => r.out.split('\n').filter((l) => l.startsWith('tapedeck: ') && / tapes?, /.test(l));
const tapeOf = (dir: string, pkg: string) => join(dir, 'packages', pkg, 'test', '__tapes__', 'q.test', `answers-${pkg}.tape`);

describe('vitest projects', { timeout: 240_000 }, () => {
  for (const where of [
    { root: true, projects: true },
    { root: false, projects: true },
    { root: true, projects: false },
  ]) {
    it(`one summary for the run, and the prune keeps every project's recordings (plugin in ${where.root ? 'the root' : ''}${where.root && where.projects ? ' and ' : ''}${where.projects ? 'each project' : ''})`, async () => {
      const dir = workspace(where);
      const rec = await vitest(dir, []);
      expect(rec.code, rec.out).toBe(0);
      expect(summaries(rec), rec.out).toEqual(['tapedeck: 2 tapes, 2 written, 2 recordings added, 0 replayed, 0 misses, 0 unused recordings']);
      const bytes = ['a', 'b'].map((p) => readFileSync(tapeOf(dir, p)));

      const prune = await vitest(dir, [], { CI: 'true', TAPEDECK_PRUNE: '1' });
      expect(prune.code, prune.out).toBe(0);
      expect(summaries(prune), prune.out).toEqual(['tapedeck: 2 tapes, 0 written, 0 recordings added, 2 replayed, 0 misses, 0 unused recordings']);
      expect(prune.out).not.toContain('pruned');
      ['a', 'b'].forEach((p, i) => {
        expect(existsSync(tapeOf(dir, p)), p).toBe(true);
        expect(readFileSync(tapeOf(dir, p)).equals(bytes[i]!), p).toBe(true);
      });

      // The plugin's `--mode` reaches every project's tests: record mode records both again,
      // where the default (update) would replay them.
      const record = await vitest(dir, ['--mode', 'record']);
      expect(record.code, record.out).toBe(0);
      expect(summaries(record), record.out).toEqual(['tapedeck: 2 tapes, 2 written, 0 recordings added, 2 re-recorded, 0 replayed, 0 misses, 0 unused recordings']);
    });
  }
});
