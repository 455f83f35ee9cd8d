// The Redis record layout on a real redis-server, single node and a 3-master cluster: ordered
// repeats, byte-exact payloads, one hash slot per request key, TTLs, namespaces, concurrent
// writers, and the failure paths (down at start, wrong password, lost mid-run), with the
// password never in any error.
import { Packr } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { collectionKeyOf, RedisRecords } from '../../src/store/backends/redis.ts';
import { maskRedisUrl, parseRedisUrl } from '../../src/store/backends/redis-connection.ts';
import { rawCommand } from './harness.mjs';
import { freshNamespace, redisDescribe, rejectedWith, useRedis, useRedisCluster } from './setup.ts';

const packr = new Packr({ useRecords: false, variableMapSize: true });
const payload = (v: unknown) => new Uint8Array(packr.pack(v));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Everything an error exposes to a user or a log. */
const exposed = (e: TapedeckError) => `${e.message}\n${e.hint ?? ''}\n${JSON.stringify(e.details)}\n${e.stack ?? ''}`;

describe('Redis URLs', () => {
  it('masks the password and keeps the rest', () => {
    expect(maskRedisUrl('redis://app:hunter2@cache:6379/0')).toBe('redis://app:***@cache:6379/0');
    expect(maskRedisUrl('rediss://:p%40ss@cache:6380/1?namespace=x')).toBe('rediss://:***@cache:6380/1?namespace=x');
    expect(maskRedisUrl('redis://cache:6379')).toBe('redis://cache:6379');
    // Not a URL at all: the credential part is still masked.
    expect(maskRedisUrl('redis://u:pw@@bad host')).not.toContain('pw@');
  });

  it('parses user, password, database and TLS', () => {
    const t = parseRedisUrl('rediss://app:s%3Acret@cache.internal:6380/2');
    expect(t).toMatchObject({ host: 'cache.internal', port: 6380, database: 2, username: 'app', password: 's:cret', tls: true });
    expect(t.masked).not.toContain('cret');
  });

  it('refuses other schemes and paths, without echoing the password', () => {
    for (const bad of ['http://u:topsecret@h:1', 'redis://u:topsecret@h:1/notadb', 'redis://:topsecret@']) {
      let err: unknown;
      try {
        parseRedisUrl(bad);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(TapedeckError);
      expect((err as TapedeckError).code).toBe('E_ARG');
      expect(exposed(err as TapedeckError)).not.toContain('topsecret');
    }
  });
});

function layoutSuite(label: string, server: () => { url: string }) {
  it(`${label}: ordered repeats come back byte for byte, filed by collection key`, async () => {
    const store = await RedisRecords.open(server().url, { namespace: freshNamespace('order') });
    try {
      const recs = [0, 1, 2, 3, 4].map((i) => payload({ v: 1, kind: 'http', key: i % 2 ? 'k-odd' : 'k-even', n: i, body: new Uint8Array([i, 0, 255]) }));
      const seqs = await store.append(recs.map((p) => ({ key: collectionKeyOf(p), payload: p })));
      expect(seqs).toEqual([seqs[0], seqs[0]! + 1, seqs[0]! + 2, seqs[0]! + 3, seqs[0]! + 4]);
      const even = await store.read('http:k-even');
      expect(even.map((r) => Buffer.from(r.payload))).toEqual([recs[0], recs[2], recs[4]].map((p) => Buffer.from(p)));
      const all = await store.readAll();
      expect(all.map((r) => Buffer.from(r.payload))).toEqual(recs.map((p) => Buffer.from(p)));
      expect(await store.keys()).toEqual(['http:k-even', 'http:k-odd']);
      expect(await store.remove('http:k-even', [seqs[2]!])).toBe(1);
      expect((await store.read('http:k-even')).map((r) => r.seq)).toEqual([seqs[0], seqs[4]]);
    } finally {
      await store.close();
    }
  });

  it(`${label}: namespaces do not see each other`, async () => {
    const a = await RedisRecords.open(server().url, { namespace: freshNamespace('a') });
    const b = await RedisRecords.open(`${server().url}?namespace=${freshNamespace('b')}`);
    try {
      const p = payload({ v: 1, key: 'same' });
      await a.append([{ key: collectionKeyOf(p), payload: p }]);
      expect(await a.read('cache:same')).toHaveLength(1);
      expect(await b.read('cache:same')).toHaveLength(0);
      expect(await b.readAll()).toEqual([]);
      await a.clear();
      expect(await a.readAll()).toEqual([]);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it(`${label}: a record with a TTL disappears, one without stays`, async () => {
    const store = await RedisRecords.open(server().url, { namespace: freshNamespace('ttl') });
    try {
      const p1 = payload({ v: 1, key: 'short', n: 1 });
      const p2 = payload({ v: 1, key: 'short', n: 2 });
      const p3 = payload({ v: 1, key: 'long', n: 3 });
      await store.append([{ key: 'cache:short', payload: p1 }], { ttlMs: 1 });
      await store.append([{ key: 'cache:short', payload: p2 }]);
      await store.append([{ key: 'cache:long', payload: p3 }], { ttlMs: 3_600_000 });
      // The server clock decides; 1 ms has passed once the server has seen a later command.
      await sleep(20);
      expect((await store.read('cache:short')).map((r) => Buffer.from(r.payload))).toEqual([Buffer.from(p2)]);
      expect(await store.read('cache:long')).toHaveLength(1);
    } finally {
      await store.close();
    }
  });

  it(`${label}: 1 ms TTLs never outlive their records, whichever millisecond a write lands on`, async () => {
    // A write whose keys' expiry fell due between two commands of one script used to delete
    // one key and keep the other, leaving a record with no expiry that never went away. The
    // window is a fraction of a millisecond, so many writes are needed to land in it.
    const store = await RedisRecords.open(server().url, { namespace: freshNamespace('ttl-race') });
    try {
      const n = 3000;
      const kept = payload({ v: 1, kept: true });
      for (let i = 0; i < n; i++) {
        await store.append([{ key: `cache:k${i}`, payload: payload({ v: 1, i }) }], { ttlMs: 1 });
        await store.append([{ key: `cache:k${i}`, payload: kept }]);
      }
      await sleep(20);
      const outlived: number[] = [];
      for (let i = 0; i < n; i++) {
        const live = await store.read(`cache:k${i}`);
        if (live.length !== 1 || !Buffer.from(live[0]!.payload).equals(Buffer.from(kept))) outlived.push(i);
      }
      expect(outlived).toEqual([]);
    } finally {
      await store.close();
    }
  }, 60_000);

  it(`${label}: once every record of a request key has expired, the next full read drops it from the namespace index`, async () => {
    const store = await RedisRecords.open(server().url, { namespace: freshNamespace('trim') });
    try {
      const short = payload({ v: 1, key: 'short' });
      const kept = payload({ v: 1, key: 'kept' });
      const mixed = [payload({ v: 1, key: 'mixed', n: 1 }), payload({ v: 1, key: 'mixed', n: 2 })];
      await store.append([{ key: 'cache:short', payload: short }], { ttlMs: 1000 });
      await store.append([{ key: 'cache:kept', payload: kept }]);
      await store.append([{ key: 'cache:mixed', payload: mixed[0]! }], { ttlMs: 1000 });
      await store.append([{ key: 'cache:mixed', payload: mixed[1]! }]);
      expect(await store.keys()).toEqual(['cache:kept', 'cache:mixed', 'cache:short']);
      // Wait for Redis itself to drop the expired key (the records hash gets the last record's
      // expiry), however long the loaded machine takes: no fixed sleep decides the outcome.
      while ((await store.read('cache:short')).length > 0) await sleep(100);
      // mixed's first record was written after short's, so it can outlive it by the time a loaded
      // machine took between the two writes.
      while ((await store.read('cache:mixed')).length > 1) await sleep(100);
      // Nothing has trimmed the index yet: the listing is what a stale index looks like.
      expect(await store.keys()).toEqual(['cache:kept', 'cache:mixed', 'cache:short']);
      const all = await store.readAll();
      expect(all.map((r) => Buffer.from(r.payload))).toEqual([kept, mixed[1]!].map((p) => Buffer.from(p)));
      // The full read unlisted the key whose records are all gone, and kept the others.
      expect(await store.keys()).toEqual(['cache:kept', 'cache:mixed']);
      // A key written again after it was unlisted is listed again.
      await store.append([{ key: 'cache:short', payload: short }], { ttlMs: 60_000 });
      expect(await store.keys()).toEqual(['cache:kept', 'cache:mixed', 'cache:short']);
      await store.readAll();
      expect(await store.keys()).toEqual(['cache:kept', 'cache:mixed', 'cache:short']);
    } finally {
      await store.close();
    }
  });
}

redisDescribe('Redis records, single node', () => {
  const redis = useRedis();
  layoutSuite('single node', () => redis.current);

  it('every key of one request key lives in one hash slot; namespace keys in another', async () => {
    const ns = freshNamespace('slots');
    const store = await RedisRecords.open(redis.current.url, { namespace: ns });
    try {
      const slot = async (k: string) => (await rawCommand(redis.current.port, ['CLUSTER', 'KEYSLOT', k])).toString();
      // CLUSTER KEYSLOT works on a non-cluster server too: it is the hash function.
      const r = await slot(`${ns}:{${ns}:http:abc}:r`);
      expect(await slot(`${ns}:{${ns}:http:abc}:x`)).toBe(r);
      expect(await slot(`${ns}:{${ns}}:seq`)).toBe(await slot(`${ns}:{${ns}}:index`));
      // The layout the store really writes: the record hash exists under that name.
      const p = payload({ v: 1, kind: 'http', key: 'abc' });
      await store.append([{ key: collectionKeyOf(p), payload: p }]);
      expect(await rawCommand(redis.current.port, ['HLEN', `${ns}:{${ns}:http:abc}:r`])).toContain(':1');
    } finally {
      await store.close();
    }
  });

  it('a namespace written before the index existed (its keys in a plain set) is read whole, and its set moves into the index', async () => {
    const ns = freshNamespace('legacy');
    const port = redis.current.port;
    await rawCommand(port, ['SADD', `${ns}:{${ns}}:keys`, 'cache:old']);
    await rawCommand(port, ['HSET', `${ns}:{${ns}:cache:old}:r`, '1', 'old-bytes']);
    await rawCommand(port, ['SET', `${ns}:{${ns}}:seq`, '1']);
    const store = await RedisRecords.open(redis.current.url, { namespace: ns });
    try {
      expect((await store.readAll()).map((r) => [r.key, r.seq, r.payload.toString()])).toEqual([['cache:old', 1, 'old-bytes']]);
      expect(await rawCommand(port, ['EXISTS', `${ns}:{${ns}}:keys`])).toContain(':0');
      const p = payload({ v: 1, key: 'new' });
      await store.append([{ key: 'cache:new', payload: p }]);
      expect(await store.keys()).toEqual(['cache:new', 'cache:old']);
      expect((await store.readAll()).map((r) => r.seq)).toEqual([1, 2]);
    } finally {
      await store.close();
    }
  });

  it('several writers recording the same request at once: all kept, in one order, every record whole', async () => {
    const ns = freshNamespace('race');
    const writers = await Promise.all([0, 1, 2, 3].map(() => RedisRecords.open(redis.current.url, { namespace: ns })));
    const reader = await RedisRecords.open(redis.current.url, { namespace: ns });
    try {
      const big = 'x'.repeat(200_000); // large records make a torn read likely if one were possible
      let reading = true;
      const seen: number[] = [];
      const readerLoop = (async () => {
        while (reading) {
          const recs = await reader.read('cache:same');
          for (const r of recs) {
            const v = packr.unpack(r.payload) as { w: number; i: number; big: string };
            expect(v.big).toBe(big); // whole, never a prefix
          }
          seen.push(recs.length);
        }
      })();
      await Promise.all(
        writers.map(async (w, wi) => {
          for (let i = 0; i < 15; i++) {
            const p = payload({ v: 1, key: 'same', w: wi, i, big });
            await w.append([{ key: 'cache:same', payload: p }]);
          }
        }),
      );
      reading = false;
      await readerLoop;
      const all = await reader.read('cache:same');
      expect(all).toHaveLength(60);
      const values = all.map((r) => packr.unpack(r.payload) as { w: number; i: number });
      // Each writer's records keep its own order inside the one global order.
      for (const wi of [0, 1, 2, 3]) expect(values.filter((v) => v.w === wi).map((v) => v.i)).toEqual([...Array(15).keys()]);
      // Readers only ever saw whole records, and counts only grow.
      expect([...seen].sort((a, b) => a - b)).toEqual(seen);
      // Two readers agree on the order.
      const again = await writers[0]!.read('cache:same');
      expect(again.map((r) => r.seq)).toEqual(all.map((r) => r.seq));
    } finally {
      for (const w of writers) await w.close();
      await reader.close();
    }
  });
});

redisDescribe('Redis records, 3-master cluster', () => {
  const cluster = useRedisCluster();
  layoutSuite('cluster', () => cluster.current);

  it('spreads request keys over the masters and still reads all of them back in order', async () => {
    const store = await RedisRecords.open(cluster.current.url, { namespace: freshNamespace('spread') });
    try {
      expect(store.cluster).toBe(true);
      const recs = Array.from({ length: 60 }, (_, i) => payload({ v: 1, kind: 'http', key: `key-${i}`, n: i }));
      await store.append(recs.map((p) => ({ key: collectionKeyOf(p), payload: p })));
      const all = await store.readAll();
      expect(all.map((r) => Buffer.from(r.payload))).toEqual(recs.map((p) => Buffer.from(p)));
      // Every master holds some of them.
      const perNode = await Promise.all(cluster.current.nodes.map(async (n: { port: number }) => Number(/:(\d+)/.exec(await rawCommand(n.port, ['DBSIZE']))![1])));
      for (const count of perNode) expect(count).toBeGreaterThan(0);
    } finally {
      await store.close();
    }
  });

  it('a cluster has only database 0', async () => {
    const e = await rejectedWith(RedisRecords.open(`${cluster.current.url}/3`));
    expect(e.code).toBe('E_ARG');
  });
});

redisDescribe('Redis faults', () => {
  const redis = useRedis({ user: 'app', password: 'pa55-w0rd!' });

  it('Redis down at start: E_STORE_UNAVAILABLE naming the masked URL and how to fix it', async () => {
    // A port nobody listens on: the server we started, on another port, proves nothing here.
    const url = 'redis://app:pa55-w0rd!@127.0.0.1:1/0';
    const e = await rejectedWith(RedisRecords.open(url, { connect: { connectTimeoutMs: 2000 } }));
    expect(e.code).toBe('E_STORE_UNAVAILABLE');
    expect(e.message).toContain('redis://app:***@127.0.0.1:1/0');
    expect(e.hint).toMatch(/redis-server --port 1/);
    expect(exposed(e)).not.toContain('pa55-w0rd!');
  });

  it('a wrong password: E_STORE_UNAVAILABLE with an auth hint, the password masked', async () => {
    const url = redis.current.url.replace('pa55-w0rd!', 'wrong-secret');
    expect(url).toContain('wrong-secret');
    const e = await rejectedWith(RedisRecords.open(url));
    expect(e.code).toBe('E_STORE_UNAVAILABLE');
    expect(e.hint).toMatch(/password/);
    expect(exposed(e)).not.toContain('wrong-secret');
    // The right one works (user + password from the URL).
    const ok = await RedisRecords.open(redis.current.url);
    await ok.close();
  });

  it('Redis lost mid-run: commands fail with E_STORE_UNAVAILABLE (masked); after a restart the store works again', async () => {
    const store = await RedisRecords.open(redis.current.url, { namespace: freshNamespace('lost') });
    try {
      const p = payload({ v: 1, key: 'k' });
      await store.append([{ key: 'cache:k', payload: p }]);
      await redis.current.kill();
      const e = await rejectedWith(store.read('cache:k'));
      expect(e.code).toBe('E_STORE_UNAVAILABLE');
      expect(e.message).toContain('redis://app:***@');
      expect(exposed(e)).not.toContain('pa55-w0rd!');
      const w = await rejectedWith(store.append([{ key: 'cache:k', payload: p }]));
      expect(w.code).toBe('E_STORE_UNAVAILABLE');
      await redis.current.restart();
      // The client reconnects on its own; the restarted server is empty (no persistence here).
      for (let i = 0; !store.ready && i < 200; i++) await sleep(25);
      expect(await store.read('cache:k')).toEqual([]);
      await store.append([{ key: 'cache:k', payload: p }]);
      expect(await store.read('cache:k')).toHaveLength(1);
    } finally {
      await store.close();
    }
  });
});

redisDescribe('TLS (rediss://)', () => {
  const redis = useRedis({ password: 'tls-s3cret', tls: true });

  it('connects over TLS with the server CA, and refuses an untrusted certificate with the password masked', async () => {
    expect(redis.current.url).toMatch(/^rediss:\/\//);
    const store = await RedisRecords.open(redis.current.url, { namespace: freshNamespace('tls'), connect: { tls: { ca: redis.current.ca } } });
    try {
      const p = payload({ v: 1, key: 'k', secret: false });
      await store.append([{ key: 'cache:k', payload: p }]);
      expect((await store.read('cache:k')).map((r) => Buffer.from(r.payload))).toEqual([Buffer.from(p)]);
    } finally {
      await store.close();
    }
    // Without the CA the self-signed chain is not trusted: a clear error, never the password.
    const e = await rejectedWith(RedisRecords.open(redis.current.url, { connect: { connectTimeoutMs: 3000 } }));
    expect(e.code).toBe('E_STORE_UNAVAILABLE');
    expect(e.message).toMatch(/certificate/i);
    expect(e.message).toContain('rediss://:***@127.0.0.1');
    expect(exposed(e)).not.toContain('tls-s3cret');
    // A plain redis:// client against the TLS port fails cleanly too.
    const plain = await rejectedWith(RedisRecords.open(redis.current.url.replace('rediss:', 'redis:'), { connect: { connectTimeoutMs: 2000 } }));
    expect(plain.code).toBe('E_STORE_UNAVAILABLE');
    expect(exposed(plain)).not.toContain('tls-s3cret');
  });
});
