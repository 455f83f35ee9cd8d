// `vitest --mode record` on a test recorded before replaces its recordings: the tape does not
// grow, and the run summary says the recordings were re-recorded (replaced), not added. A
// request recorded more often than before has its extra recordings added. A real vitest run of
// a project (the example's copy, its fake OpenAI API answering differently on every call).
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { readTape } from '../../src/store/tape-file.ts';
import { exampleProject, summaryLine, type ExampleProject } from './example-project.ts';

// CALLS (default 1) calls of one request.
const askTest = `
import OpenAI from 'openai';
import { inject } from 'vitest';
import { expect, test } from 'llm-tapedeck/vitest';
test('summarizes', async ({ tape }) => {
  const client = new OpenAI({ baseURL: inject('openaiBaseURL'), apiKey: 'sk-x', fetch: tape.fetch, maxRetries: 0 });
  for (let i = 0; i < Number(process.env.CALLS ?? 1); i++) {
    const r = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'sum up' }] });
    expect(r.choices[0].message.content).toContain('sum up');
  }
});
`;

let p: ExampleProject;
beforeAll(async () => {
  p = await exampleProject({ 'test/ask.test.ts': askTest });
});
afterAll(async () => {
  await p?.close();
});

/** The summary's line of the one tape. */
const tapeLine = (out: string) => out.split('\n').find((l) => l.startsWith('  test/__tapes__/'));

it('a re-recorded recording is said re-recorded (replaced), not added', { timeout: 180_000 }, async () => {
  const first = await p.vitest(['test/ask.test.ts', '--mode', 'record']);
  expect(first.code, first.out).toBe(0);
  expect(summaryLine(first)).toBe('tapedeck: 1 tape, 1 written, 1 recording added, 0 replayed, 0 misses, 0 unused recordings');
  expect(tapeLine(first.out)).toBe('  test/__tapes__/ask.test/summarizes.tape (record): +1 added');
  const tape = join(p.tapes, p.listTapes()[0]!);

  const again = await p.vitest(['test/ask.test.ts', '--mode', 'record']);
  expect(again.code, again.out).toBe(0);
  expect(summaryLine(again)).toBe('tapedeck: 1 tape, 1 written, 0 recordings added, 1 re-recorded, 0 replayed, 0 misses, 0 unused recordings');
  expect(tapeLine(again.out)).toBe('  test/__tapes__/ask.test/summarizes.tape (record): 1 re-recorded (replaced)');
  expect((await readTape(tape)).records).toHaveLength(1);

  // Asked twice now: one recording takes the old one's place, the other is new.
  const more = await p.vitest(['test/ask.test.ts', '--mode', 'record'], { CALLS: '2' });
  expect(more.code, more.out).toBe(0);
  expect(summaryLine(more)).toBe('tapedeck: 1 tape, 1 written, 1 recording added, 1 re-recorded, 0 replayed, 0 misses, 0 unused recordings');
  expect(tapeLine(more.out)).toBe('  test/__tapes__/ask.test/summarizes.tape (record): +1 added, 1 re-recorded (replaced)');
  expect((await readTape(tape)).records).toHaveLength(2);
  expect(p.fake.calls).toHaveLength(4);
});
