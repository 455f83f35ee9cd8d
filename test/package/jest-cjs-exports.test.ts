// What a jest test needs, from the one entry jest can load: jest's CommonJS runtime cannot
// require the library's ES module entries (llm-tapedeck/testing, /fetch, the root) on Node
// before 24.9, so llm-tapedeck/jest (bundled as CommonJS) also gives openTestTape (the tape of a
// test.concurrent test, which starts before any beforeEach hook), createFetch and TapedeckError.
// A project as a user has it (llm-tapedeck in its node_modules, the setup file by package name),
// jest really run (spawned) against the fake provider: recorded, then replayed with it gone.
import { spawn } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { upstreamSuite } from '../proxy/upstream-suite.ts';
import { outputOf } from '../vitest/child.ts';

const root = join(import.meta.dirname, '..', '..');
const suite = upstreamSuite('jest-cjs-exports');

const testFile = `const path = require('node:path');
const { openTestTape, createFetch, TapedeckError } = require('llm-tapedeck/jest');
const ask = (f, text) => f(process.env.UPSTREAM + '/v1/chat/completions', {
  method: 'POST', headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }] }),
});
test.concurrent.each(['one', 'two'])('concurrent %s', async (name) => {
  const t = openTestTape({ tape: path.join(__dirname, '__tapes__', 'concurrent-' + name + '.tape') });
  try {
    const res = await ask(t.fetch, name);
    expect(res.status).toBe(200);
    expect(JSON.stringify(await res.json())).toContain(name);
  } finally {
    await t.close();
  }
});
test('createFetch', async () => {
  const f = createFetch({ tape: path.join(__dirname, '__tapes__', 'fetch.tape') });
  try {
    expect((await ask(f, 'fetched')).status).toBe(200);
  } finally {
    await f.close();
  }
});
test('TapedeckError', () => {
  let err;
  try { createFetch({ tape: 'x.tape', upstream: 'http://example.com' }); } catch (e) { err = e; }
  expect(err).toBeInstanceOf(TapedeckError);
  expect(err.code).toBe('E_ARG');
});
`;

/** jest spawned on `project` with the setup file and reporter named as the docs name them. */
function jest(project: string, env: Record<string, string>) {
  const { CI: _ci, TAPEDECK_MODE: _m, TAPEDECK_RUN_DIR: _r, TAPEDECK_RUN_ID: _id, TAPEDECK_STORE: _s, VITEST: _v, VITEST_WORKER_ID: _w, VITEST_POOL_ID: _pi, NODE_OPTIONS: _n, ...base } = process.env;
  return outputOf(spawn(process.execPath, [join(root, 'node_modules', 'jest', 'bin', 'jest.js'), '--no-cache'], { cwd: project, env: { ...base, ...env } }));
}

it('llm-tapedeck/jest gives openTestTape, createFetch and TapedeckError to CommonJS tests under jest', { timeout: 120_000 }, async () => {
  const project = join(suite.dir, 'app');
  mkdirSync(join(project, 'node_modules'), { recursive: true });
  symlinkSync(root, join(project, 'node_modules', 'llm-tapedeck'));
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'app', private: true }));
  writeFileSync(join(project, 'jest.config.js'), "module.exports = { transform: {}, setupFilesAfterEnv: ['llm-tapedeck/jest'], reporters: ['default', 'llm-tapedeck/jest/reporter'] };\n");
  writeFileSync(join(project, 'app.test.js'), testFile);
  const rec = await jest(project, { UPSTREAM: suite.upstream.url, TAPEDECK_MODE: 'record' });
  expect(rec.code, rec.out).toBe(0);
  expect(rec.out).toMatch(/Tests:\s+4 passed, 4 total/);
  const replay = await jest(project, { UPSTREAM: 'http://127.0.0.1:9', CI: '1' });
  expect(replay.code, replay.out).toBe(0);
  expect(replay.out).toMatch(/Tests:\s+4 passed, 4 total/);
});
