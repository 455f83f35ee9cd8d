// The vitest fixture in a test file under vitest's happy-dom environment, recording: happy-dom
// puts its own fetch on globalThis, which applies a page's same-origin policy, and tapedeck
// reached the upstream with it. The call was refused ("Cross-Origin Request Blocked") and the
// test was told that recording needs the network and a real API key, which it had; running the
// printed command failed the same way. Node's own fetch is not reachable once the environment
// replaced it, so the failure now names the cause (the happy-dom environment's fetch) and the
// fixes (`// @vitest-environment node` for the file, or the `fetch` option). A real vitest run of
// a small project with the real happy-dom, against the fake provider.
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { upstreamSuite } from '../proxy/upstream-suite.ts';
import { runnerProject, sh } from './runner-project.ts';

const suite = upstreamSuite('happy-dom-upstream');
const root = join(import.meta.dirname, '..', '..');

const componentTest = `// @vitest-environment happy-dom
import { expect, test } from 'llm-tapedeck/vitest';

test('asks the model', async ({ tape }) => {
  const res = await tape.fetch(process.env.UPSTREAM + '/v1/chat/completions', {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello from a component' }] }),
  });
  console.log('STATUS ' + res.status + ' ' + (await res.text()));
  expect(res.status).toBe(200);
});
`;

it("under happy-dom, a call the environment's fetch refuses names that fetch and the fix, not the network or the key", { timeout: 120_000 }, async () => {
  const dir = runnerProject(suite.dir, 'happy-dom-app', { 'component.test.js': componentTest });
  symlinkSync(join(root, 'node_modules', 'happy-dom'), join(dir, 'node_modules', 'happy-dom'));
  const r = await sh('npx vitest run', dir, { UPSTREAM: suite.upstream.url });
  expect(r.code, r.out).toBe(1);
  expect(r.out).toContain("happy-dom test environment's fetch");
  expect(r.out).toContain('// @vitest-environment node');
  expect(r.out).not.toContain('needs the network and a real API key');
  // The request itself never reached the provider (happy-dom's CORS preflight, an OPTIONS, did).
  expect(suite.upstream.calls.filter((c) => c.method !== 'OPTIONS')).toHaveLength(0);
});
