// Redaction never merges two requests, on Redis: the namespace's header carries the redaction
// salt (made once, by whichever writer creates the namespace), so every proxy of a fleet masks a
// live request as its recording was masked. Single node and a 3-master cluster.
import { expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { RedisBackend } from '../../src/store/backends/redis-backend.ts';
import { RedisRecords } from '../../src/store/backends/redis.ts';
import { allValues, checkDistinct } from '../proxy/distinct-masks.ts';
import { OAUTH_TOKENS, startUpstream } from '../proxy/fake-upstream.ts';
import { ReplayCache } from '../../src/store/replay-cache.ts';
import { freshNamespace, redisDescribe, useRedis, useRedisCluster } from './setup.ts';

async function storedBytes(store: string): Promise<Buffer> {
  const r = await RedisRecords.open(store);
  try {
    return Buffer.concat([(await r.header()) ?? Buffer.alloc(0), ...(await r.readAll()).map((x) => x.payload)]);
  } finally {
    await r.close();
  }
}

function suite(name: string, url: () => string): void {
  it(`${name}: each masked value replays its own answer, credentials share one; writers agree on one salt`, async () => {
    const store = `${url()}?namespace=${freshNamespace('masks')}`;
    // Two writers opening a fresh namespace at once end up with the same salt.
    const [a, b] = [new RedisBackend(store), new RedisBackend(store)];
    await Promise.all([a.load({ create: true }), b.load({ create: true })]);
    expect(a.salt).toMatch(/^[0-9a-f]{32}$/);
    expect(b.salt).toBe(a.salt);
    await Promise.all([a.close(), b.close()]);
    const up = await startUpstream();
    try {
      await checkDistinct(up.url, createFetch({ store, mode: 'record' }), () => createFetch({ store, mode: 'replay' }));
    } finally {
      await up.close();
    }
    const bytes = await storedBytes(store);
    for (const v of allValues()) expect(bytes.includes(Buffer.from(v)), v).toBe(false);
    expect(/\[REDACTED:[0-9a-f]{16}\]/.test(bytes.toString('latin1'))).toBe(true);
  });

  it(`${name}: a two-chunk OAuth answer and a ReplayCache raw body reach the store redacted`, async () => {
    const store = `${url()}?namespace=${freshNamespace('secrets')}`;
    const up = await startUpstream();
    try {
      const f = createFetch({ store, mode: 'record' });
      await (await f(`${up.url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=client_credentials' })).text();
      await f.close();
    } finally {
      await up.close();
    }
    const raw = 'raw-cluster-access-token-Vw2Xy5Za8';
    const cache = await ReplayCache.open(store, { mode: 'record' });
    await cache.put({ model: 'm', messages: [{ role: 'user', content: 'raw' }] }, { ok: 1 }, { raw: { body: JSON.stringify({ refresh_token: raw }) } });
    await cache.close();
    const bytes = await storedBytes(store);
    for (const s of [...Object.values(OAUTH_TOKENS), raw]) expect(bytes.includes(Buffer.from(s)), s).toBe(false);
  });
}

redisDescribe('masked values on Redis, single node', () => {
  const redis = useRedis();
  suite('single node', () => redis.current.url);
});

redisDescribe('masked values on Redis, 3-master cluster', () => {
  const cluster = useRedisCluster();
  suite('cluster', () => cluster.current.url);
});
