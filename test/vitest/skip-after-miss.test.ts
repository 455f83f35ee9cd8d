// "Skip when the API is unavailable": `try { await ask() } catch { skip() }`. In CI with no
// recording the call misses, the catch skips the test, and the runners report a skipped test
// whatever failed in it after: vitest showed `1 skipped`, mocha `1 pending`, node:test `# SKIP`,
// the summary said `1 miss`, and the run exited 0 with no recording behind the test. Now the
// test fails with its miss and record command (vitest's context skip(), mocha's this.skip() in
// a sync or promise test), or, where the runner lets nothing fail a test it ended as skipped
// (mocha's this.skip() in a done-style test, node:test's t.skip(), whose afterEach hooks do not
// run), the run fails, exit code 1, with a line naming the test, its miss and its record
// command. A test that skips with no miss stays skipped, and once recorded the test passes.
// The runners really run (spawned), as a user's project has them.
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { upstreamSuite } from '../proxy/upstream-suite.ts';
import { runnerProject, sh } from './runner-project.ts';

const suite = upstreamSuite('skip-after-miss');

/** The call, its error caught and the test skipped; SKIP_ANYWAY skips it with no call at all. */
const asks = (fetchOf: string, skip: string) => `
    if (process.env.SKIP_ANYWAY) {
      ${skip};
      return;
    }
    let text;
    try {
      const r = await ${fetchOf}(process.env.UPSTREAM + '/v1/chat/completions', {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] }),
      });
      if (r.status !== 200) throw new Error('status ' + r.status);
      text = (await r.json()).choices[0].message.content;
    } catch {
      ${skip};
      return;
    }
    if (!text) throw new Error('no answer');`;

const ci = { UPSTREAM: 'http://127.0.0.1:9', CI: 'true' };

/**
 * Runs `run` in CI with no recording (it must fail, saying `expected`), then with SKIP_ANYWAY (a
 * skip with no miss passes), records with `record` and runs CI again (it passes).
 */
async function failsThenRecords(dir: string, run: string, record: string, expected: string[]): Promise<string> {
  const first = await sh(run, dir, ci);
  expect(first.code, first.out).not.toBe(0);
  for (const e of expected) expect(first.out).toContain(e);
  const skipped = await sh(run, dir, { ...ci, SKIP_ANYWAY: '1' });
  expect(skipped.code, skipped.out).toBe(0);
  const recorded = await sh(record, dir, { UPSTREAM: suite.upstream.url });
  expect(recorded.code, recorded.out).toBe(0);
  const again = await sh(run, dir, ci);
  expect(again.code, again.out).toBe(0);
  expect(again.out).not.toContain('tapedeck miss');
  return first.out;
}

