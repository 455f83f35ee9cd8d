// The library entry points on a real Redis: ReplayCache.open(url) and createFetch({ store }),
// record in one instance, replay in another, with ordered repeats and redaction before a byte
// reaches Redis.
import OpenAI from 'openai';
import { expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { RedisRecords } from '../../src/store/backends/redis.ts';
import { ReplayCache } from '../../src/store/replay-cache.ts';
import { OAUTH_TOKENS, startUpstream } from '../proxy/fake-upstream.ts';
import { rawCommand } from './harness.mjs';
import { freshNamespace, redisDescribe, useRedis } from './setup.ts';

const SECRET = 'sk-proj-' + 'Zz9yXx8wVv7uTt6sRr5qPp4oNn3mLl2kJj1iHh0G';

/** Every payload byte stored in the namespace, to look for secrets. */
async function allBytes(store: string): Promise<Buffer> {
  const r = await RedisRecords.open(store);
  try {
    return Buffer.concat((await r.readAll()).map((x) => x.payload));
  } finally {
    await r.close();
  }
}

redisDescribe('ReplayCache and createFetch on Redis', () => {
  const redis = useRedis();

  it('ReplayCache: record in one cache, replay in another, repeats in order, secrets masked', async () => {
    const store = `${redis.current.url}?namespace=${freshNamespace('cache')}`;
    const req = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }], api_key: SECRET };
    const w = await ReplayCache.open(store, { mode: 'record' });
    await w.put(req, { text: 'first' });
    await w.put(req, { text: 'second' });
    await w.close();
    const r = await ReplayCache.open(store, { mode: 'replay' });
    expect(await r.get(req)).toEqual({ text: 'first' });
    expect(await r.get(req)).toEqual({ text: 'second' });
    await r.close();
    const bytes = await allBytes(store);
    expect(bytes.length).toBeGreaterThan(0);
    expect(bytes.includes(Buffer.from(SECRET))).toBe(false);
  });

  it('ReplayCache: the last of three recordings malformed: the 3rd get is E_TAPE_DAMAGED, not a miss; so is the only one', async () => {
    const ns = freshNamespace('damaged-last');
    const store = `${redis.current.url}?namespace=${ns}`;
    const req = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] };
    const w = await ReplayCache.open(store, { mode: 'record' });
    for (const text of ['first', 'second', 'third']) await w.put(req, { text });
    await w.put({ ...req, model: 'gpt-4o' }, { text: 'other' });
    const lonely = { ...req, model: 'gpt-4.1' };
    await w.put(lonely, { text: 'only one' });
    await w.close();
    const r0 = await RedisRecords.open(store);
    const ckey = `cache:${w.cacheKey(req)}`;
    const [, , third] = await r0.read(ckey);
    const [only] = await r0.read(`cache:${w.cacheKey(lonely)}`);
    await r0.close();
    await rawCommand(redis.current.port, ['HSET', `${ns}:{${ns}:${ckey}}:r`, String(third!.seq), 'not a record']);
    await rawCommand(redis.current.port, ['HSET', `${ns}:{${ns}:cache:${w.cacheKey(lonely)}}:r`, String(only!.seq), 'not a record']);
    const r = await ReplayCache.open(store, { mode: 'replay' });
    try {
      expect(await r.get(req)).toEqual({ text: 'first' });
      expect(await r.get(req)).toEqual({ text: 'second' });
      await expect(r.get(req)).rejects.toMatchObject({ code: 'E_TAPE_DAMAGED', details: { repeat: 2 } });
      expect(await r.get({ ...req, model: 'gpt-4o' })).toEqual({ text: 'other' });
      // Its only recording lost: Redis knows whose it was, so not a miss.
      await expect(r.get(lonely)).rejects.toMatchObject({ code: 'E_TAPE_DAMAGED', details: { repeat: 0 } });
    } finally {
      await r.close();
    }
  });

  it('createFetch({ store }): the OpenAI SDK records through one fetch and replays through another with the provider gone', async () => {
    const store = `${redis.current.url}?namespace=${freshNamespace('fetch')}`;
    const up = await startUpstream();
    const ask = async (f: typeof fetch) => {
      const client = new OpenAI({ apiKey: SECRET, baseURL: `${up.url}/v1`, fetch: f, maxRetries: 0 });
      const a = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello Redis' }] });
      const b = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello Redis' }] });
      return [a.id, b.id, a.choices[0]!.message.content];
    };
    const rec = createFetch({ store, mode: 'record' });
    const live = await ask(rec);
    await rec.close();
    expect(up.calls).toHaveLength(2);
    await up.close();
    const rep = createFetch({ store, mode: 'replay' });
    expect(await ask(rep)).toEqual(live);
    await rep.close();
    expect((await allBytes(store)).includes(Buffer.from(SECRET))).toBe(false);
  });

  it('secrets in a two-chunk JSON answer and in ReplayCache raw bytes never reach Redis', async () => {
    const store = `${redis.current.url}?namespace=${freshNamespace('raw')}`;
    const up = await startUpstream();
    const f = createFetch({ store, mode: 'record' });
    const r = await f(`${up.url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=client_credentials' });
    expect(JSON.parse(await r.text())).toMatchObject(OAUTH_TOKENS);
    await f.close();
    await up.close();
    const rawSecret = 'raw-redis-access-token-Pq8Rs1Tu4';
    const cache = await ReplayCache.open(store, { mode: 'record' });
    await cache.put({ model: 'm', messages: [{ role: 'user', content: 'raw' }] }, { ok: 1 }, { raw: { body: JSON.stringify({ access_token: rawSecret }), contentType: 'application/json' } });
    await cache.close();
    const bytes = await allBytes(store);
    for (const s of [...Object.values(OAUTH_TOKENS), rawSecret]) expect(bytes.includes(Buffer.from(s)), s).toBe(false);
  });

  it('a Redis URL that is down: createFetch answers with E_STORE_UNAVAILABLE, the password masked', async () => {
    const f = createFetch({ store: 'redis://u:hidden-pw@127.0.0.1:1/0', mode: 'replay' });
    // An HTTP error the SDK raises with this message (not retried: this fetch's store did not
    // open, and every call answers the same), not a
    // rejected fetch that SDKs report as a connection error.
    const r = await f('http://127.0.0.1:9/v1/chat/completions', { method: 'POST', body: '{}' });
    const text = await r.text();
    expect(r.status).toBe(503);
    expect(r.headers.get('x-tapedeck-error')).toBe('E_STORE_UNAVAILABLE');
    expect(text).toContain('redis://u:***@127.0.0.1:1/0');
    expect(text).not.toContain('hidden-pw');
    await expect(f.ready).rejects.toMatchObject({ code: 'E_STORE_UNAVAILABLE' });
    await f.close().catch(() => {});
  });
});
