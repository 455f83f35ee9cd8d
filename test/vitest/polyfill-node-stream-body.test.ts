// A project that puts node-fetch 2 on the global fetch in a setup file, before llm-tapedeck is
// imported (older code written for a Node without fetch): the docs say such a fetch is recorded
// through. node-fetch 2's answers carry their body as a Node stream, not a web one, and the
// recording failed with "tapedeck proxy failed: up.body.getReader is not a function. This is a
// bug in tapedeck". The answer is now read as the stream it is: recorded, then replayed in CI.
// A real vitest run with the real node-fetch, against the fake provider.
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { upstreamSuite } from '../proxy/upstream-suite.ts';
import { runnerProject, sh } from './runner-project.ts';

const suite = upstreamSuite('polyfill-node-stream');
const root = join(import.meta.dirname, '..', '..');

it('records through node-fetch 2 put on the global before the import, and replays', { timeout: 150_000 }, async () => {
  const dir = runnerProject(suite.dir, 'node-fetch-2', {
    'vitest.config.mjs': `import { defineConfig } from 'vitest/config';\nimport { tapedeck } from 'llm-tapedeck/vitest/plugin';\nexport default defineConfig({ plugins: [tapedeck()], test: { include: ['*.test.mjs'], setupFiles: ['./polyfill.mjs'] } });\n`,
    'polyfill.mjs': `import nodeFetch from 'node-fetch';\nglobalThis.fetch = nodeFetch;\n`,
    'chat.test.mjs': `import OpenAI from 'openai';
import { test, expect } from 'llm-tapedeck/vitest';
test('asks', async ({ tape }) => {
  const client = new OpenAI({ apiKey: 'sk-test', baseURL: process.env.UPSTREAM + '/v1', fetch: tape.fetch, maxRetries: 0 });
  const c = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'through node-fetch' }] });
  let streamed = '';
  for await (const ch of await client.chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'streamed through node-fetch' }] })) streamed += ch.choices[0]?.delta?.content ?? '';
  console.log('ANSWER ' + c.choices[0].message.content + ' | ' + streamed);
  expect(c.choices[0].message.content).toBeTruthy();
});
`,
  });
  symlinkSync(join(root, 'node_modules', 'node-fetch'), join(dir, 'node_modules', 'node-fetch'));
  const tmp = join(dir, 'tmp');
  mkdirSync(tmp);
  const recorded = await sh('npx vitest run', dir, { UPSTREAM: suite.upstream.url, TAPEDECK_MODE: 'update', TMPDIR: tmp });
  expect(recorded.code, recorded.out).toBe(0);
  expect(recorded.out).not.toContain('bug in tapedeck');
  expect(recorded.out).toMatch(/ANSWER Echo \d+: through node-fetch \| .*streamed through node-fetch/);
  const calls = suite.upstream.calls.length;
  const replayed = await sh('npx vitest run', dir, { UPSTREAM: suite.upstream.url, CI: 'true', TMPDIR: tmp });
  expect(replayed.code, replayed.out).toBe(0);
  expect(replayed.out).toMatch(/ANSWER Echo \d+: through node-fetch \| .*streamed through node-fetch/);
  expect(suite.upstream.calls.length).toBe(calls);
});
