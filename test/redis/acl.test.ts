// An application's Redis user without @dangerous and @admin (`+@all -@dangerous -@admin`), as
// docs/redis.md says works: it connects (INFO is refused to it, CLUSTER INFO tells the server
// kind), records and replays. A disabled user is told once, in one sentence.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ReplayCache } from '../../src/store/replay-cache.ts';
import { startRedis } from './harness.mjs';
import { freshNamespace, redisDescribe, type Server } from './setup.ts';

redisDescribe('a Redis ACL user without @dangerous and @admin', () => {
  let redis: Server;
  beforeAll(async () => {
    redis = await startRedis({
      args: ['--user', 'app', 'on', '>app-pa55', '~*', '&*', '+@all', '-@dangerous', '-@admin', '--user', 'gone', 'off', '>gone-pa55', '~*', '+@all'],
    });
  }, 60_000);
  afterAll(() => redis?.stop());

  it('connects, records and replays', async () => {
    const store = `redis://app:app-pa55@127.0.0.1:${redis.port}/0?namespace=${freshNamespace('acl')}`;
    const req = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] };
    const w = await ReplayCache.open(store, { mode: 'record' });
    await w.put(req, { text: 'recorded' });
    await w.close();
    const r = await ReplayCache.open(store, { mode: 'replay' });
    expect(await r.get(req)).toEqual({ text: 'recorded' });
    await r.close();
  });

  it('a disabled user: E_STORE_UNAVAILABLE, one full stop, the password masked', async () => {
    const err = await ReplayCache.open(`redis://gone:gone-pa55@127.0.0.1:${redis.port}/0`, { mode: 'replay' }).then(
      () => undefined,
      (e: Error & { code?: string }) => e,
    );
    expect(err?.code).toBe('E_STORE_UNAVAILABLE');
    expect(err?.message).toContain('user is disabled. Check the user name');
    expect(err?.message).not.toContain('..');
    expect(err?.message).not.toContain('gone-pa55');
  });
});
