// A test whose call the API answers with an error (a 500 it handles itself). Errors are not
// recorded without recordErrors, so in update mode that call went to the API on every local run
// and passed, the run summary said "0 misses", and CI, which replays, failed with "this test was
// never recorded" and a record command that records nothing. Now the summary of the local run
// says the error answer was not recorded and how to record it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openTestTape } from '../../src/testing/session.ts';
import { formatSummary, readTapeReports, summarizeRun } from '../../src/testing/run-report.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-errors-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let upstreamCalls = 0;
const failing = (async () => {
  upstreamCalls++;
  return new Response(JSON.stringify({ error: { message: 'boom', type: 'server_error' } }), { status: 500, headers: { 'content-type': 'application/json' } });
}) as typeof fetch;

async function run(name: string, extra: { recordErrors?: boolean } = {}): Promise<string> {
  const runDir = join(dir, name);
  const tape = openTestTape({ tape: join(dir, `${name}.tape`), mode: 'update', test: 'app > handles a 500', file: 'app.test.ts', runDir, fetch: failing, ...extra });
  const r = await tape.fetch('http://api.test/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"model":"m","messages":[{"role":"user","content":"Hi"}]}' });
  expect(r.status).toBe(500);
  await tape.close();
  return formatSummary(await summarizeRun(readTapeReports(runDir)), { root: dir });
}

describe('an upstream error answer in update mode', () => {
  it('is said in the run summary, with how to record it', async () => {
    const text = await run('plain');
    expect(text).toContain('1 upstream error not recorded');
    expect(text).toContain('tapedeckFixtures({ recordErrors: true })');
  });

  it('is not mentioned once recordErrors records it', async () => {
    const before = upstreamCalls;
    const text = await run('recorded', { recordErrors: true });
    expect(upstreamCalls - before).toBe(1);
    expect(text).not.toContain('not recorded');
    expect(text).toContain('1 recording added');
  });
});
