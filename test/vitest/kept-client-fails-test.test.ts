// A client built with the first test's tape.fetch and kept by the app (a module-level variable,
// an SDK's default client) is used again by the second test, whose code catches the error the
// call gets (E_PROXY_CLOSED: the first test's tape is closed). Before, without the vitest plugin
// or the jest reporter (the setup file alone, as the Quick start reads), the run was green and
// nothing was printed. Now the second test, which was running when the call came, fails with
// what happened and how to build the client per test, in every runner; a project that builds
// its client in each test passes. The runners really run (spawned).
import { describe, expect, it } from 'vitest';
import { upstreamSuite } from '../proxy/upstream-suite.ts';
import { runnerProject, sh } from './runner-project.ts';

const suite = upstreamSuite('kept-client');

/** The app: keeps the first fetch it is given (KEEP set) and asks with it; falls back on any error. */
const app = `
let kept;
const ask = async (f, q) => {
  const use = process.env.KEEP ? (kept ??= f) : f;
  try {
    const r = await use(process.env.UPSTREAM + '/v1/chat/completions', {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: q }] }),
    });
    if (!r.ok) throw new Error(await r.text());
    return (await r.json()).choices[0].message.content;
  } catch {
    return 'fallback';
  }
};
`;

const runners: { name: string; files: Record<string, string>; command: string; failed: RegExp }[] = [
  {
    name: 'vitest without the plugin',
    files: {
      'vitest.config.mjs': `import { defineConfig } from 'vitest/config';\nexport default defineConfig({ test: { include: ['*.test.mjs'] } });\n`,
      'chat.test.mjs': `import { test, expect } from 'llm-tapedeck/vitest';\n${app}\ntest('first', async ({ tape }) => { expect(await ask(tape.fetch, 'one')).toBeTruthy(); });\ntest('second', async ({ tape }) => { expect(await ask(tape.fetch, 'two')).toBeTruthy(); });\n`,
    },
    command: 'npx vitest run',
    failed: /Tests\s+1 failed \| 1 passed/,
  },
  {
    name: 'jest without the reporter',
    files: {
      'jest.config.cjs': `module.exports = { transform: {}, testMatch: ['**/*.test.cjs'], setupFilesAfterEnv: ['llm-tapedeck/jest'] };\n`,
      'chat.test.cjs': `const { tape } = require('llm-tapedeck/jest');\n${app}\ntest('first', async () => { expect(await ask(tape().fetch, 'one')).toBeTruthy(); });\ntest('second', async () => { expect(await ask(tape().fetch, 'two')).toBeTruthy(); });\n`,
    },
    command: 'npx jest --no-cache --config jest.config.cjs',
    failed: /Tests:\s+1 failed, 1 passed/,
  },
  {
    name: 'mocha',
    files: {
      'chat.test.mjs': `import { tape } from 'llm-tapedeck/mocha';\nimport assert from 'node:assert';\n${app}\nit('first', async () => { assert.ok(await ask(tape().fetch, 'one')); });\nit('second', async () => { assert.ok(await ask(tape().fetch, 'two')); });\n`,
    },
    command: 'npx mocha --require llm-tapedeck/mocha chat.test.mjs',
    failed: /1 passing[\s\S]*1 failing/,
  },
];

describe('a call through an ended test\'s fetch fails the test that was running', () => {
  for (const r of runners) {
    it(r.name, { timeout: 120_000 }, async () => {
      const dir = runnerProject(suite.dir, r.name.replace(/\W+/g, '-'), r.files);
      const env = { UPSTREAM: suite.upstream.url, TAPEDECK_MODE: 'update' };
      const kept = await sh(r.command, dir, { ...env, KEEP: '1' });
      expect(kept.code, kept.out).toBe(1);
      expect(kept.out).toMatch(r.failed);
      expect(kept.out).toMatch(/tapedeck: 1 call made while this test ran came through the tape\.fetch of "[^"]*first", which had ended, and got no answer \(POST \/v1\/chat\/completions\)/);
      expect(kept.out).toContain("Build the client inside each test from that test's tape.fetch");
      // Each test with its own fetch: nothing to fail.
      const own = await sh(r.command, dir, env);
      expect(own.code, own.out).toBe(0);
    });
  }
});
