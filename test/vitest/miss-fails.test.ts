// A test whose recording is missing never passes, in every runner: jest, mocha, node:test (through
// openTestTape) and vitest, each really running on a small project, fail a test whose code caught
// the miss, and print the command that records it. That command is then run as printed (a shell,
// npx, the project's own node_modules): it records, and the next CI run replays.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { upstreamSuite } from '../proxy/upstream-suite.ts';
import { runnerProject, sh } from './runner-project.ts';

const suite = upstreamSuite('miss-fails');

const project = (name: string, files: Record<string, string>): string => runnerProject(suite.dir, name, files);

const tapesUnder = (d: string): string[] =>
  existsSync(d) ? readdirSync(d, { recursive: true, withFileTypes: true }).filter((e) => e.isFile() && e.name.endsWith('.tape')).map((e) => e.name) : [];

// The code under test catches the miss and goes on: the false green this suite is about.
const swallowing = (tapeFetch: string) => `
    let text = '';
    try {
      const r = await ${tapeFetch}(process.env.UPSTREAM + '/v1/chat/completions', {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] }),
      });
      const body = await r.json();
      text = body.choices?.[0]?.message?.content ?? '';
    } catch {}
    void text;`;

/**
 * Runs the project's tests in CI with no recording: they must fail with the miss and print a
 * record command; runs that command against the fake provider (it records), then CI again (it
 * replays and passes). Returns the command.
 */
async function missThenRecord(dir: string, run: string, expectTapes: string[]): Promise<string> {
  const offline = { UPSTREAM: 'http://127.0.0.1:9', CI: 'true' };
  const first = await sh(run, dir, offline);
  expect(first.out).toContain('tapedeck miss');
  expect(first.code).not.toBe(0);
  const command = /[Rr]ecord it: (TAPEDECK_MODE=update [^\n]*)/.exec(first.out)?.[1];
  expect(command).toBeDefined();
  const recorded = await sh(command!, dir, { UPSTREAM: suite.upstream.url });
  expect(recorded.code, recorded.out).toBe(0);
  expect(tapesUnder(join(dir, '__tapes__')).sort()).toEqual(expectTapes);
  const again = await sh(run, dir, offline);
  expect(again.code, again.out).toBe(0);
  return command!;
}

describe('a test in which a request missed fails, and its record command records it', () => {
  it('jest', async () => {
    const dir = project('jest-project', {
      'chat.test.cjs': `const { tape } = require('llm-tapedeck/jest');
describe('chat', () => {
  test('says hello', async () => {${swallowing('tape().fetch')}
  });
});
`,
      'jest.config.cjs': `module.exports = { transform: {}, testMatch: ['**/*.test.cjs'], setupFilesAfterEnv: ['llm-tapedeck/jest'] };\n`,
    });
    // jest names a test by its suites and its own name in one (currentTestName).
    const command = await missThenRecord(dir, 'npx jest --no-cache', ['chat-says-hello.tape']);
    expect(command).toBe("TAPEDECK_MODE=update npx jest chat.test.cjs -t '^chat says hello$'");
  });

  it('jest: a test that failed with the miss itself is told once', async () => {
    const dir = project('jest-uncaught', {
      'chat.test.cjs': `const { tape } = require('llm-tapedeck/jest');
test('throws the miss', async () => {
  const r = await tape().fetch(process.env.UPSTREAM + '/v1/chat/completions', {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] }),
  });
  const body = await r.json();
  throw new Error(body.error.message);
});
`,
      'jest.config.cjs': `module.exports = { transform: {}, testMatch: ['**/*.test.cjs'], setupFilesAfterEnv: ['llm-tapedeck/jest'] };\n`,
    });
    const r = await sh('npx jest --no-cache', dir, { UPSTREAM: 'http://127.0.0.1:9', CI: 'true' });
    expect(r.code).not.toBe(0);
    expect(r.out).toContain('tapedeck miss: this test was never recorded');
    expect(r.out).not.toContain('had no recording in');
  });

  it('mocha (the command keeps --require llm-tapedeck/mocha); the rest of the suite still runs', async () => {
    const dir = project('mocha-project', {
      'chat.test.mjs': `import { tape } from 'llm-tapedeck/mocha';
describe('chat', () => {
  it('says hello', async function () {${swallowing('tape().fetch')}
  });
  it('needs no tape', () => {});
});
`,
    });
    const run = 'npx mocha --require llm-tapedeck/mocha chat.test.mjs';
    const r = await sh(run, dir, { UPSTREAM: 'http://127.0.0.1:9', CI: 'true' });
    expect(r.out).toMatch(/1 passing/);
    expect(r.out).toMatch(/1 failing/);
    const command = await missThenRecord(dir, run, ['says-hello.tape']);
    expect(command).toBe("TAPEDECK_MODE=update npx mocha --require llm-tapedeck/mocha chat.test.mjs --grep '^chat says hello$'");
  });

  it('node:test with openTestTape in beforeEach/afterEach', async () => {
    const dir = project('node-test-project', {
      'chat.test.mjs': `import { afterEach, beforeEach, describe, it } from 'node:test';
import { openTestTape, slug } from 'llm-tapedeck/testing';
let tape;
describe('chat', () => {
  beforeEach((t) => { tape = openTestTape({ tape: '__tapes__/' + slug(t.name) + '.tape', test: t.name, file: import.meta.filename }); });
  afterEach(() => tape.close());
  it('says hello', async () => {${swallowing('tape.fetch')}
  });
});
`,
    });
    const command = await missThenRecord(dir, 'node --test chat.test.mjs', ['says-hello.tape']);
    expect(command).toBe("TAPEDECK_MODE=update node --test --test-name-pattern='^says hello$' chat.test.mjs");
  });

  it('vitest', async () => {
    const dir = project('vitest-project', {
      'chat.test.mjs': `import { describe } from 'vitest';
import { test } from 'llm-tapedeck/vitest';
describe('chat', () => {
  test('says hello', async ({ tape }) => {${swallowing('tape.fetch')}
  });
});
`,
    });
    const command = await missThenRecord(dir, 'npx vitest run', ['says-hello.tape']);
    expect(command).toBe("TAPEDECK_MODE=update npx vitest run chat.test.mjs -t '^chat says hello$'");
  });
});

