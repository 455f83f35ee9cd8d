// Redis without persistence restarted while a run records: the namespace comes back empty, the
// next append puts its header back, and the recordings the run had already made (acknowledged
// as recorded) are gone. That was silent; the run now warns, once, through its warning channel,
// saying how many of its recordings are gone and how to avoid it.
import { expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { RedisBackend } from '../../src/store/backends/redis-backend.ts';
import { startUpstream } from '../proxy/fake-upstream.ts';
import { freshNamespace, redisDescribe, useRedis } from './setup.ts';

const record = (i: number) => ({ v: 1, kind: 'http', key: `k${i}`, body: `answer ${i}` });

/** Retries `f` while the client reconnects after the restart (commands fail at once meanwhile). */
async function once<T>(f: () => Promise<T>): Promise<T> {
  for (let i = 0; ; i++) {
    try {
      return await f();
    } catch (e) {
      if (i > 100 || (e as { code?: string }).code !== 'E_STORE_UNAVAILABLE') throw e;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

redisDescribe('a Redis restart without persistence during a run', () => {
  const redis = useRedis();

  it('the backend warns once that the namespace was emptied and how many of its recordings are gone', async () => {
    const backend = new RedisBackend(redis.current.url, { namespace: freshNamespace('emptied') });
    const said: string[] = [];
    backend.onWarning = (m) => said.push(m);
    try {
      await backend.load({ create: true });
      await backend.append([record(1), record(2)]);
      await backend.append([record(3)]);
      expect(said).toEqual([]);
      await redis.current.restart();
      await once(() => backend.append([record(4)]));
      await backend.append([record(5)]);
      expect(said).toHaveLength(1);
      expect(said[0]).toContain('the namespace was emptied since this run opened (Redis restarted without persistence?): 3 recordings this run made are gone; enable persistence (appendonly yes) or re-record.');
      expect(said[0]).toContain(backend.location);
    } finally {
      await backend.close();
    }
  }, 60_000);

  it('createFetch in update mode: the warning reaches onWarning', async () => {
    const store = `${redis.current.url}?namespace=${freshNamespace('emptied-fetch')}`;
    const up = await startUpstream();
    const said: string[] = [];
    const f = createFetch({ store, mode: 'update', onWarning: (m) => said.push(m), summary: false });
    const call = (content: string) =>
      f(`${up.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] }),
      }).then(async (r) => {
        await r.text();
        return r.status;
      });
    try {
      expect(await call('one')).toBe(200);
      expect(await call('two')).toBe(200);
      await redis.current.restart();
      // The client reconnects in the background: a call made before it has is a 503.
      for (let i = 0; (await call(`three-${i}`)) !== 200; i++) {
        expect(i).toBeLessThan(100);
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(await call('four')).toBe(200);
    } finally {
      await f.close();
      await up.close();
    }
    const emptied = said.filter((m) => m.includes('the namespace was emptied since this run opened'));
    expect(emptied).toHaveLength(1);
    expect(emptied[0]).toContain('2 recordings this run made are gone');
  }, 60_000);
});
