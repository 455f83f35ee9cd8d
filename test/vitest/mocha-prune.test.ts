// The prune the mocha summary prints (TAPEDECK_PRUNE=1 npx mocha --require llm-tapedeck/mocha)
// drops only after a complete, passing run: a test that failed before its last call, one
// pending (it.skip) or a run filtered with --grep leaves recordings unused that the test still
// needs. Mocha really running (spawned), with --require.
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readTape } from '../../src/store/tape-file.ts';
import { upstreamSuite } from '../proxy/upstream-suite.ts';
import { outputOf } from './child.ts';

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
it('another', async () => {
  assert.strictEqual((await ask('another')).status, 200);
});
`;

function mocha(project: string, env: Record<string, string>, args: string[] = []): Promise<{ code: number | null; out: string }> {
  const { CI: _ci, TAPEDECK_MODE: _m, TAPEDECK_RUN_DIR: _r, TAPEDECK_PRUNE: _p, VITEST: _v, VITEST_WORKER_ID: _w, VITEST_POOL_ID: _pi, NODE_OPTIONS: _n, ...base } = process.env;
  const cmd = [join(root, 'node_modules', 'mocha', 'bin', 'mocha.js'), '--require', join(dist, 'mocha.js'), 'two.test.mjs', ...args];
  return outputOf(spawn(process.execPath, cmd, { cwd: project, env: { ...base, ...env } }));
}

describe('mocha: TAPEDECK_PRUNE=1', () => {
  it('does not prune after a failed run, a pending test or --grep; prunes after a full passing run', { timeout: 120_000 }, async () => {
    const project = join(suite.dir, 'mocha-prune');
    mkdirSync(project, { recursive: true });
    writeFileSync(join(project, 'two.test.mjs'), twoSteps);
    const tape = join(project, 'shared.tape');
    const rec = await mocha(project, { UPSTREAM: suite.upstream.url, TAPEDECK_MODE: 'record' });
    expect(rec.code, rec.out).toBe(0);
    expect((await readTape(tape)).records).toHaveLength(3);

    const replay = { UPSTREAM: 'http://127.0.0.1:9', CI: 'true', TAPEDECK_PRUNE: '1' };
    // The test failed before step two: step two's recording is unused in this run, and needed.
    const failed = await mocha(project, { ...replay, BREAK: '1' });
    expect(failed.code).toBe(1);
    expect(failed.out).toContain('tapedeck: not pruning: the run did not pass (1 test failed).');
    expect((await readTape(tape)).records).toHaveLength(3);

    const skipped = await mocha(project, { ...replay, SKIP: '1' });
    expect(skipped.code, skipped.out).toBe(0);
    expect(skipped.out).toContain('tapedeck: not pruning: 1 test did not run.');
    expect((await readTape(tape)).records).toHaveLength(3);

    const filtered = await mocha(project, replay, ['--grep', '^another$']);
    expect(filtered.code, filtered.out).toBe(0);
    expect(filtered.out).toContain('tapedeck: not pruning: tests were filtered with --grep.');
    expect((await readTape(tape)).records).toHaveLength(3);

    const full = await mocha(project, replay);
    expect(full.code, full.out).toBe(0);
    expect(full.out).toContain('tapedeck: 1 tape, 0 written, 0 recordings added, 3 replayed, 0 misses, 0 unused recordings');

    // Step two removed from the test: its recording is stale, and a full passing run drops it.
    writeFileSync(join(project, 'two.test.mjs'), twoSteps.replace("assert.strictEqual((await ask('step two')).status, 200);", ''));
    const stale = await mocha(project, replay);
    expect(stale.code, stale.out).toBe(0);
    expect(stale.out).toContain('tapedeck: pruned 1 unused recording(s).');
    expect((await readTape(tape)).records).toHaveLength(2);
  });
});