// The test starts a call and does not await it: the OpenAI SDK reaches the fetch a few ticks
// after create(), once the test's function has returned and often after the runner's after-each
// hook began to close the tape. Its miss fails the test in every runner (before, jest, mocha and
// node:test passed: jest and mocha read the misses before the call was answered, and the tape's
// close refused the call as made after the test).
const unawaited = (tapeFetch: string) => `
    const client = new OpenAI({ baseURL: process.env.UPSTREAM + '/v1', apiKey: 'sk-test', maxRetries: 0, fetch: ${tapeFetch} });
    client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] }).catch(() => {});`;

describe('a call the test did not await: its miss fails the test, and its record command records it', () => {
  it('jest', async () => {
    const dir = project('jest-unawaited', {
      'chat.test.cjs': `const OpenAI = require('openai');
const { tape } = require('llm-tapedeck/jest');
test('fires and forgets', async () => {${unawaited('tape().fetch')}
});
test('fires and forgets, not async', () => {${unawaited('tape().fetch')}
});
`,
      'jest.config.cjs': `module.exports = { transform: {}, testMatch: ['**/*.test.cjs'], setupFilesAfterEnv: ['llm-tapedeck/jest'] };\n`,
    });
    const r = await sh('npx jest --no-cache', dir, { UPSTREAM: 'http://127.0.0.1:9', CI: 'true' });
    expect(r.out).toMatch(/Tests: +2 failed/);
    await missThenRecord(dir, "npx jest --no-cache -t '^fires and forgets$'", ['fires-and-forgets.tape']);
  });

  it('mocha', async () => {
    const dir = project('mocha-unawaited', {
      'chat.test.mjs': `import OpenAI from 'openai';
import { tape } from 'llm-tapedeck/mocha';
describe('chat', () => {
  it('fires and forgets', async () => {${unawaited('tape().fetch')}
  });
  it('fires and forgets, not async', () => {${unawaited('tape().fetch')}
  });
  it('fires and forgets, done', (done) => {${unawaited('tape().fetch')}
    done();
  });
});
`,
    });
    const run = 'npx mocha --require llm-tapedeck/mocha chat.test.mjs';
    const r = await sh(run, dir, { UPSTREAM: 'http://127.0.0.1:9', CI: 'true' });
    expect(r.out).toMatch(/0 passing/);
    expect(r.out).toMatch(/3 failing/);
    await missThenRecord(dir, `${run} --grep '^chat fires and forgets$'`, ['fires-and-forgets.tape']);
  });

  it('node:test with openTestTape in beforeEach/afterEach', async () => {
    const dir = project('node-test-unawaited', {
      'chat.test.mjs': `import OpenAI from 'openai';
import { afterEach, beforeEach, it } from 'node:test';
import { openTestTape, slug } from 'llm-tapedeck/testing';
let tape;
beforeEach((t) => { tape = openTestTape({ tape: '__tapes__/' + slug(t.name) + '.tape', test: t.name, file: import.meta.filename }); });
afterEach(() => tape.close());
it('fires and forgets', async () => {${unawaited('tape.fetch')}
});
`,
    });
    await missThenRecord(dir, 'node --test chat.test.mjs', ['fires-and-forgets.tape']);
  });

  it('vitest', async () => {
    const dir = project('vitest-unawaited', {
      'chat.test.mjs': `import OpenAI from 'openai';
import { test } from 'llm-tapedeck/vitest';
test('fires and forgets', async ({ tape }) => {${unawaited('tape.fetch')}
});
`,
    });
    await missThenRecord(dir, 'npx vitest run', ['fires-and-forgets.tape']);
  });
});

