// A test that installs fake timers (vi.useFakeTimers(), jest.useFakeTimers()) and leaves them
// installed: the tape closed after it waited on setImmediate, which the fake timers replace, so
// vitest hung forever in the fixture's teardown (no timeout fires there) and jest failed the test
// with "Exceeded timeout of 5000 ms for a hook" and nothing saying why. The tape code waits with
// the timer functions it captured when it loaded, before a test could fake them: such a test
// passes, recording and replaying, as it does with a real fetch. The runners really run
// (spawned), bounded by `timeout` so a hang fails the test instead of stalling the suite.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { upstreamSuite } from '../proxy/upstream-suite.ts';
import { runnerProject, sh } from './runner-project.ts';

const suite = upstreamSuite('fake-timers');

/** Two calls, one of them streamed (its body read), with fake timers installed first and never restored. */
const body = (test: string, tape: string, fake: string) => `
${test}('calls with fake timers left installed', async (${tape === 'TAPE' ? '' : '{ tape }'}) => {
  ${fake};
  const TAPE = ${tape === 'TAPE' ? 'tape()' : 'tape'};
  const ask = (q, stream) => TAPE.fetch(process.env.UPSTREAM + '/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', stream, messages: [{ role: 'user', content: q }] }) });
  const r = await ask('hi', false);
  expect(r.status).toBe(200);
  expect(JSON.stringify(await r.json())).toContain('hi');
  const s = await ask('streamed', true);
  expect(s.status).toBe(200);
  expect(await s.text()).toContain('[DONE]');
});
${test}('runs after it, fake timers still installed', async (${tape === 'TAPE' ? '' : '{ tape }'}) => {
  const TAPE = ${tape === 'TAPE' ? 'tape()' : 'tape'};
  const r = await TAPE.fetch(process.env.UPSTREAM + '/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'again' }] }) });
  expect(r.status).toBe(200);
});
`;

const runners: { name: string; files: Record<string, string>; command: string }[] = [
  {
    name: 'vitest (vi.useFakeTimers())',
    files: {
      'vitest.config.mjs': `import { defineConfig } from 'vitest/config';\nimport { tapedeck } from 'llm-tapedeck/vitest/plugin';\nexport default defineConfig({ plugins: [tapedeck()], test: { include: ['*.test.mjs'] } });\n`,
      'chat.test.mjs': `import { vi } from 'vitest';\nimport { test, expect } from 'llm-tapedeck/vitest';\n${body('test', 'fixture', 'vi.useFakeTimers()')}`,
    },
    command: 'npx vitest run',
  },
  {
    name: 'jest (jest.useFakeTimers, nextTick and queueMicrotask real)',
    files: {
      'jest.config.cjs': `module.exports = { transform: {}, testMatch: ['**/*.test.cjs'], setupFilesAfterEnv: ['llm-tapedeck/jest'], reporters: ['default', 'llm-tapedeck/jest/reporter'] };\n`,
      'chat.test.cjs': `const { tape } = require('llm-tapedeck/jest');\n${body('test', 'TAPE', "jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask'] })")}`,
    },
    command: 'npx jest --config jest.config.cjs',
  },
];

describe('fake timers left installed by a test', () => {
  // A wait the tape cannot make on real timers (createFetch's shutdown bound, here for a stream
  // the provider never ends) fails the test past its bound, saying why, instead of hanging.
  it('vitest: a close stuck on fake timers fails the test with the reason', { timeout: 90_000 }, async () => {
    const dir = runnerProject(suite.dir, 'stuck', {
      'vitest.config.mjs': `import { defineConfig } from 'vitest/config';\nimport { tapedeck } from 'llm-tapedeck/vitest/plugin';\nexport default defineConfig({ plugins: [tapedeck()], test: { include: ['*.test.mjs'] } });\n`,
      'hang.test.mjs': `import { test as base } from 'vitest';
import { tapedeckFixtures, vi, expect } from 'llm-tapedeck/vitest';
const test = base.extend(tapedeckFixtures({ shutdownTimeoutMs: 300 }));
test('a stream that never ends', async ({ tape }) => {
  vi.useFakeTimers();
  const r = await tape.fetch(process.env.UPSTREAM + '/v1/hang-body', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  expect(r.status).toBe(200);
});
`,
    });
    const tmp = join(dir, 'tmp');
    mkdirSync(tmp);
    const run = await sh('timeout -k 5 60 npx vitest run', dir, { UPSTREAM: suite.upstream.url, TAPEDECK_MODE: 'record', TMPDIR: tmp });
    expect(run.code, run.out).toBe(1);
    expect(run.out).toMatch(/Closing the test tape __tapes__\/hang\.test\/a-stream-that-never-ends\.tape has waited 5\.3 s: fake timers are installed/);
    expect(run.out).toContain('vi.useRealTimers()');
  });

  for (const r of runners) {
    it(`${r.name}: the test passes, recording and in CI replay`, { timeout: 150_000 }, async () => {
      const dir = runnerProject(suite.dir, r.name.replace(/\W+/g, '-'), r.files);
      // A hang is killed (exit 124) rather than left to stall this suite; the run folder a killed
      // runner leaves behind goes with the suite's folder.
      const tmp = join(dir, 'tmp');
      mkdirSync(tmp);
      const recorded = await sh(`timeout -k 5 60 ${r.command}`, dir, { UPSTREAM: suite.upstream.url, TAPEDECK_MODE: 'record', TMPDIR: tmp });
      expect(recorded.code, recorded.out).toBe(0);
      expect(recorded.out).toMatch(/2 passed/);
      const replayed = await sh(`timeout -k 5 60 ${r.command}`, dir, { UPSTREAM: 'http://127.0.0.1:9', CI: 'true', TMPDIR: tmp });
      expect(replayed.code, replayed.out).toBe(0);
      expect(replayed.out).toMatch(/2 passed/);
      expect(replayed.out).toMatch(/3 replayed/);
    });
  }
});
