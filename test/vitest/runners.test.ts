// Jest and mocha, really running: the one-line setup (jest's setup file and reporter, mocha's
// --require) gives each test a tape named after it, records in update mode, replays with the
// provider gone, and ends the run with the same summary as the vitest plugin.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { upstreamSuite } from '../proxy/upstream-suite.ts';
import { outputOf } from './child.ts';

const root = join(import.meta.dirname, '..', '..');
const dist = join(root, 'dist', 'testing');
const suite = upstreamSuite('runners');
const { dir } = suite;

const call = `await tape().fetch(process.env.UPSTREAM + '/v1/chat/completions', {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello from ' + RUNNER }] }),
    })`;

// Asynchronous: the fake provider answers from this process.
function run(cmd: string[], cwd: string, env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  const { CI: _ci, TAPEDECK_MODE: _m, TAPEDECK_RUN_DIR: _r, VITEST: _v, VITEST_WORKER_ID: _w, VITEST_POOL_ID: _p, NODE_OPTIONS: _n, ...base } = process.env;
  return outputOf(spawn(process.execPath, cmd, { cwd, env: { ...base, ...env } }));
}

const tapesUnder = (d: string): string[] =>
  existsSync(d) ? readdirSync(d, { recursive: true, withFileTypes: true }).filter((e) => e.isFile() && e.name.endsWith('.tape')).map((e) => e.name) : [];

describe('jest', () => {
  it('setupFilesAfterEnv + reporter: records, replays, prints the run summary', async () => {
    const project = join(dir, 'jest-project');
    mkdirSync(project, { recursive: true });
    writeFileSync(
      join(project, 'chat.test.js'),
      `const { tape } = require(${JSON.stringify(join(dist, 'jest.cjs'))});
const RUNNER = 'jest';
test('says hello', async () => {
  const r = ${call};
  expect(r.status).toBe(200);
  const body = await r.json();
  expect(body.choices[0].message.content).toContain('hello from jest');
});
`,
    );
    // A second file: jest then runs its worker processes, which report into the reporter's run directory.
    writeFileSync(join(project, 'other.test.js'), readFileSync(join(project, 'chat.test.js'), 'utf8').replace("'says hello'", "'says hello again'"));
    const config = JSON.stringify({
      rootDir: project,
      transform: {},
      setupFilesAfterEnv: [join(dist, 'jest.cjs')],
      reporters: ['default', join(dist, 'jest-reporter.cjs')],
    });
    const jest = [join(root, 'node_modules', 'jest', 'bin', 'jest.js'), '--config', config, '--maxWorkers=2', '--no-cache'];
    const first = await run(jest, project, { UPSTREAM: suite.upstream.url, TAPEDECK_MODE: 'update' });
    expect(first.out).toContain('tapedeck: 2 tapes, 2 written, 2 recordings added, 0 replayed, 0 misses, 0 unused recordings');
    expect(first.code).toBe(0);
    expect(tapesUnder(join(project, '__tapes__')).sort()).toEqual(['says-hello-again.tape', 'says-hello.tape']);

    const calls = suite.upstream.calls.length;
    const second = await run(jest, project, { UPSTREAM: 'http://127.0.0.1:9', CI: 'true' });
    expect(second.out).toContain('tapedeck: 2 tapes, 0 written, 0 recordings added, 2 replayed, 0 misses');
    expect(second.code).toBe(0);
    expect(suite.upstream.calls.length).toBe(calls);
  });
});

describe('jest test.concurrent', () => {
  it('its tests start before the beforeEach hooks: tape() fails the test saying to use test() or openTestTape()', async () => {
    const project = join(dir, 'jest-concurrent');
    mkdirSync(project, { recursive: true });
    writeFileSync(
      join(project, 'conc.test.js'),
      `const { tape } = require(${JSON.stringify(join(dist, 'jest.cjs'))});
test.concurrent('asks at once', async () => {
  tape();
});
`,
    );
    const config = JSON.stringify({ rootDir: project, transform: {}, setupFilesAfterEnv: [join(dist, 'jest.cjs')] });
    const r = await run([join(root, 'node_modules', 'jest', 'bin', 'jest.js'), '--config', config, '--no-cache'], project, { TAPEDECK_MODE: 'replay' });
    expect(r.code).toBe(1);
    expect(r.out).toContain('No tapedeck tape is open');
    expect(r.out).toMatch(/test\(\) rather than test\.concurrent/);
    expect(r.out).toContain('openTestTape()');
  });
});

describe('mocha', () => {
  it('--require llm-tapedeck/mocha: records, replays, misses name the mocha command, and the summary', async () => {
    const project = join(dir, 'mocha-project');
    mkdirSync(project, { recursive: true });
    writeFileSync(
      join(project, 'chat.test.mjs'),
      `import { tape } from ${JSON.stringify(join(dist, 'mocha.js'))};
import assert from 'node:assert';
const RUNNER = 'mocha';
describe('chat', () => {
  it('says hello', async function () {
    assert.strictEqual(this.tape, tape());
    const r = ${call};
    const body = await r.json();
    assert.match(body.choices?.[0]?.message?.content ?? body.error.message, new RegExp(process.env.EXPECT));
  });
});
`,
    );
    const mocha = [join(root, 'node_modules', 'mocha', 'bin', 'mocha.js'), '--require', join(dist, 'mocha.js'), 'chat.test.mjs'];
    const first = await run(mocha, project, { UPSTREAM: suite.upstream.url, TAPEDECK_MODE: 'update', EXPECT: 'hello from mocha' });
    expect(first.out).toContain('tapedeck: 1 tape, 1 written, 1 recording added, 0 replayed, 0 misses, 0 unused recordings');
    expect(first.code).toBe(0);
    expect(tapesUnder(join(project, '__tapes__'))).toEqual(['says-hello.tape']);

    const second = await run(mocha, project, { UPSTREAM: 'http://127.0.0.1:9', CI: 'true', EXPECT: 'hello from mocha' });
    expect(second.out).toContain('1 replayed, 0 misses');
    expect(second.code).toBe(0);

    // A changed request in replay: a miss whose record command is mocha's, in the summary too.
    writeFileSync(join(project, 'chat.test.mjs'), readFileSync(join(project, 'chat.test.mjs'), 'utf8').replace("'hello from ' + RUNNER", "'changed ' + RUNNER"));
    const third = await run(mocha, project, { UPSTREAM: 'http://127.0.0.1:9', CI: 'true', EXPECT: 'tapedeck' });
    expect(third.out).toContain('1 miss');
    // The test read the miss as an answer and would pass: the miss fails it.
    expect(third.code).not.toBe(0);
    expect(third.out).toContain("TAPEDECK_MODE=update npx mocha --require llm-tapedeck/mocha chat.test.mjs --grep '^chat says hello$'");
  });
});
