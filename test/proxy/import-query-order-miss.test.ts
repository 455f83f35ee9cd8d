// A GET imported from a HAR as `?limit=5&order=asc` is found by its query as sent, in its order
// (tapes already made keep replaying, so the key stays so). A client that sends the same
// parameters in another order (`URLSearchParams({ order, limit })`) misses, and the miss said
// `query differs:  for GET /v1/models`: an empty list, as the parameters compared equal by name
// and value. It now says the difference is the order, shows both queries and what to do.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { importRecordings } from '../../src/proxy/import.ts';
import { createFetch } from '../../src/proxy/fetch.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-import-query-order-miss-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const answer = JSON.stringify({ object: 'list', data: [{ id: 'gpt-4o-mini', object: 'model' }] });
const har = join(dir, 'order.har');
writeFileSync(
  har,
  JSON.stringify({
    log: {
      version: '1.2',
      creator: { name: 'Playwright', version: '1.65.2' },
      entries: [
        {
          startedDateTime: '2026-12-07T03:41:50.496Z',
          time: 5,
          request: { method: 'GET', url: 'https://api.openai.com/v1/models?limit=5&order=asc', httpVersion: 'HTTP/1.1', cookies: [], headers: [], queryString: [{ name: 'limit', value: '5' }, { name: 'order', value: 'asc' }], headersSize: -1, bodySize: 0 },
          response: { status: 200, statusText: 'OK', httpVersion: 'HTTP/1.1', cookies: [], headers: [{ name: 'content-type', value: 'application/json' }], content: { size: answer.length, mimeType: 'application/json', text: answer }, redirectURL: '', headersSize: -1, bodySize: -1 },
          cache: {},
          timings: { send: 0, wait: 1, receive: 0 },
        },
      ],
    },
  }),
);

describe('a GET recorded with its query parameters in one order, sent in another', () => {
  it('replays as recorded, and the miss for another order names the order and both queries', async () => {
    const tape = join(dir, 'order.tape');
    await importRecordings(har, tape);
    const f = createFetch({ tape, mode: 'replay' });
    try {
      const same = await f('https://api.openai.com/v1/models?limit=5&order=asc');
      expect(same.status).toBe(200);
      expect(await same.text()).toBe(answer);

      const other = await f(`https://api.openai.com/v1/models?${new URLSearchParams({ order: 'asc', limit: '5' }).toString()}`);
      const text = await other.text();
      expect(other.status).not.toBe(200);
      expect(text).not.toContain('query differs:  for');
      expect(text).toContain('only in the order of its parameters');
      expect(text).toContain('?order=asc&limit=5');
      expect(text).toContain('?limit=5&order=asc');

      // A real difference is still named as it was.
      const desc = await (await f('https://api.openai.com/v1/models?limit=5&order=desc')).text();
      expect(desc).toContain('query differs: order=desc vs order=asc in the recordings for GET /v1/models');
    } finally {
      await f.close();
    }
  });
});
