// The prune the jest summary prints (TAPEDECK_PRUNE=1 npx jest) drops only after a complete,
// passing run: a test that failed before its last call, one skipped, or a run filtered with -t
// leaves recordings unused that the test still needs. Jest really running (spawned), with the
// one-line setup and the reporter.
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readTape } from '../../src/store/tape-file.ts';
import { upstreamSuite } from '../proxy/upstream-suite.ts';
import { outputOf } from './child.ts';

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
test('another', async () => {
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
  it('does not prune after a failed run, a skipped test or -t; prunes after a full passing run', { timeout: 120_000 }, async () => {
    const project = join(suite.dir, 'jest-prune');
    mkdirSync(project, { recursive: true });
    writeFileSync(join(project, 'two.test.js'), twoSteps);
    const tape = join(project, 'shared.tape');
    const rec = await jest(project, { UPSTREAM: suite.upstream.url, TAPEDECK_MODE: 'record' });
    expect(rec.code, rec.out).toBe(0);
    expect((await readTape(tape)).records).toHaveLength(3);

    const replay = { UPSTREAM: 'http://127.0.0.1:9', CI: 'true', TAPEDECK_PRUNE: '1' };
    // The test failed before step two: step two's recording is unused in this run, and needed.
    const failed = await jest(project, { ...replay, BREAK: '1' });
    expect(failed.code).toBe(1);
    expect(failed.out).toContain('tapedeck: not pruning: the run did not pass (1 test failed).');
    expect((await readTape(tape)).records).toHaveLength(3);

    // A skipped test's recordings are unused too.
    const skipped = await jest(project, { ...replay, SKIP: '1' });
    expect(skipped.code, skipped.out).toBe(0);
    expect(skipped.out).toContain('tapedeck: not pruning: 1 test did not run.');
    expect((await readTape(tape)).records).toHaveLength(3);

    // -t: the test filtered out leaves its recordings unused.
    const filtered = await jest(project, replay, ['-t', '^another$']);
    expect(filtered.code, filtered.out).toBe(0);
    expect(filtered.out).toContain('tapedeck: not pruning: tests were filtered with -t.');
    expect((await readTape(tape)).records).toHaveLength(3);

    // A full passing run uses both recordings: nothing to prune, and nothing was lost.
    const full = await jest(project, replay);
    expect(full.code, full.out).toBe(0);
    expect(full.out).toContain('tapedeck: 1 tape, 0 written, 0 recordings added, 3 replayed, 0 misses, 0 unused recordings');

    // Step two removed from the test: its recording is stale, and a full passing run drops it.
    writeFileSync(join(project, 'two.test.js'), twoSteps.replace("expect((await ask('step two')).status).toBe(200);", ''));
    const stale = await jest(project, replay);
    expect(stale.code, stale.out).toBe(0);
    expect(stale.out).toContain('tapedeck: pruned 1 unused recording(s).');
    expect((await readTape(tape)).records).toHaveLength(2);
  });
});
