// rediss:// to a server whose certificate comes from a private CA not given to Node: the error
// said "Start Redis there ... check the host, port and firewall" for a healthy server. It now says
// how to trust the CA (NODE_EXTRA_CA_CERTS, or connect: { tls: { ca } }). Real redis-server with TLS.
import { expect, it } from 'vitest';
import { RedisRecords } from '../../src/store/backends/redis.ts';
import { redisDescribe, rejectedWith, useRedis } from './setup.ts';

redisDescribe('rediss:// to a server with a certificate from a private CA', () => {
  const redis = useRedis({ tls: true });

  it('not trusted: the fix is to trust the CA, not to start Redis', async () => {
    const e = await rejectedWith(RedisRecords.open(`${redis.current.url}/0`, { connect: { connectTimeoutMs: 3000 } }));
    expect(e.code).toBe('E_STORE_UNAVAILABLE');
    expect(e.hint).toContain('NODE_EXTRA_CA_CERTS');
    expect(e.hint).toContain('connect: { tls: { ca');
    expect(e.hint).not.toContain('Start Redis');
    // Given the CA, it connects.
    await (await RedisRecords.open(`${redis.current.url}/0`, { connect: { tls: { ca: redis.current.ca } } })).close();
  });
});
