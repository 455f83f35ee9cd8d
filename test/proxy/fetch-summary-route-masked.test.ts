// createFetch's summary at close listed each miss by its method and URL path as sent, while the
// miss itself masks the path's secret: a Telegram bot token in `/bot<id>:<token>/sendMessage`
// went to the log through the summary. The summary's route is masked as the miss's is.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { formatFetchSummary } from '../../src/proxy/fetch-summary.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-summary-route-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const BOT = '123456789:AAHk3xQ9vLmP2wR7tYabcdefghijklmnopq';

describe("createFetch's summary: a miss's route", () => {
  it('masks a bot token in the path, as the miss does', async () => {
    let text = '';
    const f = createFetch({ tape: join(dir, 'none.tape'), mode: 'replay', summary: (t) => (text = t), onWarning: () => {} });
    const res = await f(`https://api.telegram.org/bot${BOT}/sendMessage`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"chat_id":1,"text":"hi"}' });
    const miss = await res.text();
    await f.close();
    expect(res.status).toBe(400);
    expect(miss).not.toContain('AAHk3x');
    expect(text).toContain('Misses:');
    expect(text).not.toContain('AAHk3x');
    expect(text).toMatch(/POST \/bot\S*REDACTED\S*\/sendMessage: /);
  });

  it('leaves a route without secrets as it is', () => {
    const text = formatFetchSummary({ tape: 't.tape', mode: 'replay', replayed: 0, added: 0, misses: [{ route: 'POST /v1/chat/completions', message: 'tapedeck miss: x' }], unused: 0 });
    expect(text).toContain('  POST /v1/chat/completions: tapedeck miss: x');
  });
});
