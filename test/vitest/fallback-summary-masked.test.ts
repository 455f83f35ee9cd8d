// A call a test's tape answered with another request's recording (`match: 'signature'`) is named
// in the run summary with what differed, compared from the request as sent: a key pasted into the
// prompt was quoted there in clear (and, against the masked recording, read as a difference even
// where none was). The request is compared, and quoted, as it would be stored.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openTestTape } from '../../src/testing/session.ts';
import { formatSummary, readTapeReports, summarizeRun } from '../../src/testing/run-report.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-fallback-masked-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const RECORDED = `sk-proj-${'A1b2C3d4E5f6G7h8I9j0'.repeat(2)}`;
const SENT = `sk-proj-${'Z9y8X7w6V5u4T3s2R1q0'.repeat(2)}`;
const upstream = (async () => new Response(JSON.stringify({ id: 'c1', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: 'Deployed.' }, finish_reason: 'stop' }] }), { headers: { 'content-type': 'application/json' } })) as typeof fetch;
const ask = (words: string) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: words }] }) });

describe('a fallback answer in the run summary', () => {
  it('quotes the request masked', async () => {
    const tape = join(dir, 'deploy.tape');
    const rec = openTestTape({ tape, mode: 'record', test: 'deploy', file: 'deploy.test.ts', runDir: join(dir, 'run-rec'), fetch: upstream, failOnMiss: false });
    await (await rec.fetch('https://api.openai.com/v1/chat/completions', ask(`deploy with ${RECORDED}`))).text();
    await rec.close();

    const runDir = join(dir, 'run');
    const play = openTestTape({ tape, mode: 'replay', match: 'signature', test: 'deploy', file: 'deploy.test.ts', runDir, failOnMiss: false });
    const res = await play.fetch('https://api.openai.com/v1/chat/completions', ask(`please deploy with ${SENT}`));
    expect(res.status).toBe(200);
    await res.text();
    await play.close();
    const text = formatSummary(await summarizeRun(readTapeReports(runDir)), { root: dir });
    expect(text).toContain('by signature');
    expect(text).not.toContain(SENT.slice(8, 28));
    expect(text).not.toContain(RECORDED.slice(8, 28));
    // The two keys differ, so do their masks; the words around them are what else differs.
    expect(text).toMatch(/request: +"please deploy with \[REDACTED:[0-9a-f]{16}\]"/);
  });

  it('the same key on both sides shows one mask, the word that changed being the difference', async () => {
    const tape = join(dir, 'same.tape');
    const rec = openTestTape({ tape, mode: 'record', test: 'same', file: 'same.test.ts', runDir: join(dir, 'run-rec2'), fetch: upstream, failOnMiss: false });
    await (await rec.fetch('https://api.openai.com/v1/chat/completions', ask(`deploy with ${RECORDED}`))).text();
    await rec.close();
    const runDir = join(dir, 'run2');
    const play = openTestTape({ tape, mode: 'replay', match: 'signature', test: 'same', file: 'same.test.ts', runDir, failOnMiss: false });
    await (await play.fetch('https://api.openai.com/v1/chat/completions', ask(`please deploy with ${RECORDED}`))).text();
    await play.close();
    const text = formatSummary(await summarizeRun(readTapeReports(runDir)), { root: dir });
    expect(text).not.toContain(RECORDED.slice(8, 28));
    const masks = [...text.matchAll(/\[REDACTED:([0-9a-f]{16})\]/g)].map((m) => m[1]);
    expect(masks.length).toBe(2);
    expect(masks[0]).toBe(masks[1]);
  });
});
