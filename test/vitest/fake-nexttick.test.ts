// A test that fakes process.nextTick and queueMicrotask (`vi.useFakeTimers({ toFake: [...,
// 'nextTick', 'queueMicrotask'] })`, threads pool) around a call through tape.fetch: the run hung
// with no output, past the test timeout, where the same call without tapedeck fails at the
// timeout and the run ends (Node's fetch closes a body made from bytes through queueMicrotask:
// reading the tape's answer spun the worker). The call is refused, saying why, and the test fails. A spawned vitest run of the example
// project, as a user runs it (bounded: a hang fails this test instead of holding the suite).
import { execFile } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { exampleProject, repo, type ExampleProject } from './example-project.ts';

const TEST = `
import { inject, vi } from 'vitest';
import { test } from 'llm-tapedeck/vitest';
test('nextTick faked', async ({ tape }) => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'setImmediate', 'queueMicrotask', 'nextTick'] as any });
  await tape.fetch(inject('openaiBaseURL') + '/chat/completions', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'nt hello' }] }),
  });
});
`;

let p: ExampleProject;
beforeAll(async () => {
  p = await exampleProject({ 'test/nt.test.ts': TEST });
}, 60_000);
afterAll(async () => {
  await p?.close();
});

it('a call under faked nextTick and queueMicrotask ends the run, the test failed', { timeout: 120_000 }, async () => {
  // A hung run's directory stays in the project, which goes at the end.
  const env: Record<string, string> = { TMPDIR: join(p.dir, 'tmp') };
  mkdirSync(env.TMPDIR!);
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && k !== 'TMPDIR' && !/^(VITEST|TAPEDECK_|CI$|NODE_ENV$|NODE_OPTIONS$|OPENAI_)/.test(k)) env[k] = v;
  const run = await new Promise<{ code: number | string | null; killed: boolean; out: string }>((resolve) => {
    execFile(process.execPath, [join(repo, 'node_modules/vitest/vitest.mjs'), 'run', 'test/nt.test.ts', '--pool=threads', '--testTimeout=4000'], { cwd: p.dir, env: { ...env, CI: 'true', NO_COLOR: '1', OPENAI_BASE_URL: p.fake.url }, timeout: 90_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number | string }).code ?? 1) : 0, killed: Boolean(err && (err as { killed?: boolean }).killed), out: `${stdout}\n${stderr}` }),
    );
  });
  expect(run.killed, run.out).toBe(false);
  expect(run.code, run.out).toBe(1);
  expect(run.out).toContain('nextTick faked');
  expect(run.out).toContain("A call through the test's tape with queueMicrotask faked");
});
