// Two tests of one name in one file (a copied test, `test.each` with a title that names no
// case): each replays the answers it got when recorded. Before, both carried one name on the
// tape they share, so a replay gave the second test the first one's answer (Echo 1 for Echo 2)
// and counted its own recording unused, in every runner. The fake provider numbers its answers.
import { describe, expect, it } from 'vitest';
import { upstreamSuite } from '../proxy/upstream-suite.ts';
import { runnerProject, sh } from './runner-project.ts';

const suite = upstreamSuite('same-name');

const body = (which: string, tapeFetch: string) => `
    const r = await ${tapeFetch}(process.env.UPSTREAM + '/v1/chat/completions', {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] }),
    });
    console.log('${which} ' + (await r.json()).choices[0].message.content.split(':')[0]);`;

const runners: { name: string; files: Record<string, string>; run: string }[] = [
  {
    name: 'vitest',
    files: {
      'vitest.config.mjs': `import { defineConfig } from 'vitest/config';\nimport { tapedeck } from 'llm-tapedeck/vitest/plugin';\nexport default defineConfig({ plugins: [tapedeck()] });\n`,
      'chat.test.mjs': `import { test, describe } from 'llm-tapedeck/vitest';\ndescribe('chat', () => {\n  test('asks', async ({ tape }) => {${body('FIRST', 'tape.fetch')}\n  });\n  test('asks', async ({ tape }) => {${body('SECOND', 'tape.fetch')}\n  });\n});\n`,
    },
    run: 'npx vitest run',
  },
  {
    name: 'jest',
    files: {
      'jest.config.cjs': `module.exports = { transform: {}, testMatch: ['**/*.test.cjs'], setupFilesAfterEnv: ['llm-tapedeck/jest'], reporters: ['default', 'llm-tapedeck/jest/reporter'] };\n`,
      'chat.test.cjs': `const { tape } = require('llm-tapedeck/jest');\ndescribe('chat', () => {\n  test('asks', async () => {${body('FIRST', 'tape().fetch')}\n  });\n  test('asks', async () => {${body('SECOND', 'tape().fetch')}\n  });\n});\n`,
    },
    run: 'npx jest --no-cache',
  },
  {
    name: 'mocha',
    files: {
      'chat.test.mjs': `import { tape } from 'llm-tapedeck/mocha';\ndescribe('chat', function () {\n  it('asks', async () => {${body('FIRST', 'tape().fetch')}\n  });\n  it('asks', async () => {${body('SECOND', 'tape().fetch')}\n  });\n});\n`,
    },
    run: 'npx mocha --require llm-tapedeck/mocha chat.test.mjs',
  },
];

const got = (out: string, which: string) => new RegExp(`${which} (Echo \\d+)`).exec(out)?.[1];

describe('two tests of one name in a file', () => {
  for (const r of runners) {
    it(`each replays its own answer, none left unused (${r.name})`, { timeout: 120_000 }, async () => {
      const dir = runnerProject(suite.dir, `${r.name}-same-name`, r.files);
      const recorded = await sh(r.run, dir, { UPSTREAM: suite.upstream.url, TAPEDECK_MODE: 'record' });
      expect(recorded.code, recorded.out).toBe(0);
      const first = got(recorded.out, 'FIRST');
      const second = got(recorded.out, 'SECOND');
      expect(first, recorded.out).toMatch(/^Echo \d+$/);
      expect(second, recorded.out).not.toBe(first);

      const replayed = await sh(r.run, dir, { UPSTREAM: 'http://127.0.0.1:9', CI: 'true' });
      expect(replayed.code, replayed.out).toBe(0);
      expect([got(replayed.out, 'FIRST'), got(replayed.out, 'SECOND')], replayed.out).toEqual([first, second]);
      expect(replayed.out).toMatch(/ 0 unused recordings/);

      if (r.name === 'vitest') {
        // The second test alone (by its line): it is still the second of its name.
        const line = r.files['chat.test.mjs']!.split('\n').findLastIndex((l) => l.includes("test('asks'")) + 1;
        const alone = await sh(`npx vitest run chat.test.mjs:${line}`, dir, { UPSTREAM: 'http://127.0.0.1:9', CI: 'true' });
        expect(alone.code, alone.out).toBe(0);
        expect([got(alone.out, 'FIRST'), got(alone.out, 'SECOND')], alone.out).toEqual([undefined, second]);
      }
    });
  }
});
