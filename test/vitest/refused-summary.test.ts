// Requests `tape.install({ blockNetwork: true })` refused are said in the run summary: how many
// and to which hosts, also when the code under test caught the E_NETWORK_BLOCKED and the test
// passed. Through a test tape's report with the real openai SDK (app code that builds its own
// client on the global fetch), then through the vitest plugin in a copy of examples/vitest,
// whose global-fetch test has a request refused.
import OpenAI from 'openai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestTape } from '../../src/testing/session.ts';
import { formatSummary, readTapeReports, summarizeRun } from '../../src/testing/run-report.ts';
import { startUpstream, type Upstream } from '../proxy/fake-upstream.ts';
import { exampleProject, type ExampleProject } from './example-project.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-refused-summary-'));
let up: Upstream;
let elsewhere: Upstream;
beforeAll(async () => {
  up = await startUpstream();
  elsewhere = await startUpstream();
});
afterAll(async () => {
  await up.close();
  await elsewhere.close();
  rmSync(dir, { recursive: true, force: true });
});

/** App code: answers with the model, and reports telemetry it does not mind losing. */
async function answer(baseURL: string, question: string): Promise<string> {
  const client = new OpenAI({ baseURL, apiKey: 'sk-test', maxRetries: 0 });
  const r = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: question }] });
  await fetch('https://telemetry.example.com/v1/events', { method: 'POST', body: '{}' }).catch(() => {});
  return r.choices[0]!.message.content ?? '';
}

describe('requests refused by blockNetwork', () => {
  it('are counted per tape and per host in the run summary, though the code under test caught them', async () => {
    const runDir = join(dir, 'run');
    const t = openTestTape({ tape: join(dir, 'app.tape'), env: { TAPEDECK_MODE: 'record' }, runDir, test: 'answers' });
    try {
      t.install({ hosts: [new URL(up.url).host], blockNetwork: true });
      expect(await answer(`${up.url}/v1`, 'one')).toMatch(/one$/);
      expect(await answer(`${up.url}/v1`, 'two')).toMatch(/two$/);
      // A second model endpoint nobody listed: the SDK's error is caught by the app.
      expect(await answer(`${elsewhere.url}/v1`, 'three').catch(() => 'fallback')).toBe('fallback');
    } finally {
      await t.close();
    }
    // Refused before anything was sent.
    expect(elsewhere.calls).toHaveLength(0);
    const summary = await summarizeRun(readTapeReports(runDir));
    expect.soft(summary.refused).toEqual({ 'telemetry.example.com': 2, [new URL(elsewhere.url).host]: 1 });
    const text = formatSummary(summary, { root: dir });
    expect.soft(text).toContain('  app.tape (record): +2 added, 3 refused (network blocked)');
    expect.soft(text).toContain(`3 requests were refused (blockNetwork): telemetry.example.com 2, ${new URL(elsewhere.url).host} 1.`);
  });

  it('a run with none says nothing of it', async () => {
    const runDir = join(dir, 'run-none');
    const t = openTestTape({ tape: join(dir, 'quiet.tape'), env: { TAPEDECK_MODE: 'record' }, runDir, test: 'quiet' });
    try {
      t.install({ hosts: [new URL(up.url).host], blockNetwork: true });
      const c = new OpenAI({ baseURL: `${up.url}/v1`, apiKey: 'sk-test', maxRetries: 0 });
      await c.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    } finally {
      await t.close();
    }
    const summary = await summarizeRun(readTapeReports(runDir));
    expect(summary.refused).toBeUndefined();
    expect(formatSummary(summary, { root: dir })).not.toMatch(/refused/);
  });

  describe('through the vitest plugin', () => {
    let p: ExampleProject;
    beforeAll(async () => {
      p = await exampleProject();
    });
    afterAll(() => p?.close());

    it("the example's global-fetch test, whose request to example.invalid is refused: the summary says so", { timeout: 120_000 }, async () => {
      const r = await p.vitest(['test/global-fetch.test.ts']);
      expect(r.code, r.out).toBe(0);
      expect.soft(r.out).toContain('test/__tapes__/global-fetch.test/app-code-on-the-global-fetch.tape (update): +1 added, 1 refused (network blocked)');
      expect.soft(r.out).toContain('1 request was refused (blockNetwork): example.invalid 1.');
    });
  });
});
