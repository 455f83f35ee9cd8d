// Faults on demand on a shared Redis store: the fleet-aware decision behind a cut stream, the
// retry of a cut call getting the same recording, and not a byte written to the namespace.
import OpenAI from 'openai';
import { expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { RedisRecords } from '../../src/store/backends/redis.ts';
import { startUpstream } from '../proxy/fake-upstream.ts';
import { freshNamespace, redisDescribe, useRedis } from './setup.ts';

async function allBytes(store: string): Promise<Buffer> {
  const r = await RedisRecords.open(store);
  try {
    return Buffer.concat((await r.readAll()).map((x) => x.payload));
  } finally {
    await r.close();
  }
}

const story = (c: OpenAI) => c.chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'Stream me a story' }] });
async function text(s: AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>): Promise<string> {
  let out = '';
  for await (const c of s) out += c.choices[0]?.delta.content ?? '';
  return out;
}

redisDescribe('chaos on Redis', () => {
  const redis = useRedis();

  it('a cut stream throws, its retry gets the same recording whole; the namespace is untouched', async () => {
    const store = `${redis.current.url}?namespace=${freshNamespace('chaos')}`;
    const up = await startUpstream();
    const rec = createFetch({ store, mode: 'record' });
    const recorded = await text(await story(new OpenAI({ baseURL: `${up.url}/v1`, apiKey: 'sk-test', fetch: rec, maxRetries: 0 })));
    await rec.close();
    await up.close();
    const before = await allBytes(store);
    const play = createFetch({ store, mode: 'replay', chaos: { faults: { cut: 1 }, attempts: 1, seed: 2 } });
    try {
      // On the host it was recorded for, the fake provider's (a loopback host's port is not compared).
      const c = new OpenAI({ baseURL: 'http://127.0.0.1:9/v1', apiKey: 'sk-test', fetch: play, maxRetries: 0 });
      await expect(text(await story(c))).rejects.toThrow();
      expect(await text(await story(c))).toBe(recorded);
      expect((await play.stats()).faults).toEqual({ cut: 1 });
    } finally {
      await play.close();
    }
    expect((await allBytes(store)).equals(before)).toBe(true);
  });
});
