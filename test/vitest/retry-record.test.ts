// A test retried after a failed attempt, recorded: replay gives it the answers its passing
// attempt got, in every runner (vitest's `retry` with the plugin, jest.retryTimes with the
// reporter, mocha's this.retries()). The fake provider numbers its answers (Echo N), so the
// failed attempt's answer and the passing attempt's two differ. Before,
// the attempts of one run never replaced each other's recordings (the workers of a run share it):
// the tape kept all three, and a replay gave the test Echo 1 and Echo 2.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readTape } from '../../src/store/tape-file.ts';
import { upstreamSuite } from '../proxy/upstream-suite.ts';
import { runnerProject, sh } from './runner-project.ts';

const suite = upstreamSuite('retry-record');

// Asks the same question twice; the first attempt fails between the two calls when FLAKY is set.
const body = (tapeFetch: string) => `
    attempt++;
    const ask = async () => {
      const r = await ${tapeFetch}(process.env.UPSTREAM + '/v1/chat/completions', {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] }),
      });
      return (await r.json()).choices[0].message.content.split(':')[0];
    };
    const first = await ask();
    if (attempt === 1 && process.env.FLAKY) throw new Error('a flaky failure after the first call');
    const second = await ask();
    console.log('GOT ' + first + ' / ' + second);`;

const runners: { name: string; files: Record<string, string>; run: string }[] = [
  {
    name: 'vitest',
    files: {
      'vitest.config.mjs': `import { defineConfig } from 'vitest/config';\nimport { tapedeck } from 'llm-tapedeck/vitest/plugin';\nexport default defineConfig({ plugins: [tapedeck()] });\n`,
      'chat.test.mjs': `import { test } from 'llm-tapedeck/vitest';\nlet attempt = 0;\ntest('asks twice', { retry: 1 }, async ({ tape }) => {${body('tape.fetch')}\n});\n`,
    },
    run: 'npx vitest run',
  },
  {
    name: 'jest',
    files: {
      'jest.config.cjs': `module.exports = { transform: {}, testMatch: ['**/*.test.cjs'], setupFilesAfterEnv: ['llm-tapedeck/jest'], reporters: ['default', 'llm-tapedeck/jest/reporter'] };\n`,
      'chat.test.cjs': `const { tape } = require('llm-tapedeck/jest');\njest.retryTimes(1);\nlet attempt = 0;\ntest('asks twice', async () => {${body('tape().fetch')}\n});\n`,
    },
    run: 'npx jest --no-cache',
  },
  {
    name: 'mocha',
    files: {
      'chat.test.mjs': `import { tape } from 'llm-tapedeck/mocha';\nlet attempt = 0;\ndescribe('chat', function () {\n  this.retries(1);\n  it('asks twice', async () => {${body('tape().fetch')}\n  });\n});\n`,
    },
    run: 'npx mocha --require llm-tapedeck/mocha chat.test.mjs',
  },
];

const tapesIn = (dir: string): string[] =>
  readdirSync(join(dir, '__tapes__'), { recursive: true, withFileTypes: true }).filter((e) => e.isFile() && e.name.endsWith('.tape')).map((e) => join(e.parentPath, e.name));

describe('a retried test, recorded', () => {
  for (const r of runners) {
    it(`replays what its passing attempt got, not the failed attempt's answers (${r.name})`, { timeout: 120_000 }, async () => {
      const dir = runnerProject(suite.dir, `${r.name}-retry`, r.files);
      const recorded = await sh(r.run, dir, { UPSTREAM: suite.upstream.url, TAPEDECK_MODE: 'record', FLAKY: '1' });
      expect(recorded.code, recorded.out).toBe(0);
      const live = /GOT (.*)/.exec(recorded.out)?.[1];
      expect(live, recorded.out).toMatch(/^Echo \d+ \/ Echo \d+$/);
      const tapes = tapesIn(dir);
      expect(tapes).toHaveLength(1);
      expect((await readTape(tapes[0]!)).records).toHaveLength(2);
      // The run summary says the two the tape holds added; the passing attempt's taking the place
      // of the failed one's is no re-recording (the tape had nothing before this run).
      expect(recorded.out).toMatch(/\(record\): \+2 added\s*$/m);
      expect(recorded.out).not.toMatch(/re-recorded/);

      const replayed = await sh(r.run, dir, { UPSTREAM: 'http://127.0.0.1:9', CI: 'true' });
      expect(replayed.code, replayed.out).toBe(0);
      expect(/GOT (.*)/.exec(replayed.out)?.[1]).toBe(live);
    });
  }
});

// vitest's `repeats` runs a test again in the same run. Before, each repetition's recordings were
// kept beside the others' (three repetitions, three times the recordings), and a replay used only
// the first repetition's: the rest were reported unused after every record run.
describe('a repeated test, recorded', () => {
  it('keeps one repetition\'s recordings, and replays them to every repetition (vitest repeats)', { timeout: 120_000 }, async () => {
    const files = {
      ...runners[0]!.files,
      'chat.test.mjs': `import { test } from 'llm-tapedeck/vitest';\nlet attempt = 0;\ntest('asks twice', { repeats: 2 }, async ({ tape }) => {${body('tape.fetch')}\n});\n`,
    };
    const dir = runnerProject(suite.dir, 'vitest-repeats', files);
    const recorded = await sh('npx vitest run', dir, { UPSTREAM: suite.upstream.url, TAPEDECK_MODE: 'record' });
    expect(recorded.code, recorded.out).toBe(0);
    const live = [...recorded.out.matchAll(/GOT (.*)/g)].map((m) => m[1]);
    expect(live, recorded.out).toHaveLength(3);
    expect(new Set(live).size, 'each repetition reached the provider').toBe(3);
    const tapes = tapesIn(dir);
    expect(tapes).toHaveLength(1);
    expect((await readTape(tapes[0]!)).records).toHaveLength(2);
    expect(recorded.out).toMatch(/\(record\): \+2 added\s*$/m);
    expect(recorded.out).not.toMatch(/re-recorded/);

    const replayed = await sh('npx vitest run', dir, { UPSTREAM: 'http://127.0.0.1:9', CI: 'true' });
    expect(replayed.code, replayed.out).toBe(0);
    expect([...replayed.out.matchAll(/GOT (.*)/g)].map((m) => m[1])).toEqual([live[2], live[2], live[2]]);
  });
});
