// A call a test fired and did not await, made after the test ended (a background call, a
// fire-and-forget with its error caught): it gets an error answer instead of its recording, and
// no test fails for it. Before, the summary listed it and the run exited 0: CI was green while the
// code under test got a 400. Now the run fails (exit code 1) with a line that says why, in the
// vitest plugin, the jest reporter and mocha's global fixture; a run without the late call passes.
// The runners really run (spawned), as a user's project has them.
import { describe, expect, it } from 'vitest';
import { upstreamSuite } from '../proxy/upstream-suite.ts';
import { runnerProject, sh } from './runner-project.ts';

const suite = upstreamSuite('late-call-fails-run');

const call = `(q) => TAPE.fetch(process.env.UPSTREAM + '/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: q }] }) })`;

/** Two tests: the first makes its call and, with LATE set, fires another 30 ms later, its error caught; the second waits long enough for it. */
const body = (test: string, tape: string, assert: string) => `
${test}('answers', async (${tape === 'TAPE' ? '' : '{ tape }'}) => {
  const TAPE = ${tape === 'TAPE' ? 'tape()' : 'tape'};
  const ask = ${call};
  ${assert.replace('X', "(await ask('hi')).status")};
  if (process.env.LATE) setTimeout(() => ask('later').then((r) => r.text()).catch(() => {}), 30);
});
${test}('waits', async () => {
  await new Promise((r) => setTimeout(r, 300));
});
`;

const runners: { name: string; files: Record<string, string>; command: string }[] = [
  {
    name: 'vitest (plugin)',
    files: {
      'vitest.config.mjs': `import { defineConfig } from 'vitest/config';\nimport { tapedeck } from 'llm-tapedeck/vitest/plugin';\nexport default defineConfig({ plugins: [tapedeck()], test: { include: ['*.test.mjs'] } });\n`,
      'chat.test.mjs': `import { test, expect } from 'llm-tapedeck/vitest';\n${body('test', 'fixture', 'expect(X).toBe(200)')}`,
    },
    command: 'npx vitest run',
  },
  {
    name: 'jest (reporter)',
    files: {
      'jest.config.cjs': `module.exports = { transform: {}, testMatch: ['**/*.test.cjs'], setupFilesAfterEnv: ['llm-tapedeck/jest'], reporters: ['default', 'llm-tapedeck/jest/reporter'] };\n`,
      'chat.test.cjs': `const { tape } = require('llm-tapedeck/jest');\n${body('test', 'TAPE', 'expect(X).toBe(200)')}`,
    },
    command: 'npx jest --config jest.config.cjs',
  },
  {
    name: 'mocha (--require)',
    files: {
      'chat.test.mjs': `import { tape } from 'llm-tapedeck/mocha';\nimport assert from 'node:assert';\n${body('it', 'TAPE', 'assert.strictEqual(X, 200)')}`,
    },
    command: 'npx mocha --require llm-tapedeck/mocha chat.test.mjs',
  },
];

describe('a call made after its test ended fails the run', () => {
  for (const r of runners) {
    it(`${r.name}: exit 1 and the reason, in CI and while recording; 0 without the late call`, { timeout: 120_000 }, async () => {
      const dir = runnerProject(suite.dir, r.name.replace(/\W+/g, '-'), r.files);
      const recorded = await sh(r.command, dir, { UPSTREAM: suite.upstream.url, TAPEDECK_MODE: 'record' });
      expect(recorded.code, recorded.out).toBe(0);
      const ci = { UPSTREAM: 'http://127.0.0.1:9', CI: 'true' };
      const clean = await sh(r.command, dir, ci);
      expect(clean.code, clean.out).toBe(0);
      expect(clean.out).not.toContain('the run fails');
      const late = await sh(r.command, dir, { ...ci, LATE: '1' });
      expect(late.code, late.out).toBe(1);
      // Made while the second test ran: the summary says so, and names both causes.
      expect(late.out).toMatch(/made (after the test ended|through this test's fetch after it ended, while "waits" was running)/);
      expect(late.out).toContain('fix: await every call the test makes');
      expect(late.out).toContain('tapedeck: the run fails: 1 call was made after its test ended and got no answer (listed under Misses): await every call a test makes.');
      // Recording does not hide it either: the late call was not recorded.
      const again = await sh(r.command, dir, { UPSTREAM: suite.upstream.url, TAPEDECK_MODE: 'update', LATE: '1' });
      expect(again.code, again.out).toBe(1);
    });
  }
});
