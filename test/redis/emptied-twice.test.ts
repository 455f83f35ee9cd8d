// A record run whose Redis is emptied twice (a restart without persistence, then another) warned
// only about the first: the recordings acknowledged after it and lost to the second went
// unreported, and the run closed as if they were recorded. Each emptying is now told, with the
// recordings lost to it (not again those told before).
import { expect, it } from 'vitest';
import { RedisBackend } from '../../src/store/backends/redis-backend.ts';
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

redisDescribe('a namespace emptied twice during one run', () => {
  const redis = useRedis();

  it('warns at each emptying, counting the recordings lost to it', async () => {
    const backend = new RedisBackend(redis.current.url, { namespace: freshNamespace('emptied-twice') });
    const said: string[] = [];
    backend.onWarning = (m) => said.push(m);
    try {
      await backend.load({ create: true });
      await backend.append([record(1)]);
      await redis.current.restart();
      await once(() => backend.append([record(2)]));
      await backend.append([record(3)]);
      expect(said).toHaveLength(1);
      expect(said[0]).toContain(': 1 recording this run made is gone');
      await redis.current.restart();
      await once(() => backend.append([record(4)]));
      expect(said).toHaveLength(2);
      // Records 2 and 3, acknowledged after the first warning; not record 1 again.
      expect(said[1]).toContain(': 2 recordings this run made are gone');
      expect(said[1]).toContain('the namespace was emptied');
    } finally {
      await backend.close();
    }
  }, 60_000);
});
