// A replay on a Redis namespace that holds nothing: in Redis a typo in the URL, the database or
// the namespace makes a new, empty namespace, so every request misses. The warning at open and
// each miss say that the URL, database or namespace may be wrong (the commands that read a
// namespace, pull and verify, say so too), not that a tape file is missing.
import OpenAI from 'openai';
import { expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { ReplayCache } from '../../src/store/replay-cache.ts';
import { startRedis } from './harness.mjs';
import { freshNamespace, redisDescribe } from './setup.ts';

redisDescribe('a replay on an empty Redis namespace', () => {
  it('warns at open and misses with: the URL, database or namespace may be wrong', async () => {
    const redis = await startRedis();
    try {
      const namespace = freshNamespace('typo');
      const warnings: string[] = [];
      const fetch = createFetch({ store: `${redis.url}?namespace=${namespace}`, mode: 'replay', onWarning: (m) => warnings.push(m) });
      try {
        const client = new OpenAI({ apiKey: 'sk-test', baseURL: 'http://127.0.0.1:9/v1', fetch, maxRetries: 0 });
        const err = (await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] }).catch((e: unknown) => e)) as { status?: number; message?: string };
        expect(err.status).toBe(400);
        expect(err.message).toContain(`namespace ${namespace}`);
        expect(err.message).toMatch(/holds no recordings \(the URL, database or namespace may be wrong\)/);
        expect(err.message).not.toMatch(/no tape at/);
      } finally {
        await fetch.close();
      }
      const all = warnings.join('\n');
      expect(all).toMatch(/holds no recordings \(the URL, database or namespace may be wrong\); every request will be a miss/);
    } finally {
      await redis.stop();
    }
  });

  it('a namespace holding other records only (a ReplayCache, MCP sessions): the miss says the store has no HTTP recordings, not that a tape has none', async () => {
    const redis = await startRedis();
    try {
      const store = `${redis.url}?namespace=${freshNamespace('cache-only')}`;
      const cache = await ReplayCache.open(store, { mode: 'record' });
      await cache.put({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'cached' }] }, { text: 'from the cache' });
      await cache.close();
      const fetch = createFetch({ store, mode: 'replay', onWarning: () => {} });
      try {
        const client = new OpenAI({ apiKey: 'sk-test', baseURL: 'http://127.0.0.1:9/v1', fetch, maxRetries: 0 });
        const err = (await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] }).catch((e: unknown) => e)) as { status?: number; message?: string };
        expect(err.status).toBe(400);
        expect(err.message).toContain('tapedeck miss: the store has no HTTP recordings');
        expect(err.message).not.toContain('the tape has no');
      } finally {
        await fetch.close();
      }
    } finally {
      await redis.stop();
    }
  });
});
