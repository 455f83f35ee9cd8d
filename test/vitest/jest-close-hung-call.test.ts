// jest: a test that times out while its call still waits for an upstream that never answers.
// Before, tapedeck's own afterEach waited for the upstream without bound and failed with jest's
// "Exceeded timeout of 5000 ms for a hook" (a hook the user never wrote), the summary left the
// tape out, and the process ran on until the upstream answered. Now the close gives the call the
// shutdown timeout, aborts it unrecorded, and the hook has room for that: the test fails for its
// own timeout only, and the run ends. jest really runs (spawned), the upstream here holds every
// request it gets.
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hungUpstream } from '../hung-upstream.ts';
import { upstreamSuite } from '../proxy/upstream-suite.ts';
import { outputOf } from './child.ts';

const root = join(import.meta.dirname, '..', '..');
const dist = join(root, 'dist', 'testing');
const suite = upstreamSuite('jest-close-hung-call');

const upstream = hungUpstream();

const testFile = `const { tape, configureTapes } = require(${JSON.stringify(join(dist, 'jest.cjs'))});
configureTapes({ shutdownTimeoutMs: 3000 });
test('times out', async () => {
  await tape().fetch(process.env.UPSTREAM + '/v1/chat/completions', {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'slow' }] }),
  });
}, 500);
`;

describe('jest: a test that timed out with a call the upstream never answers', () => {
  it('fails for its own timeout; the tape closes within its hook, and the run ends', { timeout: 120_000 }, async () => {
    const project = join(suite.dir, 'hung');
    mkdirSync(project, { recursive: true });
    writeFileSync(join(project, 'slow.test.js'), testFile);
    const { CI: _ci, TAPEDECK_MODE: _m, TAPEDECK_RUN_DIR: _r, TAPEDECK_RUN_ID: _id, VITEST: _v, VITEST_WORKER_ID: _w, VITEST_POOL_ID: _pi, NODE_OPTIONS: _n, ...base } = process.env;
    const config = JSON.stringify({ rootDir: project, transform: {}, setupFilesAfterEnv: [join(dist, 'jest.cjs')], reporters: ['default', join(dist, 'jest-reporter.cjs')] });
    const r = await outputOf(spawn(process.execPath, [join(root, 'node_modules', 'jest', 'bin', 'jest.js'), '--config', config, '--no-cache'], { cwd: project, env: { ...base, UPSTREAM: upstream.url, TAPEDECK_MODE: 'record' } }));
    expect(r.code, r.out).toBe(1);
    expect(r.out).toContain('Exceeded timeout of 500 ms for a test');
    expect(r.out).not.toContain('for a hook');
  });
});
