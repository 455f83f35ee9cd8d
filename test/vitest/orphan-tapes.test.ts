// A deleted test leaves its tape (a tape per test, the default naming). No test opens that tape
// again, so before, the run summary never read it: "0 unused recordings", and the documented
// prune (TAPEDECK_PRUNE=1) left it committed for good. Now a test file every test of which ran
// has its tape folder looked at: a tape there no test opened is reported unused, and the prune
// removes it and touches nothing else. A run filtered with -t reports none (unopened is expected).
// Spawned vitest runs of the example project, as a user runs them.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { exampleProject, summaryLine, type ExampleProject } from './example-project.ts';

const testFile = (names: string[]) => `
import { inject } from 'vitest';
import { test } from 'llm-tapedeck/vitest';
for (const name of ${JSON.stringify(names)}) {
  test(name, async ({ tape, expect }) => {
    const r = await tape.fetch(inject('openaiBaseURL') + '/chat/completions', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: name }] }),
    });
    expect(r.status).toBe(200);
  });
}
`;

let p: ExampleProject;
beforeAll(async () => {
  p = await exampleProject({ 'test/orphan.test.ts': testFile(['kept', 'deleted']) });
});
afterAll(async () => {
  await p?.close();
});

it('a deleted test\'s tape is reported unused and pruned, and nothing else is touched', { timeout: 180_000 }, async () => {
  const rec = await p.vitest(['test/orphan.test.ts']);
  expect(rec.code, rec.out).toBe(0);
  const kept = join(p.tapes, 'orphan.test', 'kept.tape');
  const deleted = join(p.tapes, 'orphan.test', 'deleted.tape');
  expect(existsSync(deleted)).toBe(true);
  const keptBytes = readFileSync(kept);

  writeFileSync(join(p.dir, 'test', 'orphan.test.ts'), testFile(['kept']));
  const filtered = await p.vitest(['test/orphan.test.ts', '-t', 'kept'], { CI: 'true' });
  expect(filtered.code, filtered.out).toBe(0);
  expect(summaryLine(filtered)).toContain('0 unused recordings');

  const ci = await p.vitest(['test/orphan.test.ts'], { CI: 'true' });
  expect(ci.code, ci.out).toBe(0);
  expect(summaryLine(ci)).toBe('tapedeck: 1 tape, 0 written, 0 recordings added, 1 replayed, 0 misses, 1 unused recording');
  expect(ci.out).toContain('test/__tapes__/orphan.test/deleted.tape: 1 unused (no test opened this tape: a deleted or renamed test)');
  expect(ci.out).toContain('TAPEDECK_PRUNE=1 npx vitest run');

  const prune = await p.vitest(['test/orphan.test.ts'], { CI: 'true', TAPEDECK_PRUNE: '1' });
  expect(prune.code, prune.out).toBe(0);
  expect(prune.out).toContain('tapedeck: pruned 1 unused recording(s).');
  expect(existsSync(deleted)).toBe(false);
  expect(readFileSync(kept).equals(keptBytes)).toBe(true);
  expect(p.listTapes()).toContain('orphan.test/kept.tape');
});

it('a run whose tests used a store judges no local tape file: none is reported unused, and the prune keeps them', async () => {
  const { mkdtempSync, mkdirSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { appendRecords, createTape } = await import('../../src/store/tape-file.ts');
  const { pruneUnused, summarizeRun } = await import('../../src/testing/run-report.ts');
  const root = mkdtempSync(join(tmpdir(), 'tapedeck-store-orphans-'));
  try {
    // The tape the test recorded locally before the team moved to Redis.
    const folder = join(root, 'test', '__tapes__', 'agent.test');
    mkdirSync(folder, { recursive: true });
    const local = join(folder, 'the-agent-remembers.tape');
    await createTape(local);
    await appendRecords(local, [{ v: 1, key: 'k', request: { model: 'm' }, value: { text: 'kept' }, recordedAt: '2026-01-01T00:00:00.000Z' }]);
    const bytes = readFileSync(local);
    // This run's test used a Redis namespace (the store is not reachable here: its records are not checked).
    const report = { tape: local, store: 'redis://127.0.0.1:1', namespace: 'vt/test/__tapes__/agent.test/the-agent-remembers', testFile: 'test/agent.test.ts', root, mode: 'replay' as const, added: 0, hits: 1, misses: [], used: [] };
    const summary = await summarizeRun([report], { testFiles: [join(root, 'test', 'agent.test.ts')], stores: [] });
    expect(summary.tapes.filter((t) => t.orphan)).toEqual([]);
    expect(summary.unused).toBe(0);
    expect(await pruneUnused(summary, { stores: [] })).toBe(0);
    expect(readFileSync(local).equals(bytes)).toBe(true);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

// A test that exists, ran and passed but made no request this run (its call behind a flag that
// is off) opened its tape: before, its tape was called "a deleted or renamed test" and pruned, and
// the run with the flag on missed in CI. Its recordings are not judged this run, and said so.
it('a test that made no request this run keeps its tape: not judged, and the summary says why', { timeout: 180_000 }, async () => {
  const flagged = `
import { inject } from 'vitest';
import { test } from 'llm-tapedeck/vitest';
test('summarizes when the flag is on', async ({ tape, expect }) => {
  if (!process.env.FEATURE_X) return;
  const r = await tape.fetch(inject('openaiBaseURL') + '/chat/completions', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'summarize' }] }),
  });
  expect(r.status).toBe(200);
});
`;
  writeFileSync(join(p.dir, 'test', 'flagged.test.ts'), flagged);
  const rec = await p.vitest(['test/flagged.test.ts'], { FEATURE_X: '1' });
  expect(rec.code, rec.out).toBe(0);
  const tape = join(p.tapes, 'flagged.test', 'summarizes-when-the-flag-is-on.tape');
  const bytes = readFileSync(tape);
  const prune = await p.vitest(['test/flagged.test.ts'], { CI: 'true', TAPEDECK_PRUNE: '1' });
  expect(prune.code, prune.out).toBe(0);
  expect(prune.out).not.toContain('a deleted or renamed test');
  expect(prune.out).toContain('unused recordings not checked: its test (test/flagged.test.ts > summarizes when the flag is on) made no request in this run');
  expect(readFileSync(tape).equals(bytes)).toBe(true);
  const on = await p.vitest(['test/flagged.test.ts'], { CI: 'true', FEATURE_X: '1' });
  expect(on.code, on.out).toBe(0);
});
