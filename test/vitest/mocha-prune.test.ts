// The prune the mocha summary prints (TAPEDECK_PRUNE=1 npx mocha --require llm-tapedeck/mocha)
// drops only after a complete, passing run: a test that failed before its last call, one
// pending (it.skip) or a run filtered with --grep leaves recordings unused that the test still
// needs. Mocha really running (spawned), with --require.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'vitest';
import { upstreamSuite } from '../proxy/upstream-suite.ts';
import { outputOf } from './child.ts';
import { orphanScenario, pruneScenario } from './prune-scenario.ts';

const root = join(import.meta.dirname, '..', '..');
const dist = join(root, 'dist', 'testing');
const suite = upstreamSuite('mocha-prune');

// Two tests on one tape: a test of two calls (BREAK makes it fail between them, SKIP skips it)
// and another; so a test that does not run (or not to its end) leaves unused recordings behind.
const twoSteps = `import { tape, configureTapes } from ${JSON.stringify(join(dist, 'mocha.js'))};
import assert from 'node:assert';
configureTapes({ name: () => 'shared.tape' });
const ask = (q) => tape().fetch(process.env.UPSTREAM + '/v1/chat/completions', {
  method: 'POST', headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: q }] }),
});
(process.env.SKIP ? it.skip : it)('two steps', async () => {
  assert.strictEqual((await ask('step one')).status, 200);
  if (process.env.BREAK) throw new Error('a bug before step two');
  assert.strictEqual((await ask('step two')).status, 200);
});
(process.env.ONLY ? it.only : it)('another', async () => {
  assert.strictEqual((await ask('another')).status, 200);
});
`;

function mocha(project: string, env: Record<string, string>, args: string[] = [], file = 'two.test.mjs'): Promise<{ code: number | null; out: string }> {
  const { CI: _ci, TAPEDECK_MODE: _m, TAPEDECK_RUN_DIR: _r, TAPEDECK_PRUNE: _p, VITEST: _v, VITEST_WORKER_ID: _w, VITEST_POOL_ID: _pi, NODE_OPTIONS: _n, ...base } = process.env;
  const cmd = [join(root, 'node_modules', 'mocha', 'bin', 'mocha.js'), '--require', join(dist, 'mocha.js'), file, ...args];
  return outputOf(spawn(process.execPath, cmd, { cwd: project, env: { ...base, ...env } }));
}

describe('mocha: TAPEDECK_PRUNE=1', () => {
  // --parallel: the tests run in worker processes, and the main process that prints the summary
  // holds none of them to count.
  for (const parallel of [false, true]) {
    it(`does not prune after a failed run, a pending test, --grep or .only; prunes after a full passing run${parallel ? ' (--parallel)' : ''}`, { timeout: 120_000 }, async () => {
      await pruneScenario({
        project: join(suite.dir, parallel ? 'mocha-prune-parallel' : 'mocha-prune'),
        file: 'two.test.mjs',
        text: twoSteps,
        stepTwo: "assert.strictEqual((await ask('step two')).status, 200);",
        filter: ['--grep', '^another$'],
        filtered: '--grep',
        onlyReason: parallel ? undefined : 'tests were filtered with .only',
        upstream: suite.upstream.url,
        run: parallel ? (project, env, args = []) => mocha(project, env, ['--parallel', ...args]) : mocha,
      });
    });
  }
});

// A tape per test (the default naming, or under a `dir` of the project's): a deleted test's tape
// is found in its file's folder.
const perTest = (dir: string | undefined) => (names: string[]) => `import { tape, configureTapes } from ${JSON.stringify(join(dist, 'mocha.js'))};
import assert from 'node:assert';
${dir ? `configureTapes({ dir: ${JSON.stringify(dir)} });` : ''}
describe('chat', () => {
  for (const name of ${JSON.stringify(names)}) {
    it(name, async () => {
      const r = await tape().fetch(process.env.UPSTREAM + '/v1/chat/completions', {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: name }] }),
      });
      assert.strictEqual(r.status, 200);
    });
  }
});
`;

describe('mocha: a deleted test\'s tape', () => {
  for (const parallel of [false, true]) {
    for (const dir of [undefined, 'tapes']) {
      it(`is reported unused (no test opened it) after a full passing run, and the prune removes it alone (${dir ? `dir: '${dir}'` : 'the default folder'}${parallel ? ', --parallel' : ''})`, { timeout: 120_000 }, async () => {
        await orphanScenario({
          project: join(suite.dir, `mocha-orphan-${dir ?? 'default'}${parallel ? '-parallel' : ''}`),
          file: 'chat.test.mjs',
          text: perTest(dir),
          tapeOf: (name) => join(dir ?? '__tapes__', 'chat.test', 'chat', `${name}.tape`),
          upstream: suite.upstream.url,
          run: (project, env, args = []) => mocha(project, env, parallel ? ['--parallel', ...args] : args, 'chat.test.mjs'),
        });
      });
    }
  }
});
