// A cluster with one master lost (cluster-require-full-coverage no): an append of records under
// many request keys rejected as a whole (E_STORE_UNAVAILABLE), yet the records of the keys on
// the live masters were stored; a caller retrying the put then added second recordings, which
// replay serves in turn. The backend contract says a rejected append wrote nothing: the records
// it did write are now removed again before it rejects.
import { expect, it } from 'vitest';
import { RedisRecords } from '../../src/store/backends/redis.ts';
import { rawCommand } from './harness.mjs';
import { freshNamespace, redisDescribe, useRedisCluster } from './setup.ts';

redisDescribe('an append on a cluster that lost a master', () => {
  const cluster = useRedisCluster();

  it('rejects, and leaves none of its records on the live masters', async () => {
    const namespace = freshNamespace('partial');
    const nodes = cluster.current.nodes;
    for (const n of nodes) await rawCommand(n.port, ['CONFIG', 'SET', 'cluster-require-full-coverage', 'no']);
    // The namespace's own keys stay up: another master is lost.
    const replies = await Promise.all(nodes.map((n) => rawCommand(n.port, ['GET', `${namespace}:{${namespace}}:seq`])));
    const owner = replies.findIndex((r) => !r.startsWith('-MOVED'));
    const victim = (owner + 1) % nodes.length;
    const store = await RedisRecords.open(cluster.current.url, { namespace, connect: { commandTimeoutMs: 2000 } });
    try {
      const items = Array.from({ length: 30 }, (_, i) => ({ key: `cache:k${i}`, payload: Buffer.from([0x91, i]) }));
      await store.append([items[0]!]);
      await store.remove('cache:k0', (await store.read('cache:k0')).map((r) => r.seq));
      await cluster.current.killNode(victim);
      await expect(store.append(items)).rejects.toMatchObject({ code: 'E_STORE_UNAVAILABLE' });
      let live = 0;
      let kept = 0;
      for (const it of items) {
        const recs = await store.read(it.key).catch(() => undefined);
        if (recs === undefined) continue;
        live++;
        kept += recs.length;
      }
      expect(live).toBeGreaterThan(0);
      expect(kept).toBe(0);
    } finally {
      await store.close().catch(() => {});
    }
  }, 90_000);
});
