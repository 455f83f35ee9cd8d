// The plugin's run folder (the workers' tape reports, in the temp directory) is removed when
// vitest ends, whatever the run did. Before, a run that opened no tape, and one that vitest
// ended before any test ran (no test at the line given), left a `tapedeck-run-*` folder behind
// each time.
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { upstreamSuite } from '../proxy/upstream-suite.ts';
import { runnerProject, sh } from './runner-project.ts';

const suite = upstreamSuite('run-dir');

const files = {
  'vitest.config.mjs': `import { defineConfig } from 'vitest/config';\nimport { tapedeck } from 'llm-tapedeck/vitest/plugin';\nexport default defineConfig({ plugins: [tapedeck()] });\n`,
  'plain.test.mjs': `import { test, expect } from 'vitest';\ntest('adds', () => { expect(1 + 1).toBe(2); });\n`,
  'chat.test.mjs': `import { test, expect } from 'llm-tapedeck/vitest';\ntest('asks', async ({ tape }) => {\n  const r = await tape.fetch(process.env.UPSTREAM + '/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }) });\n  expect(r.status).toBe(200);\n});\n`,
};

describe('the vitest plugin\'s run folder', () => {
  const runs: [string, string, number][] = [
    ['a run with a tape', 'npx vitest run', 0],
    ['a run that opened no tape', 'npx vitest run plain.test.mjs', 0],
    ['a run ended before any test ran', 'npx vitest run plain.test.mjs:99', 1],
  ];
  const dir = runnerProject(suite.dir, 'run-dir', files);
  for (const [what, command, code] of runs) {
    it(`is gone after ${what}`, { timeout: 60_000 }, async () => {
      const tmp = join(suite.dir, `tmp-${code}-${what.length}`);
      mkdirSync(tmp);
      const r = await sh(command, dir, { UPSTREAM: suite.upstream.url, TAPEDECK_MODE: 'record', TMPDIR: tmp });
      expect(r.code, r.out).toBe(code);
      expect(readdirSync(tmp).filter((n) => n.startsWith('tapedeck-run-'))).toEqual([]);
    });
  }
});