// A test marked to fail (a known bug: vitest's test.fails, jest's test.failing) passes when it
// fails, whatever failed: a miss (thrown, or caught by the code and the assertion after it
// failing on the missing answer) made it pass, and the run was green with no recording behind
// it. It fails as an ordinary test does; once recorded, it is back to failing on its assertion
// alone, which its marking expects.
const knownBug = (tapeFetch: string, swallow: boolean) => `
    ${swallow ? swallowing(tapeFetch).replace('void text;', '') : `const r = await ${tapeFetch}(process.env.UPSTREAM + '/v1/chat/completions', {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] }),
    });
    const body = await r.json();
    if (r.status !== 200) throw new Error(body.error.message);
    const text = body.choices[0].message.content;`}
    if (text !== 'Bonjour') throw new Error('not French yet: ' + text);`;

describe('a test marked to fail still fails when a request missed', () => {
  it('vitest test.fails: the miss caught or thrown, then recorded', async () => {
    const dir = project('vitest-fails', {
      'chat.test.mjs': `import { test } from 'llm-tapedeck/vitest';
test.fails('answers in French (caught)', async ({ tape }) => {${knownBug('tape.fetch', true)}
});
test.fails('answers in French (thrown)', async ({ tape }) => {${knownBug('tape.fetch', false)}
});
`,
    });
    const r = await sh('npx vitest run', dir, { UPSTREAM: 'http://127.0.0.1:9', CI: 'true' });
    expect(r.code).not.toBe(0);
    expect(r.out).toMatch(/Tests +2 failed/);
    expect(r.out).toContain('tapedeck miss');
    await missThenRecord(dir, "npx vitest run -t '^answers in French \\(caught\\)$'", ['answers-in-French-caught.tape']);
  });

  it('jest test.failing: the miss caught or thrown', async () => {
    const dir = project('jest-failing', {
      'chat.test.cjs': `const { tape } = require('llm-tapedeck/jest');
test.failing('answers in French (caught)', async () => {${knownBug('tape().fetch', true)}
});
test.failing('answers in French (thrown)', async () => {${knownBug('tape().fetch', false)}
});
`,
      'jest.config.cjs': `module.exports = { transform: {}, testMatch: ['**/*.test.cjs'], setupFilesAfterEnv: ['llm-tapedeck/jest'] };\n`,
    });
    const r = await sh('npx jest --no-cache', dir, { UPSTREAM: 'http://127.0.0.1:9', CI: 'true' });
    expect(r.code).not.toBe(0);
    expect(r.out).toMatch(/Tests: +2 failed/);
    expect(r.out).toContain('tapedeck miss');
  });
});

describe('the prune command the jest and mocha summaries print', () => {
  it('mocha: run as printed, it drops the recording no test used', async () => {
    const dir = project('mocha-prune', {
      'chat.test.mjs': `import { tape } from 'llm-tapedeck/mocha';
import assert from 'node:assert';
it('asks', async () => {
  for (const word of process.env.WORDS.split(' ')) {
    const r = await tape().fetch(process.env.UPSTREAM + '/v1/chat/completions', {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: word }] }),
    });
    assert.strictEqual(r.status, 200);
  }
});
`,
    });
    const run = 'npx mocha --require llm-tapedeck/mocha chat.test.mjs';
    expect((await sh(run, dir, { UPSTREAM: suite.upstream.url, TAPEDECK_MODE: 'update', WORDS: 'one two' })).code).toBe(0);
    const offline = { UPSTREAM: 'http://127.0.0.1:9', CI: 'true', WORDS: 'one' };
    const stale = await sh(run, dir, offline);
    expect(stale.out).toContain('1 unused recording');
    const command = /Drop them after a full passing run: (.*)/.exec(stale.out)?.[1];
    expect(command).toBe('TAPEDECK_PRUNE=1 npx mocha --require llm-tapedeck/mocha');
    // The run's test file added: mocha's default spec is ./test, this project has none.
    const pruned = await sh(`${command} chat.test.mjs`, dir, offline);
    expect(pruned.out).toContain('tapedeck: pruned 1 unused recording(s).');
    const after = await sh(run, dir, offline);
    expect(after.code).toBe(0);
    expect(after.out).toContain('0 unused recordings');
  });
});
