// A long-running replay proxy serves the later recordings another proxy makes of a key it has
// already served to its last known one (docs/redis.md, "A fleet"): past its last known
// recording, it asks the store before repeating the last one. On a real redis-server.
import { expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startUpstream } from '../proxy/fake-upstream.ts';
import { freshNamespace, redisDescribe, useRedis } from './setup.ts';

const CHAT = '/v1/chat/completions';
const JSON_TYPE = { 'content-type': 'application/json' };
const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'count' }] });

async function id(f: typeof fetch, base: string): Promise<string> {
  const r = await f(`${base}${CHAT}`, { method: 'POST', headers: JSON_TYPE, body });
  expect(r.status).toBe(200);
  return ((await r.json()) as { id: string }).id;
}

redisDescribe('a replay proxy and a recording proxy on one namespace', () => {
  const redis = useRedis();

  it('past the last known recording, the replay proxy serves the ones recorded since, in turn', async () => {
    const store = `${redis.current.url}?namespace=${freshNamespace('fleet-repeat')}`;
    const up = await startUpstream();
    // Record mode: every call is recorded, as proxy B's were in the trial.
    const writer = createFetch({ store, mode: 'record' });
    const a = createFetch({ store, mode: 'replay' });
    try {
      const r5 = await id(writer, up.url);
      const r6 = await id(writer, up.url);
      // Replayed on the host they were recorded for (a replay sends nothing there).
      expect([await id(a, up.url), await id(a, up.url), await id(a, up.url)]).toEqual([r5, r6, r6]);
      const r7 = await id(writer, up.url);
      // A repeat asks the store at most every 250 ms (a key repeated in a loop does not wait on
      // Redis each time): the next repeat after that finds r7.
      await new Promise((r) => setTimeout(r, 300));
      expect(await id(a, up.url)).toBe(r7);
      expect(await id(a, up.url)).toBe(r7);
    } finally {
      await a.close();
      await writer.close();
      await up.close();
    }
  });
});
