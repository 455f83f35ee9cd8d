// A cluster slot being migrated (resharding): a multi-key script on it is answered TRYAGAIN
// while some of its keys have moved and some have not. That was taken for an unavailable store
// at once (answers fetched upstream were dropped with 503) and the hint said a node did not
// answer. Now the command is retried shortly, within its deadline; if the migration outlasts
// that, the error says the slot was being migrated, not that a node is down.
import { expect, it } from 'vitest';
import { RedisRecords, collectionKeyOf, recordKeys } from '../../src/store/backends/redis.ts';
import { Packr } from 'msgpackr';
import { rawCommand } from './harness.mjs';
import { freshNamespace, redisDescribe, rejectedWith, useRedisCluster } from './setup.ts';

const packr = new Packr({ useRecords: false, variableMapSize: true });

/** The bulk string of a raw RESP reply (`$n\r\n<text>\r\n`) as text. */
const bulk = (raw: string) => raw.replace(/^\$\d+\r\n/, '').replace(/\r\n$/, '');

redisDescribe('a cluster slot being migrated (TRYAGAIN)', () => {
  const cluster = useRedisCluster();

  /**
   * A namespace holding one record (no TTL: its hash exists, its expiry zset does not, so a
   * script given both keys gets TRYAGAIN on a migrating slot), and the slot put in the migrating
   * state towards another master. Returns the record's collection key and how to end the migration.
   */
  async function migrating(): Promise<{ ns: string; ckey: string; settle: () => Promise<void> }> {
    const ns = freshNamespace('migrate');
    const ports = cluster.current.nodes.map((n) => n.port);
    const store = await RedisRecords.open(cluster.current.url, { namespace: ns });
    const payload = Buffer.from(packr.pack({ v: 1, kind: 'http', key: `k-${ns}`, body: 'x' }));
    const ckey = collectionKeyOf(payload);
    try {
      await store.append([{ key: ckey, payload }]);
    } finally {
      await store.close();
    }
    const slot = Number(/:(\d+)/.exec(await rawCommand(ports[0]!, ['CLUSTER', 'KEYSLOT', recordKeys(ns, ckey)[0]]))![1]);
    const ids = await Promise.all(ports.map(async (p) => bulk(await rawCommand(p, ['CLUSTER', 'MYID']))));
    const nodes = bulk(await rawCommand(ports[0]!, ['CLUSTER', 'NODES']));
    const owner = nodes.split('\n').find((l) => l.split(' ').slice(8).some((r) => {
      const [a, b = a] = r.split('-').map(Number);
      return slot >= a! && slot <= b!;
    }))!.split(' ')[0]!;
    const from = ids.indexOf(owner);
    const to = (from + 1) % ids.length;
    await rawCommand(ports[to]!, ['CLUSTER', 'SETSLOT', String(slot), 'IMPORTING', ids[from]!]);
    await rawCommand(ports[from]!, ['CLUSTER', 'SETSLOT', String(slot), 'MIGRATING', ids[to]!]);
    const settle = async () => {
      await rawCommand(ports[from]!, ['CLUSTER', 'SETSLOT', String(slot), 'STABLE']);
      await rawCommand(ports[to]!, ['CLUSTER', 'SETSLOT', String(slot), 'STABLE']);
    };
    return { ns, ckey, settle };
  }

  it('a migration that ends within the deadline: the read is retried and succeeds', async () => {
    const { ns, ckey, settle } = await migrating();
    const store = await RedisRecords.open(cluster.current.url, { namespace: ns, connect: { commandTimeoutMs: 5000 } });
    try {
      const ended = new Promise<void>((resolve) => setTimeout(() => void settle().then(resolve), 300));
      const got = await store.read(ckey);
      expect(got).toHaveLength(1);
      await ended;
    } finally {
      await settle();
      await store.close();
    }
  }, 60_000);

  it('a migration that outlasts the deadline: E_STORE_UNAVAILABLE saying the slot was being migrated, no node blamed', async () => {
    const { ns, ckey, settle } = await migrating();
    const store = await RedisRecords.open(cluster.current.url, { namespace: ns, connect: { commandTimeoutMs: 600 } });
    try {
      const t0 = Date.now();
      const err = await rejectedWith(store.read(ckey));
      expect(Date.now() - t0).toBeGreaterThanOrEqual(300);
      expect(err.code).toBe('E_STORE_UNAVAILABLE');
      expect(err.message).toContain('TRYAGAIN');
      expect(err.details.hint).toContain('was being migrated');
      expect(err.details.hint).not.toMatch(/did not answer|Start Redis/);
    } finally {
      await settle();
      await store.close();
    }
  }, 60_000);
});
