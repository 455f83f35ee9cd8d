// A recorded jest test file moved (chat.test.js to chat/chat.test.js), with the one-line setup
// and the reporter, jest really running. Before, the miss said "this test was never recorded",
// and the tapes left at the old place were never listed as unused nor pruned. Now the miss says
// how to move them; a run of every test file lists the old folder's tapes as unused (their test
// file is gone) and the prune removes them; a run of some files leaves them.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { upstreamSuite } from '../proxy/upstream-suite.ts';
import { outputOf } from './child.ts';

const root = join(import.meta.dirname, '..', '..');
const dist = join(root, 'dist', 'testing');
const suite = upstreamSuite('jest-moved');

const testFile = (name: string) => `const { tape } = require(${JSON.stringify(join(dist, 'jest.cjs'))});
test(${JSON.stringify(name)}, async () => {
  const r = await tape().fetch(process.env.UPSTREAM + '/v1/chat/completions', {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: ${JSON.stringify(name)} }] }),
  });
  expect(r.status).toBe(200);
});
`;

function jest(project: string, env: Record<string, string>, args: string[] = []): Promise<{ code: number | null; out: string }> {
  const { CI: _ci, TAPEDECK_MODE: _m, TAPEDECK_RUN_DIR: _r, TAPEDECK_PRUNE: _p, TAPEDECK_RUN_ID: _id, VITEST: _v, VITEST_WORKER_ID: _w, VITEST_POOL_ID: _pi, NODE_OPTIONS: _n, ...base } = process.env;
  const config = JSON.stringify({ rootDir: project, transform: {}, setupFilesAfterEnv: [join(dist, 'jest.cjs')], reporters: ['default', join(dist, 'jest-reporter.cjs')] });
  const cmd = [join(root, 'node_modules', 'jest', 'bin', 'jest.js'), '--config', config, '--no-cache', ...args];
  return outputOf(spawn(process.execPath, cmd, { cwd: project, env: { ...base, UPSTREAM: suite.upstream.url, ...env } }));
}

describe('a moved test file (jest)', () => {
  it('its miss says how to move the recordings; a whole run lists and prunes the old folder', { timeout: 120_000 }, async () => {
    const project = join(suite.dir, 'moved');
    mkdirSync(join(project, 'chat'), { recursive: true });
    writeFileSync(join(project, 'chat.test.js'), testFile('says hello'));
    writeFileSync(join(project, 'other.test.js'), testFile('says goodbye'));
    const rec = await jest(project, { TAPEDECK_MODE: 'record' });
    expect(rec.code, rec.out).toBe(0);
    const old = join(project, '__tapes__', 'chat.test', 'says-hello.tape');
    expect(existsSync(old), rec.out).toBe(true);

    renameSync(join(project, 'chat.test.js'), join(project, 'chat', 'chat.test.js'));
    const ci = await jest(project, { CI: 'true' });
    expect(ci.code, ci.out).toBe(1);
    expect(ci.out).not.toContain('never recorded');
    expect(ci.out).toContain('mkdir -p chat/__tapes__ && mv __tapes__/chat.test chat/__tapes__/chat.test');

    // Recorded again at the new place: a pruning run of that file alone leaves the old folder.
    const again = await jest(project, { TAPEDECK_MODE: 'update', TAPEDECK_PRUNE: '1' }, ['chat/']);
    expect(again.code, again.out).toBe(0);
    expect(existsSync(old)).toBe(true);

    const whole = await jest(project, { CI: 'true', TAPEDECK_PRUNE: '1' });
    expect(whole.code, whole.out).toBe(0);
    expect(whole.out).toContain('__tapes__/chat.test/says-hello.tape: 1 unused (its test file is gone: moved, renamed or deleted), pruned');
    expect(existsSync(old)).toBe(false);
    expect(existsSync(join(project, 'chat', '__tapes__', 'chat.test', 'says-hello.tape'))).toBe(true);
    expect(existsSync(join(project, '__tapes__', 'other.test', 'says-goodbye.tape'))).toBe(true);
  });
});
