// A test recording into a shared Redis store (TAPEDECK_STORE) again in record mode: its
// re-recordings are said re-recorded (replaced), as on tape files. Before, they were counted by
// reading the tape file before and after its writers closed, which a store has none of, so a
// Redis run said "added" for recordings that had replaced older ones. Now the writers' close
// says what it replaced, whatever the store.
import OpenAI from 'openai';
import { expect, it } from 'vitest';
import { openTestTape } from '../../src/testing/session.ts';
import { startUpstream } from '../proxy/fake-upstream.ts';
import { freshNamespace, redisDescribe, useRedis } from './setup.ts';

redisDescribe('re-recordings of a test on a Redis store', () => {
  const redis = useRedis();

  it('are counted in the test report, one per recording replaced', async () => {
    const up = await startUpstream();
    const store = `${redis.current.url}?namespace=${freshNamespace('rerecorded')}`;
    const run = async (texts: string[]) => {
      const t = openTestTape({ tape: 'test/__tapes__/chat.tape', store, mode: 'record', test: 'chat > asks' });
      const client = new OpenAI({ baseURL: `${up.url}/v1`, apiKey: 'sk-test', maxRetries: 0, fetch: t.fetch });
      for (const content of texts) await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] });
      return t.close();
    };
    try {
      expect((await run(['one'])).rerecorded).toBeUndefined();
      const again = await run(['one', 'one']);
      expect(again.added).toBe(2);
      expect(again.rerecorded).toBe(1);
    } finally {
      await up.close();
    }
  });
});
