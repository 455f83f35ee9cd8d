// The prune the jest summary prints (TAPEDECK_PRUNE=1 npx jest) drops only after a complete,
// passing run: a test that failed before its last call, one skipped, or a run filtered with -t
// leaves recordings unused that the test still needs. Jest really running (spawned), with the
// one-line setup and the reporter.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'vitest';
import { upstreamSuite } from '../proxy/upstream-suite.ts';
import { outputOf } from './child.ts';
import { orphanScenario, pruneScenario } from './prune-scenario.ts';

const root = join(import.meta.dirname, '..', '..');
const dist = join(root, 'dist', 'testing');
const suite = upstreamSuite('jest-prune');

// Two tests on one tape: a test of two calls (BREAK makes it fail between them, SKIP skips it)
// and another; so a test that does not run (or not to its end) leaves unused recordings behind.
const twoSteps = `const { tape, configureTapes } = require(${JSON.stringify(join(dist, 'jest.cjs'))});
configureTapes({ name: () => 'shared.tape' });
const ask = (q) => tape().fetch(process.env.UPSTREAM + '/v1/chat/completions', {
  method: 'POST', headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: q }] }),
});
(process.env.SKIP ? test.skip : test)('two steps', async () => {
  expect((await ask('step one')).status).toBe(200);
  if (process.env.BREAK) throw new Error('a bug before step two');
  expect((await ask('step two')).status).toBe(200);
});
(process.env.ONLY ? test.only : test)('another', async () => {
  expect((await ask('another')).status).toBe(200);
});
`;

function jest(project: string, env: Record<string, string>, args: string[] = []): Promise<{ code: number | null; out: string }> {
  const { CI: _ci, TAPEDECK_MODE: _m, TAPEDECK_RUN_DIR: _r, TAPEDECK_PRUNE: _p, VITEST: _v, VITEST_WORKER_ID: _w, VITEST_POOL_ID: _pi, NODE_OPTIONS: _n, ...base } = process.env;
  const config = JSON.stringify({ rootDir: project, transform: {}, setupFilesAfterEnv: [join(dist, 'jest.cjs')], reporters: ['default', join(dist, 'jest-reporter.cjs')] });
  const cmd = [join(root, 'node_modules', 'jest', 'bin', 'jest.js'), '--config', config, '--no-cache', ...args];
  return outputOf(spawn(process.execPath, cmd, { cwd: project, env: { ...base, ...env } }));
}

describe('jest: TAPEDECK_PRUNE=1', () => {
  it('does not prune after a failed run, a skipped test, -t or .only; prunes after a full passing run', { timeout: 120_000 }, async () => {
    await pruneScenario({
      project: join(suite.dir, 'jest-prune'),
      file: 'two.test.js',
      text: twoSteps,
      stepTwo: "expect((await ask('step two')).status).toBe(200);",
      filter: ['-t', '^another$'],
      filtered: '-t',
      onlyReason: '1 test did not run',
      upstream: suite.upstream.url,
      run: jest,
    });
  });
});

// A tape per test (the default naming): a deleted test's tape is found in its file's folder,
// also one a configureTapes({ dir }) in the test's worker names, which the reporter never ran.
const perTest = (dir: string | undefined) => (names: string[]) => `const { tape, configureTapes } = require(${JSON.stringify(join(dist, 'jest.cjs'))});
${dir ? `configureTapes({ dir: ${JSON.stringify(dir)} });` : ''}
for (const name of ${JSON.stringify(names)}) {
  test(name, async () => {
    const r = await tape().fetch(process.env.UPSTREAM + '/v1/chat/completions', {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: name }] }),
    });
    expect(r.status).toBe(200);
  });
}
`;

describe('jest: a deleted test\'s tape', () => {
  for (const dir of [undefined, 'tapes']) {
    it(`is reported unused (no test opened it) after a full passing run, and the prune removes it alone (${dir ? `dir: '${dir}'` : 'the default folder'})`, { timeout: 120_000 }, async () => {
      await orphanScenario({
        project: join(suite.dir, `jest-orphan-${dir ?? 'default'}`),
        file: 'chat.test.js',
        text: perTest(dir),
        tapeOf: (name) => join(dir ?? '__tapes__', 'chat.test', `${name}.tape`),
        upstream: suite.upstream.url,
        run: jest,
      });
    });
  }
});
