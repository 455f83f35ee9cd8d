// A real vitest run of a small project that mocks HTTP with MSW (msw/node, setupServer) and
// records its LLM calls with the tape fixture. When the setup file starts MSW at its top
// level, MSW's interceptor is on the global fetch before the test file imports llm-tapedeck,
// and recording goes through it. A handler still answering the LLM's URL (a project moving
// from MSW mocks to tapes) had its canned answer recorded as the provider's, and a later CI run
// replayed it green; with `onUnhandledRequest: 'error'` the refusal read as an unreachable
// provider that needs the network and a real API key. Both now fail the call with what
// happened and the fix, and nothing is recorded; MSW started in beforeAll (after the import)
// never sees the LLM calls and still answers the app's own API.
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { upstreamSuite } from '../proxy/upstream-suite.ts';
import { runnerProject, sh } from './runner-project.ts';

const suite = upstreamSuite('msw-interceptor');
const root = join(import.meta.dirname, '..', '..');

const config = `import { defineConfig } from 'vitest/config';\nimport { tapedeck } from 'llm-tapedeck/vitest/plugin';\nexport default defineConfig({ plugins: [tapedeck()], test: { include: ['*.test.mjs'], setupFiles: ['./msw-setup.mjs'] } });\n`;

/** MSW as its docs set it up, started at the top of the setup file or in beforeAll. */
const setup = (start: 'top' | 'beforeAll', unhandled: 'bypass' | 'error', llmHandler: boolean) => `import { afterAll, afterEach, beforeAll } from 'vitest';
import { setupServer } from 'msw/node';
import { http, HttpResponse } from 'msw';
export const server = setupServer(
  http.get('https://api.myapp.test/users', () => HttpResponse.json([{ name: 'Ada' }])),
  ${llmHandler ? `http.post('*/v1/chat/completions', () => HttpResponse.json({ id: 'x', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: 'CANNED BY MSW' }, finish_reason: 'stop' }] })),` : ''}
);
${start === 'top' ? `server.listen({ onUnhandledRequest: '${unhandled}' });` : `beforeAll(() => server.listen({ onUnhandledRequest: '${unhandled}' }));`}
afterEach(() => server.resetHandlers());
afterAll(() => server.close());
`;

const chatTest = (text: string) => `import OpenAI from 'openai';
import { test, expect } from 'llm-tapedeck/vitest';
test('asks', async ({ tape }) => {
  const users = await (await fetch('https://api.myapp.test/users')).json();
  const client = new OpenAI({ apiKey: 'sk-test', baseURL: process.env.UPSTREAM + '/v1', fetch: tape.fetch, maxRetries: 0 });
  const c = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: '${text} ' + users[0].name }] });
  console.log('ANSWER ' + c.choices[0].message.content);
  expect(c.choices[0].message.content).toBeTruthy();
});
`;

function project(name: string, files: Record<string, string>): { dir: string; tmp: string } {
  const dir = runnerProject(suite.dir, name, files);
  symlinkSync(join(root, 'node_modules', 'msw'), join(dir, 'node_modules', 'msw'));
  const tmp = join(dir, 'tmp');
  mkdirSync(tmp);
  return { dir, tmp };
}

const calledWith = (text: string) => suite.upstream.calls.filter((c) => c.body.includes(text)).length;

