// A cluster with a master down: the error names the node that did not answer when it is known,
// and never tells the user to start Redis on the node the URL names, which is up.
import { expect, it } from 'vitest';
import { RedisRecords } from '../../src/store/backends/redis.ts';
import { redisDescribe, useRedisCluster } from './setup.ts';

redisDescribe('a 3-master cluster with a master killed', () => {
  const cluster = useRedisCluster();

  it('connecting through a live node: E_STORE_UNAVAILABLE that does not blame that node', async () => {
    await cluster.current.killNode(0);
    const [down, up] = [cluster.current.nodes[0]!.port, cluster.current.nodes[1]!.port];
    const err = await RedisRecords.open(`redis://127.0.0.1:${up}/0`, { connect: { connectTimeoutMs: 2000 } }).then(
      async (s) => {
        try {
          await s.readAll();
          await s.append([{ key: 'cache:x', payload: Buffer.from([0x80]) }]);
          for (let i = 0; i < 50; i++) await s.read(`cache:k${i}`);
          return undefined;
        } finally {
          await s.close();
        }
      },
      (e: Error) => e,
    ).catch((e: Error) => e);
    expect(err).toMatchObject({ code: 'E_STORE_UNAVAILABLE' });
    expect(err!.message).not.toContain(`redis-server --port ${up}`);
    // The node that is down, when the client said which; else no node is blamed.
    expect(err!.message).toMatch(new RegExp(`Start Redis on 127\\.0\\.0\\.1:${down}|A node of the Redis Cluster did not answer \\(not necessarily 127\\.0\\.0\\.1:${up}`));
  }, 60_000);
});
