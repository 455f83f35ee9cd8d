// A record whose TTL passes is not served any more, also by a proxy or createFetch that loaded
// it before (docs/redis.md, "TTL"): an LLM request (through the matcher, and its fast path for
// repeated bodies) and a plain JSON request (by key).
import { expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { startUpstream } from '../proxy/fake-upstream.ts';
import { freshNamespace, redisDescribe, useRedis } from './setup.ts';

const requests = [
  { path: '/v1/chat/completions', body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'short-lived' }] }) },
  { path: '/v1/echo', body: JSON.stringify({ q: 'short-lived' }) },
];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

redisDescribe('records with a TTL', () => {
  const redis = useRedis();
  it('are served until their TTL passes, then are misses, by a proxy and a createFetch that loaded them before', async () => {
    const up = await startUpstream();
    const store = `${redis.current.url}/0?namespace=${freshNamespace('ttl-serve')}&ttl=2`;
    const rec = createFetch({ store, mode: 'record' });
    for (const r of requests) expect((await rec(`${up.url}${r.path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: r.body })).status).toBe(200);
    await rec.close();
    await up.close();
    const proxy = await startProxy({ store, mode: 'replay', port: 0, onWarning: () => {} });
    const f = createFetch({ store, mode: 'replay', onWarning: () => {} });
    try {
      const ask = async (r: (typeof requests)[number]) => [
        (await fetch(`${proxy.url}${r.path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: r.body })).status,
        // On the host they were recorded for (a loopback host's port is not compared).
        (await f(`http://127.0.0.1:9${r.path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: r.body })).status,
      ];
      for (const r of requests) expect(await ask(r)).toEqual([200, 200]);
      for (const r of requests) expect(await ask(r)).toEqual([200, 200]); // repeats, the fast path
      await sleep(2300);
      for (const r of requests) expect(await ask(r), r.path).toEqual([400, 400]);
    } finally {
      await proxy.close();
      await f.close();
    }
  }, 30_000);
});
