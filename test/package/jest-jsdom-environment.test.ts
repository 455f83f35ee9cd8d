// llm-tapedeck/jest in a jest project whose tests run under a DOM environment
// (testEnvironment: 'jsdom', as React apps' tests do). jest gives the test files, and the setup
// file, the environment's object for their global: jsdom's window has no TextEncoder,
// TextDecoder, Request, Response, fetch, ReadableStream, setImmediate or structuredClone, and its
// timers return numbers. The setup file (the CommonJS bundle) failed every test file of such a
// project as it loaded ("TextEncoder is not defined"); it must take what it uses from Node, so
// that a test file that uses no tape runs as before and a tape's fetch records and replays.
//
// The environment here is jest's own node environment made into such a window (the globals
// jest-environment-jsdom 30's window lacks removed, its timers returning numbers):
// jest-environment-jsdom itself is not a dependency, as its @types/jsdom would put the DOM lib
// into the library's own type-check (vitest's types import jsdom's). jest really runs (spawned)
// against the fake provider.
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { upstreamSuite } from '../proxy/upstream-suite.ts';
import { outputOf } from '../vitest/child.ts';

const root = join(import.meta.dirname, '..', '..');
const dist = join(root, 'dist', 'testing');
const suite = upstreamSuite('jest-jsdom-environment');

// The window, as jest gives it to a test file and its setup file.
const windowEnvironment = `const { TestEnvironment } = require(${JSON.stringify(join(root, 'node_modules', 'jest-environment-node'))});
// What jest-environment-jsdom's window lacks of Node's globals.
const MISSING = ['TextEncoder', 'TextDecoder', 'Request', 'Response', 'fetch', 'ReadableStream', 'WritableStream', 'TransformStream',
  'TextDecoderStream', 'TextEncoderStream', 'CompressionStream', 'DecompressionStream', 'setImmediate', 'clearImmediate',
  'structuredClone', 'MessageChannel', 'BroadcastChannel'];
module.exports = class WindowEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    const g = this.global;
    for (const name of MISSING) delete g[name];
    // A window's timers return numbers.
    const setTimeout = g.setTimeout, setInterval = g.setInterval;
    g.setTimeout = (...a) => Number(setTimeout(...a));
    g.setInterval = (...a) => Number(setInterval(...a));
  }
};
`;

// A test that never touches a tape: it must be unaffected by the setup file.
const plainTest = `test('runs in the window', async () => {
  expect(typeof TextEncoder).toBe('undefined'); // the setup file added nothing to the window
  expect(typeof setImmediate).toBe('undefined');
  await new Promise((r) => setTimeout(r, 1));
});
`;

const tapeTest = `const { tape } = require(${JSON.stringify(join(dist, 'jest.cjs'))});
const ask = (body) => tape().fetch(process.env.UPSTREAM + '/v1/chat/completions', {
  method: 'POST', headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello from jsdom' }], ...body }),
});
test('answers under jsdom', async () => {
  const res = await ask({});
  expect(res.status).toBe(200);
  expect(JSON.stringify(await res.json())).toContain('hello from jsdom');
});
test('streams under jsdom', async () => {
  const res = await ask({ stream: true });
  expect(res.status).toBe(200);
  const text = await res.text();
  expect(text).toContain('data: [DONE]');
});
`;

/** jest spawned on `project` with the setup file and reporter of the CommonJS bundles, in the window. */
function jest(project: string, env: Record<string, string>) {
  const { CI: _ci, TAPEDECK_MODE: _m, TAPEDECK_RUN_DIR: _r, TAPEDECK_RUN_ID: _id, TAPEDECK_STORE: _s, VITEST: _v, VITEST_WORKER_ID: _w, VITEST_POOL_ID: _pi, NODE_OPTIONS: _n, ...base } = process.env;
  const config = JSON.stringify({
    rootDir: project,
    transform: {},
    testEnvironment: join(project, 'window-environment.js'),
    setupFilesAfterEnv: [join(dist, 'jest.cjs')],
    reporters: ['default', join(dist, 'jest-reporter.cjs')],
  });
  return outputOf(spawn(process.execPath, [join(root, 'node_modules', 'jest', 'bin', 'jest.js'), '--config', config, '--no-cache'], { cwd: project, env: { ...base, ...env } }));
}

it('under a DOM window environment, a test without a tape runs and a tape records and replays', { timeout: 120_000 }, async () => {
  const project = join(suite.dir, 'app');
  mkdirSync(project, { recursive: true });
  writeFileSync(join(project, 'window-environment.js'), windowEnvironment);
  writeFileSync(join(project, 'plain.test.js'), plainTest);
  writeFileSync(join(project, 'chat.test.js'), tapeTest);
  const rec = await jest(project, { UPSTREAM: suite.upstream.url, TAPEDECK_MODE: 'record' });
  expect(rec.out).not.toMatch(/is not defined|is not a function/);
  expect(rec.code, rec.out).toBe(0);
  expect(rec.out).toMatch(/Tests:\s+3 passed, 3 total/);
  expect(rec.out).toMatch(/2 recordings added/);
  const replay = await jest(project, { UPSTREAM: 'http://127.0.0.1:9', CI: '1' });
  expect(replay.code, replay.out).toBe(0);
  expect(replay.out).toMatch(/Tests:\s+3 passed, 3 total/);
  expect(replay.out).toMatch(/2 replayed, 0 misses/);
});
