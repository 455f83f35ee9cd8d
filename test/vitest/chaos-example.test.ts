// tape.chaos() in a real vitest run (the example project, spawned as a user runs it): a test
// that checks its client retries a rate limit records locally (update mode: the faulted call's
// answer is recorded behind its fault, and its retry replays it), replays in CI with the API
// stopped, and the plugin's run summary counts the injected faults both times; the CI run
// writes nothing.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { exampleProject, summaryLine, type ExampleProject } from './example-project.ts';

const retryTest = `
import OpenAI from 'openai';
import { inject } from 'vitest';
import { expect, test } from 'llm-tapedeck/vitest';
test('retries a rate limit', async ({ tape }) => {
  tape.chaos({ faults: { 429: 1 }, attempts: 1, retryAfterMs: 10, seed: 11 });
  const client = new OpenAI({ baseURL: inject('openaiBaseURL'), apiKey: 'sk-x', fetch: tape.fetch, maxRetries: 1 });
  const r = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'retry me' }] });
  expect(r.choices[0].message.content).toContain('retry me');
  const noRetry = new OpenAI({ baseURL: inject('openaiBaseURL'), apiKey: 'sk-x', fetch: tape.fetch, maxRetries: 0 });
  await expect(noRetry.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'retry me' }] })).rejects.toBeInstanceOf(OpenAI.RateLimitError);
});
`;

let p: ExampleProject;
beforeAll(async () => {
  p = await exampleProject({ 'test/retry.test.ts': retryTest });
});
afterAll(async () => {
  await p?.close();
});

it('records with faults locally, replays them in CI, and the run summary counts them', { timeout: 180_000 }, async () => {
  const rec = await p.vitest(['test/retry.test.ts']);
  expect(rec.code, rec.out).toBe(0);
  expect(p.fake.calls).toHaveLength(1);
  // The faulted call is recorded behind its fault (its replay needs it), and its retry replays that.
  expect(summaryLine(rec)).toBe('tapedeck: 1 tape, 1 written, 1 recording added, 1 replayed, 0 misses, 0 unused recordings, 2 faults injected (429 2)');
  const tape = join(p.tapes, p.listTapes()[0]!);
  const bytes = readFileSync(tape);
  const ci = await p.vitest(['test/retry.test.ts'], { CI: 'true', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' });
  expect(ci.code, ci.out).toBe(0);
  expect(summaryLine(ci)).toBe('tapedeck: 1 tape, 0 written, 0 recordings added, 1 replayed, 0 misses, 0 unused recordings, 2 faults injected (429 2)');
  expect(readFileSync(tape).equals(bytes)).toBe(true);
  expect(p.fake.calls).toHaveLength(1);
});
