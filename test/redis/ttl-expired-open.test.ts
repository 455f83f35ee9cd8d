// Once every recording of a namespace has expired (`?ttl=` / `ttlMs`), a replay opened after
// (the next CI run a week later) missed with "the store has no HTTP recordings" and nothing said
// why; a ms/seconds mix-up (`ttlMs: 3600`) looked the same. Now the namespace notes that its
// recordings expired, and every replay opened on it is told, with the fix.
import { expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { RedisBackend } from '../../src/store/backends/redis-backend.ts';
import { startUpstream } from '../proxy/fake-upstream.ts';
import { freshNamespace, redisDescribe, useRedis } from './setup.ts';

const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] });

redisDescribe('a namespace whose recordings all expired', () => {
  const redis = useRedis();

  it('tells each replay opened on it that they expired, with the fix', async () => {
    const namespace = freshNamespace('expired');
    const up = await startUpstream();
    try {
      const rec = createFetch({ store: new RedisBackend(redis.current.url, { namespace, ttlMs: 300 }), mode: 'record' });
      expect((await rec(`${up.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })).status).toBe(200);
      await rec.close();
      await new Promise((r) => setTimeout(r, 800));
      for (let run = 0; run < 2; run++) {
        const warned: string[] = [];
        const replay = createFetch({ store: `${redis.current.url}?namespace=${namespace}`, mode: 'replay', onWarning: (m) => warned.push(m) });
        const r = await replay(`${up.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        expect(r.status).toBe(400);
        await r.text();
        await replay.close();
        const note = warned.find((m) => m.includes('expired'));
        expect(note, warned.join('\n')).toContain(`namespace ${namespace}`);
        expect(note).toContain('time to live');
        expect(note).toMatch(/re-record/i);
        // An expiry is no damage: no "damaged at byte" line.
        expect(warned.join('\n')).not.toContain('damaged at byte');
      }
    } finally {
      await up.close();
    }
  });

  it('a namespace that never held a recording is not said to have expired', async () => {
    const namespace = freshNamespace('never');
    const rec = createFetch({ store: `${redis.current.url}?namespace=${namespace}`, mode: 'record' });
    await rec.ready;
    await rec.close();
    const warned: string[] = [];
    const replay = createFetch({ store: `${redis.current.url}?namespace=${namespace}`, mode: 'replay', onWarning: (m) => warned.push(m) });
    await replay.ready;
    await replay.close();
    expect(warned.filter((m) => m.includes('expired'))).toEqual([]);
  });
});
