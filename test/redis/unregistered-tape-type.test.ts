// A Redis namespace holding a value of a registerTapeType class this process has not registered:
// the replay that would hand it over gets E_TAPE_TYPE naming the type (as from a tape file), not a
// stand-in object where the program expects its class and not E_TAPE_DAMAGED.
import { expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { ReplayCache } from '../../src/store/replay-cache.ts';
import { unregisteredValue } from '../../src/store/unregistered-type.ts';
import { freshNamespace, redisDescribe, useRedis } from './setup.ts';

redisDescribe('a value of a class not registered, on Redis', () => {
  const redis = useRedis();

  it('replay gets E_TAPE_TYPE naming the type', async () => {
    const store = `${redis.current.url}?namespace=${freshNamespace('unregistered-type')}`;
    const question = { model: 'm', messages: [{ role: 'user', content: 'price' }] };
    // Written as the class's own writer writes it (D4 07 00, then its data); no class of
    // type 7 is registered in this process.
    const w = await ReplayCache.open(store, { mode: 'record' });
    await w.put(question, { price: unregisteredValue(7, ['EUR', 12.5]) });
    await w.close();

    const r = await ReplayCache.open(store, { mode: 'replay' });
    try {
      const err = await r.get(question).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(TapedeckError);
      expect((err as TapedeckError).code).toBe('E_TAPE_TYPE');
      expect((err as TapedeckError).message).toContain('type 7');
    } finally {
      await r.close();
    }
  });
});
