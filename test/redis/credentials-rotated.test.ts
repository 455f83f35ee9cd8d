// Redis rejecting the store's credentials while it is open (the password rotated, the ACL
// changed): node-redis reconnects in the background, each attempt refused with WRONGPASS, and
// every command fails at once with "The client is offline". Before, that was all the error
// said, with the hint to start a Redis that was running. Now the refusal the reconnect met is
// the cause, with the hint to check the credentials, as at start. A real redis-server.
import { expect, it } from 'vitest';
import { RedisRecords } from '../../src/store/backends/redis.ts';
import { TapedeckError } from '../../src/errors.ts';
import { rawCommand } from './harness.mjs';
import { freshNamespace, redisDescribe, useRedis } from './setup.ts';

redisDescribe('the password rotated while the store is open', () => {
  const redis = useRedis({ password: 'old-pa55' });

  it('a command says the credentials were refused, not that Redis is down', async () => {
    const port = redis.current.port;
    const store = await RedisRecords.open(`redis://:old-pa55@127.0.0.1:${port}/0`, { namespace: freshNamespace('rotated') });
    try {
      await store.append([{ key: 'cache:a', payload: new Uint8Array([1, 2, 3]) }]);
      await rawCommand(port, ['CONFIG', 'SET', 'requirepass', 'new-pa55'], { password: 'old-pa55' });
      // Drops every client: the store's connection reconnects with the old password.
      await rawCommand(port, ['CLIENT', 'KILL', 'TYPE', 'normal'], { password: 'new-pa55' });
      // Commands fail while the reconnects are refused; asked until a reconnect has been refused.
      let last: TapedeckError | undefined;
      for (let i = 0; i < 60; i++) {
        const e = await store.read('cache:a').then(
          () => undefined,
          (x: unknown) => x as TapedeckError,
        );
        expect(e, 'a command succeeded with the old password').toBeInstanceOf(TapedeckError);
        last = e;
        if (/WRONGPASS/.test(e!.message)) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(last?.code).toBe('E_STORE_UNAVAILABLE');
      expect(last?.message).toContain('WRONGPASS');
      expect(last?.hint).toContain('Check the user name and password');
      expect(last?.hint).not.toContain('Start Redis');
      expect(last?.message).not.toContain('old-pa55');
    } finally {
      await store.close();
    }
  });
});
