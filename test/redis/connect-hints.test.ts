// What a Redis URL that cannot work on this server is told: rediss:// to a server that does not
// speak TLS waited for the connect timeout and then said to start Redis and to "use rediss://",
// which the user had; a database the server does not have (`/16`) read as an unreachable server
// with the same hint. Real redis-server (plain, no TLS).
import { expect, it } from 'vitest';
import { RedisRecords } from '../../src/store/backends/redis.ts';
import { redisDescribe, rejectedWith, useRedis } from './setup.ts';

redisDescribe('Redis URLs the server cannot serve', () => {
  const redis = useRedis();

  it('rediss:// to a plain server: the TLS handshake went unanswered, so write redis://', async () => {
    const url = `rediss://127.0.0.1:${redis.current.port}/0`;
    const e = await rejectedWith(RedisRecords.open(url, { connect: { connectTimeoutMs: 1000 } }));
    expect(e.code).toBe('E_STORE_UNAVAILABLE');
    expect(e.hint).toContain(`did not answer the TLS handshake: it may not speak TLS. For a plain Redis write redis://127.0.0.1:${redis.current.port}`);
    expect(e.hint).not.toContain('Start Redis');
    expect(e.hint).not.toContain('use rediss://');
  });

  it('a database the server does not have: E_ARG saying how many it has, not "start Redis"', async () => {
    const e = await rejectedWith(RedisRecords.open(`${redis.current.url}/16`));
    expect(e.code).toBe('E_ARG');
    expect(e.message).toContain(`redis://127.0.0.1:${redis.current.port}/16: database 16 does not exist on this server (it has 16 databases, numbered 0 to 15 by its databases setting)`);
    expect(e.hint).toContain('namespace');
    expect(e.hint).not.toContain('Start Redis');
    // One it has still opens.
    await (await RedisRecords.open(`${redis.current.url}/15`)).close();
  });
});
