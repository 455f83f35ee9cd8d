// A replayer repeating a request whose namespace held one recording of it never served the next
// recording another process made of it (docs/redis.md, "A fleet": within 250 ms); it served the
// old one forever. Here the other process is an update run with strictOrder (its call past the
// end is recorded as the key's next recording) and a record run re-recording the key.
import { expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startUpstream } from '../proxy/fake-upstream.ts';
import { freshNamespace, redisDescribe, useRedis } from './setup.ts';

const CHAT = '/v1/chat/completions';
const JSON_TYPE = { 'content-type': 'application/json' };
const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'count' }] });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function id(f: typeof fetch, base: string): Promise<string> {
  const r = await f(`${base}${CHAT}`, { method: 'POST', headers: JSON_TYPE, body });
  expect(r.status).toBe(200);
  return ((await r.json()) as { id: string }).id;
}

redisDescribe('a replayer repeating a key recorded once', () => {
  const redis = useRedis();

  it('serves the next recording another process made of it (an update run with strictOrder)', async () => {
    const store = `${redis.current.url}?namespace=${freshNamespace('fleet-one')}`;
    const up = await startUpstream();
    const first = createFetch({ store, mode: 'record' });
    const r1 = await id(first, up.url);
    await first.close();
    const a = createFetch({ store, mode: 'replay' });
    try {
      expect([await id(a, up.url), await id(a, up.url), await id(a, up.url)]).toEqual([r1, r1, r1]);
      const other = createFetch({ store, mode: 'update', strictOrder: true });
      expect(await id(other, up.url)).toBe(r1);
      const r2 = await id(other, up.url);
      expect(r2).not.toBe(r1);
      await other.close();
      await sleep(300);
      expect(await id(a, up.url)).toBe(r2);
      expect(await id(a, up.url)).toBe(r2);
    } finally {
      await a.close();
      await up.close();
    }
  });

  it('serves the recording a record run made in place of the one it replaced', async () => {
    const store = `${redis.current.url}?namespace=${freshNamespace('fleet-rerecord')}`;
    const up = await startUpstream();
    const first = createFetch({ store, mode: 'record' });
    const r1 = await id(first, up.url);
    await first.close();
    const a = createFetch({ store, mode: 'replay' });
    try {
      expect([await id(a, up.url), await id(a, up.url)]).toEqual([r1, r1]);
      const again = createFetch({ store, mode: 'record' });
      const r2 = await id(again, up.url);
      await again.close();
      await sleep(300);
      expect(await id(a, up.url)).toBe(r2);
    } finally {
      await a.close();
      await up.close();
    }
  });
});
