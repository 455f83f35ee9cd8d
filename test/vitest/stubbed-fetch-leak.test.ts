// A real vitest run of a small project where one test stubs the global fetch with a canned
// OpenAI answer (vi.stubGlobal, not unstubbed: vitest's default) and the next test records
// through tape.fetch with the OpenAI SDK. The tape's live calls went to the stub: its canned
// answer was recorded as the provider's, over the committed recording, and a later CI run
// replayed it green. They now go to Node's own fetch, taken when tapedeck was imported. A setup
// file that stubs fetch before tapedeck is imported gets recording refused (E_FETCH_STUBBED)
// with the fix, instead of the stub recorded.
import { join } from 'node:path';
import { mkdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { upstreamSuite } from '../proxy/upstream-suite.ts';
import { runnerProject, sh } from './runner-project.ts';

const suite = upstreamSuite('stubbed-fetch-leak');

const config = (setup: string) =>
  `import { defineConfig } from 'vitest/config';\nimport { tapedeck } from 'llm-tapedeck/vitest/plugin';\nexport default defineConfig({ plugins: [tapedeck()], test: { include: ['*.test.mjs']${setup ? `, setupFiles: ['${setup}']` : ''} } });\n`;

const canned = `const canned = () => new Response(JSON.stringify({ id: 'canned', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: 'canned answer' }, finish_reason: 'stop' }] }), { headers: { 'content-type': 'application/json' } });\n`;

const askModel = `test('next to stub', async ({ tape }) => {
  const client = new OpenAI({ apiKey: 'sk-test', baseURL: process.env.UPSTREAM + '/v1', fetch: tape.fetch, maxRetries: 0 });
  const c = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'next to stub' }] });
  console.log('ANSWER ' + c.choices[0].message.content);
  expect(c.choices[0].message.content).toBeTruthy();
});
`;

const calledWith = (text: string) => suite.upstream.calls.filter((c) => c.body.includes(text)).length;

describe('a global fetch stub and the tape of a test', () => {
  it('a stub an earlier test left in place is not where the tape records from', { timeout: 150_000 }, async () => {
    const dir = runnerProject(suite.dir, 'left-stub', {
      'vitest.config.mjs': config(''),
      'chat.test.mjs': `import OpenAI from 'openai';\nimport { vi } from 'vitest';\nimport { test, expect } from 'llm-tapedeck/vitest';\n${canned}
test.skipIf(process.env.NO_STUB)('unit test with a canned answer', async () => {
  vi.stubGlobal('fetch', async () => canned());
  const r = await fetch('http://example.invalid/x');
  expect((await r.json()).id).toBe('canned');
});
${askModel}`,
    });
    const tmp = join(dir, 'tmp');
    mkdirSync(tmp);
    const before = calledWith('next to stub');
    const recorded = await sh('npx vitest run', dir, { UPSTREAM: suite.upstream.url, TAPEDECK_MODE: 'record', TMPDIR: tmp });
    expect(recorded.code, recorded.out).toBe(0);
    expect(recorded.out).toMatch(/ANSWER Echo \d+: next to stub/);
    expect(recorded.out).not.toContain('ANSWER canned');
    expect(calledWith('next to stub') - before).toBe(1);
    // CI replays what the provider answered.
    const replayed = await sh('npx vitest run', dir, { UPSTREAM: suite.upstream.url, CI: 'true', NO_STUB: '1', TMPDIR: tmp });
    expect(replayed.code, replayed.out).toBe(0);
    expect(replayed.out).toMatch(/ANSWER Echo \d+: next to stub/);
    expect(calledWith('next to stub') - before).toBe(1);
  });

  it('a setup file that stubs fetch before tapedeck is imported: recording is refused, saying why', { timeout: 150_000 }, async () => {
    const dir = runnerProject(suite.dir, 'setup-stub', {
      'vitest.config.mjs': config('./stub-fetch.mjs'),
      'stub-fetch.mjs': `import { vi } from 'vitest';\n${canned}vi.stubGlobal('fetch', vi.fn(async () => { console.log('STUB CALLED'); return canned(); }));\n`,
      'chat.test.mjs': `import OpenAI from 'openai';\nimport { test, expect } from 'llm-tapedeck/vitest';\n${askModel}`,
    });
    const tmp = join(dir, 'tmp');
    mkdirSync(tmp);
    const before = calledWith('next to stub');
    const run = await sh('npx vitest run', dir, { UPSTREAM: suite.upstream.url, TAPEDECK_MODE: 'record', TMPDIR: tmp });
    expect(run.code, run.out).toBe(1);
    // The SDK shows the message of the E_FETCH_STUBBED answer (a 400).
    expect(run.out).toMatch(/400 The global fetch had been replaced by a test double when llm-tapedeck was imported/);
    expect(run.out).toContain('tapedeckFixtures({ fetch })');
    expect(run.out).not.toContain('ANSWER canned');
    expect(run.out).not.toContain('STUB CALLED');
    expect(calledWith('next to stub') - before).toBe(0);
  });
});
