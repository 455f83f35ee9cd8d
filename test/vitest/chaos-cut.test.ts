// docs/chaos.md's "Test partial streams" as a vitest test (docs/vitest.md, "Faults on demand"),
// with the openai SDK streaming from the example's fake API, through tape.fetch and through the
// test's proxy (tape.serve()), in a real vitest run. The `cut` fault used to be skipped on the
// run that records: the first run (update mode, no tape yet) and every TAPEDECK_MODE=record run
// got the whole stream and failed, and only a replay passed. Now the answer is recorded whole and
// then cut as its replay cuts it: each run passes, and the client sees the same cut and the same
// whole retry in the recording run and in CI.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { exampleProject, summaryLine, type ExampleProject, type Run } from './example-project.ts';

const cutTest = `
import OpenAI from 'openai';
import { inject } from 'vitest';
import { expect, test } from 'llm-tapedeck/vitest';

const ask = (client: OpenAI) => client.chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'Cut me' }] });

async function cutThenWhole(name: string, client: OpenAI) {
  let text = '';
  let failed = false;
  try {
    for await (const c of await ask(client)) text += c.choices[0]?.delta?.content ?? '';
  } catch {
    failed = true;
  }
  let retry = '';
  for await (const c of await ask(client)) retry += c.choices[0]?.delta?.content ?? '';
  console.log('CUT ' + name + ' ' + JSON.stringify({ failed, text, retry }));
  expect(failed).toBe(true);
  expect(retry).toMatch(/^You said: Cut me \\(call \\d+\\) $/);
}

test('handles a cut stream', async ({ tape }) => {
  tape.chaos({ faults: { cut: 1 }, cutAfter: 2, attempts: 1 });
  await cutThenWhole('fetch', new OpenAI({ baseURL: inject('openaiBaseURL'), apiKey: 'sk-x', fetch: tape.fetch, maxRetries: 0 }));
});

test('handles a cut stream through the test proxy', async ({ tape }) => {
  tape.chaos({ faults: { cut: 1 }, cutAfter: 2, attempts: 1 });
  const { url } = await tape.serve({ upstream: inject('openaiBaseURL').replace(/\\/v1$/, ''), tls: false });
  await cutThenWhole('serve', new OpenAI({ baseURL: url + '/v1', apiKey: 'sk-x', maxRetries: 0 }));
});
`;

/** What each test's client saw, by test. */
const seen = (r: Run) =>
  Object.fromEntries(
    r.out
      .split('\n')
      .filter((l) => l.startsWith('CUT '))
      .map((l) => {
        const [, name, json] = /^CUT (\w+) (.*)$/.exec(l)!;
        return [name, JSON.parse(json!) as { failed: boolean; text: string; retry: string }];
      }),
  );

let p: ExampleProject;
beforeAll(async () => {
  p = await exampleProject({ 'test/cut.test.ts': cutTest });
});
afterAll(async () => {
  await p?.close();
});

it('a cut stream is cut on the run that records it, in update and record mode, as in CI', { timeout: 180_000 }, async () => {
  // Locally, no tape yet: update mode records each answer whole, then cuts it.
  const first = await p.vitest(['test/cut.test.ts']);
  expect(first.code, first.out).toBe(0);
  const cut = { failed: true, text: 'You ' };
  expect(seen(first)).toEqual({ fetch: { ...cut, retry: 'You said: Cut me (call 1) ' }, serve: { ...cut, retry: 'You said: Cut me (call 2) ' } });
  // One API call a test: the retry replays the recording made behind the cut.
  expect(p.fake.calls).toHaveLength(2);
  expect(summaryLine(first)).toBe('tapedeck: 2 tapes, 2 written, 2 recordings added, 2 replayed, 0 misses, 0 unused recordings, 2 faults injected (cut 2)');

  // Re-recorded on purpose.
  const record = await p.vitest(['test/cut.test.ts'], { TAPEDECK_MODE: 'record' });
  expect(record.code, record.out).toBe(0);
  expect(seen(record)).toEqual({ fetch: { ...cut, retry: 'You said: Cut me (call 3) ' }, serve: { ...cut, retry: 'You said: Cut me (call 4) ' } });
  expect(p.fake.calls).toHaveLength(4);

  // CI replays the same cut and the same whole retry, with the API out of reach, writing nothing.
  const tapes = p.listTapes().map((t) => join(p.tapes, t));
  expect(tapes).toHaveLength(2);
  const bytes = tapes.map((t) => readFileSync(t));
  const ci = await p.vitest(['test/cut.test.ts'], { CI: 'true', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' });
  expect(ci.code, ci.out).toBe(0);
  expect(seen(ci)).toEqual(seen(record));
  expect(summaryLine(ci)).toBe('tapedeck: 2 tapes, 0 written, 0 recordings added, 4 replayed, 0 misses, 0 unused recordings, 2 faults injected (cut 2)');
  expect(tapes.map((t) => readFileSync(t).equals(bytes[tapes.indexOf(t)]!))).toEqual([true, true]);
  expect(p.fake.calls).toHaveLength(4);
});
