// llm-tapedeck/jest with jest's `injectGlobals: false` (tests take test, expect and the hooks
// from @jest/globals). The setup file registered its hooks on the global beforeEach/afterEach,
// which are not there then: it added nothing, without a word, and tape() said to add the setup
// file that was already there. It takes the hooks from @jest/globals, which jest's require gives
// a setup file. jest really runs (spawned) against the fake provider: recorded, then replayed
// with it gone.
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { upstreamSuite } from '../proxy/upstream-suite.ts';
import { outputOf } from '../vitest/child.ts';

const root = join(import.meta.dirname, '..', '..');
const dist = join(root, 'dist', 'testing');
const suite = upstreamSuite('jest-inject-globals-false');

const testFile = `const { test, expect } = require('@jest/globals');
const { tape } = require(${JSON.stringify(join(dist, 'jest.cjs'))});
test('asks without injected globals', async () => {
  expect(typeof globalThis.beforeEach).toBe('undefined');
  const res = await tape().fetch(process.env.UPSTREAM + '/v1/chat/completions', {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'no globals' }] }),
  });
  expect(res.status).toBe(200);
});
`;

/** jest spawned on `project` with injectGlobals: false and the CommonJS setup file and reporter. */
function jest(project: string, env: Record<string, string>) {
  const { CI: _ci, TAPEDECK_MODE: _m, TAPEDECK_RUN_DIR: _r, TAPEDECK_RUN_ID: _id, TAPEDECK_STORE: _s, VITEST: _v, VITEST_WORKER_ID: _w, VITEST_POOL_ID: _pi, NODE_OPTIONS: _n, ...base } = process.env;
  const config = JSON.stringify({ rootDir: project, transform: {}, injectGlobals: false, setupFilesAfterEnv: [join(dist, 'jest.cjs')], reporters: ['default', join(dist, 'jest-reporter.cjs')] });
  return outputOf(spawn(process.execPath, [join(root, 'node_modules', 'jest', 'bin', 'jest.js'), '--config', config, '--no-cache'], { cwd: project, env: { ...base, ...env } }));
}

it('with injectGlobals: false the setup file gives each test its tape', { timeout: 120_000 }, async () => {
  const project = join(suite.dir, 'app');
  mkdirSync(project, { recursive: true });
  writeFileSync(join(project, 'ask.test.js'), testFile);
  const rec = await jest(project, { UPSTREAM: suite.upstream.url, TAPEDECK_MODE: 'record' });
  expect(rec.code, rec.out).toBe(0);
  expect(rec.out).toMatch(/1 written, 1 recording added/);
  const replay = await jest(project, { UPSTREAM: 'http://127.0.0.1:9', CI: '1' });
  expect(replay.code, replay.out).toBe(0);
  expect(replay.out).toMatch(/1 replayed, 0 misses/);
});