describe('a test that skips itself after a miss does not pass the run', () => {
  it("vitest: the context's skip() in the catch: the test fails with the miss", { timeout: 120_000 }, async () => {
    const dir = runnerProject(suite.dir, 'vitest', {
      'vitest.config.mjs': `import { defineConfig } from 'vitest/config';\nimport { tapedeck } from 'llm-tapedeck/vitest/plugin';\nexport default defineConfig({ plugins: [tapedeck()], test: { include: ['*.test.mjs'] } });\n`,
      'skip.test.mjs': `import { describe, test } from 'llm-tapedeck/vitest';
describe('chat', () => {
  test('skips when the API is unavailable', async ({ tape, skip }) => {${asks('tape.fetch', "skip('LLM API unavailable')")}
  });
  test.fails('a known bug, skipped when the API is unavailable', async ({ tape, skip }) => {${asks('tape.fetch', "skip('LLM API unavailable')")}
    throw new Error('the known bug');
  });
});
`,
    });
    const out = await failsThenRecords(dir, 'npx vitest run', 'TAPEDECK_MODE=update npx vitest run', [
      'tapedeck miss: 1 request had no recording',
      'The test skipped itself after the miss: a skip does not hide a miss',
      "Record it: TAPEDECK_MODE=update npx vitest run skip.test.mjs -t '^chat skips when the API is unavailable$'",
    ]);
    expect(out).toMatch(/Tests +2 failed/);
    expect(out).not.toMatch(/skipped\)/);
  });

  // Failed before: a tape that could not be read (a bad merge, a Git LFS pointer left in place)
  // failed the request with its own error, not a miss; the test caught it and skipped, and the
  // run passed (1 skipped), its summary saying the test made no request.
  it('vitest: skip() after an error of the tape itself (damaged): the test fails with that error', { timeout: 120_000 }, async () => {
    const dir = runnerProject(suite.dir, 'vitest-damaged', {
      'vitest.config.mjs': `import { defineConfig } from 'vitest/config';\nimport { tapedeck } from 'llm-tapedeck/vitest/plugin';\nexport default defineConfig({ plugins: [tapedeck()], test: { include: ['*.test.mjs'] } });\n`,
      'skip.test.mjs': `import { describe, test } from 'llm-tapedeck/vitest';
describe('chat', () => {
  test('skips when the API is unavailable', async ({ tape, skip }) => {${asks('tape.fetch', "skip('LLM API unavailable')")}
  });
});
`,
    });
    const recorded = await sh('TAPEDECK_MODE=update npx vitest run', dir, { UPSTREAM: suite.upstream.url });
    expect(recorded.code, recorded.out).toBe(0);
    const tapes = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.tape') && !f.startsWith('node_modules'));
    expect(tapes).toHaveLength(1);
    writeFileSync(join(dir, tapes[0]!), 'version https://git-lfs.github.com/spec/v1\noid sha256:0000\nsize 123\n');
    const run = await sh('npx vitest run', dir, ci);
    expect(run.code, run.out).not.toBe(0);
    expect(run.out).toContain('The test skipped itself after this error of its tape');
    expect(run.out).toMatch(/Tests +1 failed/);
    expect(run.out).not.toContain('made no request');
    expect(run.out).toMatch(/1 request failed with an error of the tape or its store/);
  });

  it('mocha: this.skip() in the catch of an async or sync test fails it; in a done-style test, the run fails', { timeout: 120_000 }, async () => {
    const dir = runnerProject(suite.dir, 'mocha', {
      'chat.test.mjs': `import { tape } from 'llm-tapedeck/mocha';
describe('chat', () => {
  it('skips when unavailable', async function () {${asks('tape().fetch', 'this.skip()')}
  });
  it('skips when unavailable, not async', function () {
    if (process.env.SKIP_ANYWAY) this.skip();
    // A call not awaited, then a skip: its miss comes after the test's function returned.
    const r = tape().fetch(process.env.UPSTREAM + '/v1/chat/completions', {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'sync' }] }),
    }).catch(() => {});
    if (process.env.CI) this.skip();
    return r;
  });
});
`,
    });
    const run = 'npx mocha --require llm-tapedeck/mocha chat.test.mjs';
    const out = await failsThenRecords(dir, run, `TAPEDECK_MODE=update ${run}`, [
      '0 passing',
      '2 failing',
      'The test skipped itself after the miss: a skip does not hide a miss',
      "Record it: TAPEDECK_MODE=update npx mocha --require llm-tapedeck/mocha chat.test.mjs --grep '^chat skips when unavailable$'",
    ]);
    expect(out).not.toMatch(/\d+ pending/);

    // done-style: this.skip() ends the test at once (mocha calls done itself), pending.
    const done = runnerProject(suite.dir, 'mocha-done', {
      'chat.test.mjs': `import { tape } from 'llm-tapedeck/mocha';
describe('chat', () => {
  it('skips when unavailable, done', function (done) {
    if (process.env.SKIP_ANYWAY) return this.skip();
    tape().fetch(process.env.UPSTREAM + '/v1/chat/completions', {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'done' }] }),
    }).then((r) => { if (r.status !== 200) throw new Error('status ' + r.status); done(); }).catch(() => { try { this.skip(); } catch {} });
  });
});
`,
    });
    const doneOut = await failsThenRecords(done, run, `TAPEDECK_MODE=update ${run}`, [
      '1 pending',
      'tapedeck: the run fails: 1 test skipped itself after a request had no recording (a skip does not hide a miss):',
      '  chat skips when unavailable, done: POST /v1/chat/completions: the tape does not exist yet',
      "record it: TAPEDECK_MODE=update npx mocha --require llm-tapedeck/mocha chat.test.mjs --grep '^chat skips when unavailable, done$'",
    ]);
    expect(doneOut).toContain('1 miss');
  });

  it("node:test: t.skip() in the catch (no afterEach runs, the tape is never closed): the file fails, with the miss and its record command", { timeout: 120_000 }, async () => {
    const dir = runnerProject(suite.dir, 'node-test', {
      'chat.test.mjs': `import { afterEach, beforeEach, it } from 'node:test';
import { openTestTape, slug } from 'llm-tapedeck/testing';
let tape;
beforeEach((t) => { tape = openTestTape({ tape: '__tapes__/' + slug(t.name) + '.tape', test: t.name, file: import.meta.filename }); });
afterEach(() => tape.close());
it('skips when unavailable', async (t) => {${asks('tape.fetch', "t.skip('LLM API unavailable')")}
});
`,
    });
    await failsThenRecords(dir, 'node --test chat.test.mjs', 'TAPEDECK_MODE=update node --test chat.test.mjs', [
      '# skipped 1',
      'tapedeck: the run fails: the tape of test "skips when unavailable" was never closed, and a request of it had no recording',
      "Record it: TAPEDECK_MODE=update node --test --test-name-pattern='^skips when unavailable$' chat.test.mjs",
    ]);
  });

  it('jest: no API skips a test once it runs (so a caught miss fails it as any other test)', { timeout: 120_000 }, async () => {
    // jest-circus marks a test skipped only before it runs (test.skip, -t, .only): a test that
    // catches the miss and returns fails with it. Were jest to gain a runtime skip, this says so.
    const dir = runnerProject(suite.dir, 'jest', {
      'jest.config.cjs': `module.exports = { transform: {}, testMatch: ['**/*.test.cjs'], setupFilesAfterEnv: ['llm-tapedeck/jest'] };\n`,
      'chat.test.cjs': `const { tape } = require('llm-tapedeck/jest');
test('skips when unavailable', async () => {
  expect(typeof globalThis.pending).toBe('undefined');${asks('tape().fetch', 'void 0')}
});
`,
    });
    const r = await sh('npx jest --no-cache', dir, ci);
    expect(r.code, r.out).not.toBe(0);
    expect(r.out).toMatch(/Tests: +1 failed/);
    expect(r.out).toContain('tapedeck miss: 1 request had no recording');
  });
});
