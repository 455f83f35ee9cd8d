// A fleet: a replay proxy started before the recordings were made (its store empty, or missing,
// when it opened) serves what another proxy records later, found by the request key. A request
// that differs from those recordings used to be told "holds no recordings (the URL, database or
// namespace may be wrong)" or "the store has no HTTP recordings", which sent the user hunting
// for a wrong URL; a proxy started later said what differed from the closest recording. Now
// both say that. Real redis-server, the real openai client, the fake provider.
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { RedisRecords } from '../../src/store/backends/redis.ts';
import { recordBytes } from '../../src/store/tape-file.ts';
import { startUpstream, type Upstream } from '../proxy/fake-upstream.ts';
import { freshNamespace, redisDescribe, useRedis } from './setup.ts';

let up: Upstream;
beforeAll(async () => {
  up = await startUpstream();
});
afterAll(() => up?.close());

const ask = (client: OpenAI, content: string) => client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] }).then((r) => r.choices[0]!.message.content);

/** What the replay proxy started on `store` before anything was recorded says of "Hellp", once "Hello" was recorded by another writer. */
async function lateMiss(store: string): Promise<{ served: string | null; miss: string }> {
  const proxy = await startProxy({ store, mode: 'replay', port: 0, onWarning: () => {} });
  try {
    const rec = createFetch({ store, mode: 'record', summary: false, onWarning: () => {} });
    const recorded = await ask(new OpenAI({ baseURL: `${up.url}/v1`, apiKey: 'sk-test', maxRetries: 0, fetch: rec }), 'Hello');
    await rec.close();
    const client = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: 'sk-test', maxRetries: 0 });
    const served = await ask(client, 'Hello');
    expect(served).toBe(recorded);
    const e = await ask(client, 'Hellp').then(
      () => undefined,
      (x: unknown) => x as Error,
    );
    expect(e, 'the changed request was answered').toBeInstanceOf(Error);
    return { served, miss: e!.message };
  } finally {
    await proxy.close();
  }
}

redisDescribe('a replay proxy started before its fleet recorded', () => {
  const redis = useRedis();

  it('the namespace did not exist when it opened: a miss names the difference from the closest recording', async () => {
    const { miss } = await lateMiss(`${redis.current.url}/0?namespace=${freshNamespace('late-missing')}`);
    expect(miss).toContain('tapedeck miss');
    expect(miss).not.toContain('holds no recordings');
    expect(miss).toContain('differs from the closest recording');
    expect(miss).toContain('"Hellp"');
  });

  it('the namespace existed with no HTTP recordings: the same', async () => {
    const ns = freshNamespace('late-empty');
    const made = await RedisRecords.open(redis.current.url, { namespace: ns });
    await made.setHeaderIfAbsent(recordBytes.header());
    await made.close();
    const { miss } = await lateMiss(`${redis.current.url}/0?namespace=${ns}`);
    expect(miss).not.toContain('has no HTTP recordings');
    expect(miss).toContain('differs from the closest recording');
  });
});
