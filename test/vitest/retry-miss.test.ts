// A retried test whose first attempt missed (and failed for it) and whose retry made no request:
// app code that memoizes its fallback (`memo ??= ask().catch(() => 'canned')`) asks once, gets
// the miss, keeps the canned answer, and the retry passes on it. Before, CI with no tape at all
// was a green run (exit 0) in every runner while the summary counted "1 miss". Now the retry
// fails too, with the first attempt's miss and its record command, in vitest (`retry`), jest
// (`jest.retryTimes`) and mocha (`this.retries()`): no plugin or reporter needed. The runners
// really run (spawned), as a user's project has them.
import { describe, expect, it } from 'vitest';
import { upstreamSuite } from '../proxy/upstream-suite.ts';
import { runnerProject, sh } from './runner-project.ts';

const suite = upstreamSuite('retry-miss');

/** The app: asks once, falls back to a canned answer on any error, and keeps what it got. */
const app = `
let memo;
const ask = (f) => f(process.env.UPSTREAM + '/v1/chat/completions', {
  method: 'POST', headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'summarize' }] }),
}).then(async (r) => { if (!r.ok) throw new Error(await r.text()); return (await r.json()).choices[0].message.content; });
const summary = (f) => (memo ??= ask(f).catch(() => 'canned summary'));
`;

const runners: { name: string; files: Record<string, string>; command: string }[] = [
  {
    name: 'vitest',
    files: {
      'vitest.config.mjs': `import { defineConfig } from 'vitest/config';\nexport default defineConfig({ test: { include: ['*.test.mjs'] } });\n`,
      'chat.test.mjs': `import { test, expect } from 'llm-tapedeck/vitest';\n${app}\ntest('summarizes', { retry: 1 }, async ({ tape }) => {\n  expect(await summary(tape.fetch)).toBeTruthy();\n});\n`,
    },
    command: 'npx vitest run',
  },
  {
    name: 'jest',
    files: {
      'jest.config.cjs': `module.exports = { transform: {}, testMatch: ['**/*.test.cjs'], setupFilesAfterEnv: ['llm-tapedeck/jest'] };\n`,
      'chat.test.cjs': `const { tape } = require('llm-tapedeck/jest');\njest.retryTimes(1);\n${app}\ntest('summarizes', async () => {\n  expect(await summary(tape().fetch)).toBeTruthy();\n});\n`,
    },
    command: 'npx jest --no-cache --config jest.config.cjs',
  },
  {
    name: 'mocha',
    files: {
      'chat.test.mjs': `import { tape } from 'llm-tapedeck/mocha';\nimport assert from 'node:assert';\n${app}\ndescribe('chat', function () {\n  this.retries(1);\n  it('summarizes', async () => {\n    assert.ok(await summary(tape().fetch));\n  });\n});\n`,
    },
    command: 'npx mocha --require llm-tapedeck/mocha chat.test.mjs',
  },
];

describe('a retry does not hide a miss', () => {
  for (const r of runners) {
    it(`${r.name}: a retry that makes no request after a missed attempt fails, in CI with no tape; recorded, it passes`, { timeout: 120_000 }, async () => {
      const dir = runnerProject(suite.dir, `${r.name}-retry-miss`, r.files);
      const ci = await sh(r.command, dir, { UPSTREAM: 'http://127.0.0.1:9', CI: 'true' });
      expect(ci.code, ci.out).toBe(1);
      expect(ci.out).toContain('tapedeck miss in attempt 1 of this test: attempt 2 had none, but a retry does not hide a miss');
      expect(ci.out).toMatch(/record it: TAPEDECK_MODE=update/i);
      // Recorded, the first attempt gets its answer and nothing fails.
      const recorded = await sh(r.command, dir, { UPSTREAM: suite.upstream.url, TAPEDECK_MODE: 'update' });
      expect(recorded.code, recorded.out).toBe(0);
      const replayed = await sh(r.command, dir, { UPSTREAM: 'http://127.0.0.1:9', CI: 'true' });
      expect(replayed.code, replayed.out).toBe(0);
      expect(replayed.out).not.toContain('tapedeck miss');
    });
  }
});
