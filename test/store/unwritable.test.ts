// Update mode on a tape this process cannot write to (a read-only checkout): what is recorded is
// served, and only a request that would need recording fails, saying why. Record mode, which
// writes whatever it is asked, still fails as it opens.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-unwritable-'));
afterAll(() => {
  chmodSync(join(dir, 'ro'), 0o755);
  rmSync(dir, { recursive: true, force: true });
});

const chat = (text: string) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }] }) });
const answer = (async () => new Response('{"id":"c1","object":"chat.completion","choices":[]}', { headers: { 'content-type': 'application/json' } })) as typeof fetch;
const URL_ = 'https://api.openai.com/v1/chat/completions';

describe('update mode on a tape this process cannot write to', () => {
  it('serves what is recorded; a request that needs recording fails with why; record mode fails at open', async () => {
    const ro = join(dir, 'ro');
    mkdirSync(ro);
    const tape = join(ro, 'chat.tape');
    const rec = createFetch({ tape, mode: 'record', fetch: answer, summary: false });
    await (await rec(URL_, chat('Hi'))).text();
    await rec.close();
    // The directory made read-only where that binds; root writes anyway, so there the place the
    // writer registers in is taken by a file (the same E_TAPE_IO at open).
    chmodSync(ro, 0o555);
    if (process.getuid?.() === 0) writeFileSync(`${tape}.writers`, '');

    const f = createFetch({ tape, mode: 'update', fetch: answer, summary: false });
    try {
      const hit = await f(URL_, chat('Hi'));
      expect(hit.status).toBe(200);
      expect(hit.headers.get('x-tapedeck-match')).toBe('exact');
      const miss = await f(URL_, chat('Something new'));
      expect(miss.status).toBeGreaterThanOrEqual(500);
      const body = (await miss.json()) as { error: { message: string } };
      expect(body.error.message).toMatch(/registering this writer in .*chat\.tape\.writers failed/);
    } finally {
      await f.close();
    }

    const r = createFetch({ tape, mode: 'record', fetch: answer, summary: false });
    try {
      const res = await r(URL_, chat('Hi'));
      expect(res.status).toBe(500);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('E_TAPE_IO');
    } finally {
      await r.close();
    }
  });
});
