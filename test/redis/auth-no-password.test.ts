// A password in the URL for a Redis that has none set: Redis answers AUTH with "ERR AUTH
// <password> called without any password configured for the default user", which was not taken
// for a refusal of the credentials: the error said to start Redis and check the firewall (Redis
// had answered), and was retried as a 503. Now it gets the credentials hint, as a lasting error.
import { expect, it } from 'vitest';
import { ReplayCache } from '../../src/store/replay-cache.ts';
import { freshNamespace, redisDescribe, rejectedWith, useRedis } from './setup.ts';

redisDescribe('a password given for a Redis without one', () => {
  const redis = useRedis();

  it('is refused with the credentials hint, not the one for a server that is down', async () => {
    const url = redis.current.url.replace('redis://', 'redis://:not-the-pass@');
    const e = await rejectedWith(ReplayCache.open(`${url}/0?namespace=${freshNamespace('nopass')}`, { mode: 'replay' }));
    expect(e.code).toBe('E_STORE_UNAVAILABLE');
    expect(e.message).not.toContain('not-the-pass');
    expect(e.hint).not.toMatch(/Start Redis|firewall/);
    expect(e.hint).toMatch(/no password/i);
    expect(e.hint).toContain('password');
    expect(e.details.lasting).toBe(true);
  });
});