describe('tapes beside MSW', () => {
  it("MSW started before llm-tapedeck was imported: its canned LLM answer is not recorded as the provider's", { timeout: 150_000 }, async () => {
    const { dir, tmp } = project('msw-canned', {
      'vitest.config.mjs': config,
      'msw-setup.mjs': setup('top', 'bypass', true),
      'chat.test.mjs': chatTest('canned case'),
    });
    const run = await sh('npx vitest run', dir, { UPSTREAM: suite.upstream.url, TAPEDECK_MODE: 'update', TMPDIR: tmp });
    expect(run.code, run.out).toBe(1);
    expect(run.out).not.toContain('ANSWER CANNED BY MSW');
    // The warning at the first recording names MSW, not the inner function it put on the global.
    expect(run.out).toContain("replaced when llm-tapedeck was imported (MSW's request interceptor, started before llm-tapedeck was imported");
    expect(run.out).toMatch(/400 The call to http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions was answered by a request interceptor on the global fetch \(MSW/);
    expect(run.out).toContain('server.listen()');
    expect(run.out).toContain('0 recordings added');
    expect(calledWith('canned case')).toBe(0);
  });

  it("MSW's onUnhandledRequest 'error' refusing the recording says so, not that the provider is unreachable", { timeout: 150_000 }, async () => {
    const { dir, tmp } = project('msw-error', {
      'vitest.config.mjs': config,
      'msw-setup.mjs': setup('top', 'error', false),
      'chat.test.mjs': chatTest('refused case'),
    });
    const run = await sh('npx vitest run', dir, { UPSTREAM: suite.upstream.url, TAPEDECK_MODE: 'update', TMPDIR: tmp });
    expect(run.code, run.out).toBe(1);
    expect(run.out).not.toContain('needs the network and a real API key');
    expect(run.out).not.toContain('is unreachable');
    expect(run.out).toMatch(/refused by a request interceptor on the global fetch \(MSW/);
    expect(run.out).toContain('server.listen()');
    expect(calledWith('refused case')).toBe(0);
  });

  it('a fetch wrapper put in place before the import, and MSW started in beforeAll: recorded through the wrapper', { timeout: 150_000 }, async () => {
    const { dir, tmp } = project('wrapper-then-msw', {
      'vitest.config.mjs': config.replace("setupFiles: ['./msw-setup.mjs']", "setupFiles: ['./wrap-fetch.mjs', './msw-setup.mjs']"),
      // A wrapper that logs and hands back a Response of its own, built in JavaScript as an
      // interceptor's answers are: the provider's answer all the same, and not MSW's.
      'wrap-fetch.mjs': "const inner = globalThis.fetch;\nglobalThis.fetch = async function loggedFetch(input, init) { const r = await inner(input, init); return new Response(r.body, r); };\n",
      'msw-setup.mjs': setup('beforeAll', 'bypass', false),
      'chat.test.mjs': chatTest('wrapper case'),
    });
    const run = await sh('npx vitest run', dir, { UPSTREAM: suite.upstream.url, TAPEDECK_MODE: 'update', TMPDIR: tmp });
    expect(run.code, run.out).toBe(0);
    expect(run.out).toMatch(/ANSWER Echo \d+: wrapper case Ada/);
    expect(calledWith('wrapper case')).toBe(1);
  });

  it("an MSW handler that answers with the test's tape records, replays, and a miss fails the test", { timeout: 150_000 }, async () => {
    const { dir, tmp } = project('msw-handler-tape', {
      'vitest.config.mjs': config,
      'msw-setup.mjs': setup('beforeAll', 'error', false),
      'chat.test.mjs': `import OpenAI from 'openai';
import { http } from 'msw';
import { test, expect } from 'llm-tapedeck/vitest';
import { server } from './msw-setup.mjs';
test('asks', async ({ tape }) => {
  server.use(http.all(process.env.UPSTREAM + '/v1/*', ({ request }) => tape.fetch(request)));
  // App code: its client takes no fetch option.
  const client = new OpenAI({ apiKey: 'sk-test', baseURL: process.env.UPSTREAM + '/v1', maxRetries: 0 });
  const c = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'handler case' + (process.env.EDIT ?? '') }] });
  console.log('ANSWER ' + c.choices[0].message.content);
});
`,
    });
    const recorded = await sh('npx vitest run', dir, { UPSTREAM: suite.upstream.url, TAPEDECK_MODE: 'update', TMPDIR: tmp });
    expect(recorded.code, recorded.out).toBe(0);
    expect(recorded.out).toMatch(/ANSWER Echo \d+: handler case/);
    expect(recorded.out).toContain('1 recording added');
    expect(calledWith('handler case')).toBe(1);
    const replayed = await sh('npx vitest run', dir, { UPSTREAM: suite.upstream.url, CI: 'true', TMPDIR: tmp });
    expect(replayed.code, replayed.out).toBe(0);
    expect(replayed.out).toMatch(/ANSWER Echo \d+: handler case/);
    const missed = await sh('npx vitest run', dir, { UPSTREAM: suite.upstream.url, CI: 'true', EDIT: ' edited', TMPDIR: tmp });
    expect(missed.code, missed.out).toBe(1);
    expect(missed.out).toContain('tapedeck miss');
    expect(calledWith('handler case')).toBe(1);
  });

  it('MSW started in beforeAll: the LLM call is recorded from the provider, MSW answers the app, CI replays offline', { timeout: 150_000 }, async () => {
    const { dir, tmp } = project('msw-before-all', {
      'vitest.config.mjs': config,
      'msw-setup.mjs': setup('beforeAll', 'error', true),
      'chat.test.mjs': chatTest('recorded case'),
    });
    const recorded = await sh('npx vitest run', dir, { UPSTREAM: suite.upstream.url, TAPEDECK_MODE: 'update', TMPDIR: tmp });
    expect(recorded.code, recorded.out).toBe(0);
    expect(recorded.out).toMatch(/ANSWER Echo \d+: recorded case Ada/);
    expect(recorded.out).not.toContain('TAPEDECK_FETCH_REPLACED');
    expect(calledWith('recorded case')).toBe(1);
    const replayed = await sh('npx vitest run', dir, { UPSTREAM: suite.upstream.url, CI: 'true', TMPDIR: tmp });
    expect(replayed.code, replayed.out).toBe(0);
    expect(replayed.out).toMatch(/ANSWER Echo \d+: recorded case Ada/);
    expect(calledWith('recorded case')).toBe(1);
  });
});
