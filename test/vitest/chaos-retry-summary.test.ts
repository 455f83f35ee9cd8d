// The docs' own "retries a rate limit" example (docs/vitest.md, "Faults on demand") in a real
// vitest run: locally (update mode) the faulted call's answer is recorded behind its fault and
// its retry replays it; in CI the fault stands in for that recording. Neither run is "a loop
// that runs longer": the run summary says nothing of calls answered again past their recordings.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { exampleProject, summaryLine, type ExampleProject } from './example-project.ts';

// As docs/vitest.md shows it: the client reads the API's address and key from the environment.
const docsExample = `
import OpenAI from 'openai';
import { test } from 'llm-tapedeck/vitest';
test('retries a rate limit', async ({ tape }) => {
  tape.chaos({ faults: { 429: 1 }, attempts: 1, retryAfterMs: 10 });
  const client = new OpenAI({ fetch: tape.fetch, maxRetries: 1 });
  await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello' }] });
});
`;

let p: ExampleProject;
beforeAll(async () => {
  p = await exampleProject({ 'test/retry.test.ts': docsExample });
});
afterAll(async () => {
  await p?.close();
});

it('a retry after an injected fault is not counted as a call past its recordings', { timeout: 180_000 }, async () => {
  const local = await p.vitest(['test/retry.test.ts'], { OPENAI_API_KEY: 'sk-test' });
  expect(local.code, local.out).toBe(0);
  expect(summaryLine(local)).toBe('tapedeck: 1 tape, 1 written, 1 recording added, 1 replayed, 0 misses, 0 unused recordings, 1 fault injected (429 1)');
  expect(local.out).not.toContain('answered again');
  expect(local.out).not.toContain('past those recorded for');
  expect(p.fake.calls).toHaveLength(1);

  const ci = await p.vitest(['test/retry.test.ts'], { CI: 'true', OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' });
  expect(ci.code, ci.out).toBe(0);
  expect(summaryLine(ci)).toBe('tapedeck: 1 tape, 0 written, 0 recordings added, 1 replayed, 0 misses, 0 unused recordings, 1 fault injected (429 1)');
  expect(ci.out).not.toContain('answered again');
  expect(p.fake.calls).toHaveLength(1);
});
