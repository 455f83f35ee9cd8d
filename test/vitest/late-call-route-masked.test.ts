// A call made after its test ended is listed in the run summary by its method and URL path,
// which were the path as sent: a Telegram bot token in `/bot<id>:<token>/sendMessage` went to
// the CI log there, though every miss masks it. The summary's route is masked as a miss's is.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openTestTape } from '../../src/testing/session.ts';
import { formatSummary, readTapeReports, summarizeRun } from '../../src/testing/run-report.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-late-masked-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const BOT = '123456789:AAHk3xQ9vLmP2wR7tYabcdefghijklmnopq';

describe('a late call in the run summary', () => {
  it('names its route with the secret in its path masked', async () => {
    const runDir = join(dir, 'run');
    const tape = openTestTape({ tape: join(dir, 'late.tape'), mode: 'replay', test: 'bot > replies', file: 'bot.test.ts', runDir, failOnMiss: false });
    await tape.close();
    const res = await tape.fetch(`https://api.telegram.org/bot${BOT}/sendMessage`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"chat_id":1,"text":"hi"}' });
    expect(res.status).toBe(400);
    await res.text();
    const text = formatSummary(await summarizeRun(readTapeReports(runDir)), { root: dir });
    expect(text).toContain('made after the test ended');
    expect(text).not.toContain('AAHk3x');
    expect(text).toMatch(/bot > replies: POST \/bot\S*REDACTED\S*\/sendMessage: made after the test ended/);
  });
});
