// `tapedeck verify <redis-url>` said "ok" (exit 0) for a namespace holding a record of a newer
// record version (a newer tapedeck in the fleet wrote it), which replay then fails on; verify of
// a tape lists such a record as a problem (exit 1). Now the namespace's check does too.
import { expect, it } from 'vitest';
import { RedisBackend } from '../../src/store/backends/redis-backend.ts';
import { freshNamespace, redisDescribe, useRedis, verifyNamespace } from './setup.ts';


redisDescribe('verify on a namespace with a record of a newer record version', () => {
  const redis = useRedis();

  it('lists it as E_TAPE_VERSION with the upgrade, and exits 1', async () => {
    const namespace = freshNamespace('newer-record');
    const backend = new RedisBackend(redis.current.url, { namespace });
    try {
      await backend.load({ create: true });
      await backend.append([{ v: 1, kind: 'http', key: 'a'.repeat(64), request: {}, response: {} }]);
      await backend.append([{ v: 5, kind: 'http', key: 'b'.repeat(64), request: {}, response: {} }]);
    } finally {
      await backend.close();
    }
    const { code, out } = await verifyNamespace(redis.current.url, namespace);
    expect(code, out).toBe(1);
    expect(out).toMatch(/E_TAPE_VERSION at record \d+: record \d+ under http:bbbb/);
    expect(out).toContain('record version 5');
    expect(out).toContain('upgrade tapedeck');
    expect(out).not.toMatch(/^ok$/m);
  });
});
