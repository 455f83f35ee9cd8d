// Tapes several tests share, run by vitest itself (spawned, as a user runs it) on a copy of
// examples/vitest, against its fake OpenAI API, whose answers count its calls (`(call n)`):
// what record mode gave each test is what replay gives it, with the API stopped. A file-level
// tape (`per: 'file'`) with three tests asking the same question one after the other; two files
// of concurrent tests on one tape through a `name` function, recorded in threads and replayed in
// forks; and update mode, where a test asking what another test recorded replays that. The first
// two failed before records named their test: every test got the first recording of the shared
// question ("2 unused recordings").
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readTape } from '../../src/store/tape-file.ts';
import { exampleProject, summaryLine, type ExampleProject } from './example-project.ts';

/** A test body that asks `question` through its tape and writes what it got to answers.jsonl. */
const asks = (question: string) => `async ({ tape, task }) => {
    const r = await tape.fetch(inject('openaiBaseURL') + '/chat/completions', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: ${JSON.stringify(question)} }] }),
    });
    const answer = ((await r.json()) as { choices: { message: { content: string } }[] }).choices[0].message.content;
    appendFileSync(join(process.cwd(), 'answers.jsonl'), JSON.stringify({ test: task.file.name + ' > ' + task.name, answer }) + '\\n');
  }`;

const header = `
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { inject, test as base } from 'vitest';
import { tapedeckFixtures } from 'llm-tapedeck/vitest';
`;

// One tape for the file, three tests in a row asking the same question.
const sequential = `${header}
const test = base.extend(tapedeckFixtures({ per: 'file' }));
for (const name of ['one', 'two', 'three']) test(name, ${asks('shared q')});
`;

// Two files on one tape, three concurrent tests each, all asking the same question.
const concurrent = (name: string) => `${header}
const test = base.extend(tapedeckFixtures({ name: () => 'shared/conc.tape' }));
for (const i of [1, 2, 3]) test.concurrent('${name} ' + i, ${asks('same for all')});
`;

let p: ExampleProject;
const CI = { CI: '1', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' };

/** What each test got in the run, by test; answers.jsonl is removed for the next run (called first: whatever a failed step left). */
function answers(): Record<string, string> {
  const file = join(p.dir, 'answers.jsonl');
  if (!existsSync(file)) return {};
  const out: Record<string, string> = {};
  for (const line of readFileSync(file, 'utf8').split('\n').filter(Boolean)) {
    const { test, answer } = JSON.parse(line) as { test: string; answer: string };
    out[test] = answer;
  }
  rmSync(file);
  return out;
}

beforeAll(async () => {
  p = await exampleProject({
    'test/seq.test.ts': sequential,
    'test/conc-a.test.ts': concurrent('alpha'),
    'test/conc-b.test.ts': concurrent('beta'),
  });
});
afterAll(async () => {
  await p?.close();
});

describe('a tape several tests share', { timeout: 180_000 }, () => {
  it('per file: three tests asking the same question each replay, with the API stopped, the answer record mode gave them', async () => {
    answers();
    const record = await p.vitest(['test/seq.test.ts'], { TAPEDECK_MODE: 'record' });
    expect(record.code, record.out).toBe(0);
    expect(summaryLine(record)).toBe('tapedeck: 1 tape, 1 written, 3 recordings added, 0 replayed, 0 misses, 0 unused recordings');
    const recorded = answers();
    expect(Object.keys(recorded).sort()).toEqual(['test/seq.test.ts > one', 'test/seq.test.ts > three', 'test/seq.test.ts > two']);
    // Three live calls, three different answers.
    expect(new Set(Object.values(recorded)).size).toBe(3);
    expect(recorded['test/seq.test.ts > one']).toMatch(/^You said: shared q \(call \d+\)$/);


    const replay = await p.vitest(['test/seq.test.ts'], CI);
    expect(replay.code, replay.out).toBe(0);
    expect(answers()).toEqual(recorded);
    expect(summaryLine(replay)).toBe('tapedeck: 1 tape, 0 written, 0 recordings added, 3 replayed, 0 misses, 0 unused recordings');

    // One test alone (`-t two`) is served its own answer too, not the first one on the tape.
    const alone = await p.vitest(['test/seq.test.ts', '-t', 'two$'], CI);
    expect(alone.code, alone.out).toBe(0);
    expect(answers()).toEqual({ 'test/seq.test.ts > two': recorded['test/seq.test.ts > two'] });

    // Each record names the test that made it; its repeat counts that test's recordings.
    const tape = await readTape(join(p.tapes, 'seq.test.tape'));
    expect(tape.records.map((r) => [(r.value as { test: string }).test, (r.value as { repeat: number }).repeat])).toEqual([
      ['test/seq.test.ts > one', 0],
      ['test/seq.test.ts > two', 0],
      ['test/seq.test.ts > three', 0],
    ]);
  });

  it('concurrent tests in two files on one tape, recorded in threads, replayed in forks: each test gets its own answer', async () => {
    answers();
    const files = ['test/conc-a.test.ts', 'test/conc-b.test.ts', '--maxWorkers=2', '--fileParallelism'];
    const record = await p.vitest([...files, '--pool=threads'], { TAPEDECK_MODE: 'record' });
    expect(record.code, record.out).toBe(0);
    expect(summaryLine(record)).toBe('tapedeck: 1 tape, 1 written, 6 recordings added, 0 replayed, 0 misses, 0 unused recordings');
    const recorded = answers();
    expect(Object.keys(recorded)).toHaveLength(6);
    expect(new Set(Object.values(recorded)).size).toBe(6);

    const replay = await p.vitest([...files, '--pool=forks'], CI);
    expect(replay.code, replay.out).toBe(0);
    expect(answers()).toEqual(recorded);
    expect(summaryLine(replay)).toBe('tapedeck: 1 tape, 0 written, 0 recordings added, 6 replayed, 0 misses, 0 unused recordings');
  });

  it('update mode: the first test records the question, the tests after it replay that recording, and so does CI', async () => {
    answers();
    rmSync(join(p.tapes, 'seq.test.tape'), { force: true });
    const update = await p.vitest(['test/seq.test.ts'], { TAPEDECK_MODE: 'update' });
    expect(update.code, update.out).toBe(0);
    expect(summaryLine(update)).toBe('tapedeck: 1 tape, 1 written, 1 recording added, 2 replayed, 0 misses, 0 unused recordings');
    const got = answers();
    expect(new Set(Object.values(got)).size).toBe(1);

    const replay = await p.vitest(['test/seq.test.ts'], CI);
    expect(replay.code, replay.out).toBe(0);
    expect(answers()).toEqual(got);
  });
});
