// createFetch's close summary in replay mode when a recording in the namespace is damaged: it
// said "(1 answer not recorded)", though replay records nothing. It says the call was answered
// with an error because its recording is damaged.
import { expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { RedisRecords } from '../../src/store/backends/redis.ts';
import { startUpstream } from '../proxy/fake-upstream.ts';
import { rawCommand } from './harness.mjs';
import { freshNamespace, redisDescribe, useRedis } from './setup.ts';

redisDescribe('replay summary with a damaged recording', () => {
  const redis = useRedis();

  it('says the call met a damaged recording, not that an answer was not recorded', async () => {
    const ns = freshNamespace('summary-damage');
    const store = `${redis.current.url}?namespace=${ns}`;
    const up = await startUpstream();
    const call = (f: typeof fetch, content: string) =>
      f(`${up.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] }),
      });
    try {
      const rec = createFetch({ store, mode: 'record', summary: false });
      expect((await call(rec, 'damaged')).status).toBe(200);
      expect((await call(rec, 'intact')).status).toBe(200);
      await rec.close();
    } finally {
      await up.close();
    }
    const r = await RedisRecords.open(store);
    const all = await r.readAll();
    await r.close();
    const { key: ckey, seq } = all[0]!;
    await rawCommand(redis.current.port, ['HSET', `${ns}:{${ns}:${ckey}}:r`, String(seq), 'garbage-not-msgpack']);

    const said: string[] = [];
    const rep = createFetch({ store, mode: 'replay', onWarning: () => {}, summary: (t) => said.push(t) });
    const res = await call(rep, 'damaged');
    await res.text();
    expect(res.headers.get('x-tapedeck-error')).toBe('E_TAPE_DAMAGED');
    expect((await call(rep, 'intact')).status).toBe(200);
    await rep.close();
    expect(said).toHaveLength(1);
    const line = said[0]!.split('\n')[0]!;
    expect(line).toContain('(replay): 1 replayed, 0 recordings added, 1 call answered with an error (damaged recording), 0 misses');
    expect(line).not.toContain('not recorded');
  });
});
