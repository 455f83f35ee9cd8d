// A 3-master cluster that serves with a master down (`cluster-require-full-coverage no`): a new
// process opening a namespace there waited out the whole connect deadline ("connect timed out
// after 6000 ms"), though the namespace's own master and two of three masters answered: the
// cluster client connected to every master before anything else. It now learns the cluster's
// layout and connects to a master when a key of its slots is asked: the open fails only if a
// record it must read is on the master that is down, and then names that master.
import { expect, it } from 'vitest';
import { RedisRecords } from '../../src/store/backends/redis.ts';
import { ReplayCache } from '../../src/store/replay-cache.ts';
import { rawCommand } from './harness.mjs';
import { freshNamespace, redisDescribe, useRedisCluster } from './setup.ts';

redisDescribe('opening a namespace on a cluster with a master down', () => {
  const cluster = useRedisCluster();

  it('is told at once, naming the master that is down, not as a connect timeout', async () => {
    const c = cluster.current;
    for (const n of c.nodes) expect(await rawCommand(n.port, ['CONFIG', 'SET', 'cluster-require-full-coverage', 'no'])).toMatch(/OK/);
    // A namespace whose own keys are on the third master (not the one killed below).
    let namespace = '';
    for (let i = 0; i < 1000 && !namespace; i++) {
      const ns = freshNamespace('lost-master');
      if (!/MOVED/.test(await rawCommand(c.nodes[2]!.port, ['GET', `{${ns}}`]))) namespace = ns;
    }
    expect(namespace).not.toBe('');
    const url = `${c.nodes[2]!.url}/0?namespace=${namespace}`;
    const rec = await ReplayCache.open(url, { mode: 'record' });
    try {
      for (let i = 0; i < 30; i++) await rec.put({ prompt: `q${i}` }, { answer: `a${i}` });
    } finally {
      await rec.close();
    }
    await c.killNode(0);
    const started = Date.now();
    let e: { code?: string; message: string } | undefined;
    let listed = -1;
    try {
      const store = await RedisRecords.open(url, { namespace, connect: { connectTimeoutMs: 6000, commandTimeoutMs: 1500 } });
      try {
        // The namespace's own keys answer; a record on the master that is down does not.
        listed = (await store.keys()).length;
        await store.readAll();
      } finally {
        await store.close();
      }
    } catch (x) {
      e = x as { code?: string; message: string };
    }
    expect(listed).toBe(30);
    const took = Date.now() - started;
    expect(e?.code, e?.message).toBe('E_STORE_UNAVAILABLE');
    expect(e!.message).not.toContain('connect timed out');
    expect(e!.message).toContain(`127.0.0.1:${c.nodes[0]!.port}`);
    // The command deadline (1.5 s), not the connect deadline (6 s), bounds it.
    expect(took).toBeLessThan(5500);
  }, 60_000);
});
