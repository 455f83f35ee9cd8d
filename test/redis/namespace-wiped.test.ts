// A record run whose Redis restarts without persistence (or is flushed) while it is open: the
// namespace loses its header, which holds the redaction salt the run masks secrets with. Before,
// the run went on recording without it: a new reader made a new salt, so every recording made
// after the restart whose request held a secret was a miss, though it had been told recorded.
// Now the run's next append puts its header back, and those recordings replay. A namespace made
// again meanwhile by another writer (another salt) refuses the run's records: nothing is told
// recorded that no reader could replay. Real redis-server (no persistence), the real openai client.
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startUpstream, type Upstream } from '../proxy/fake-upstream.ts';
import { startRedis } from './harness.mjs';
import { freshNamespace, redisDescribe } from './setup.ts';

// A prompt holding a key: masked on the tape with a mask keyed by the namespace's salt.
const SECRET_ASK = (n: number) => ({ model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: `use my key sk-proj-W1pedN4mespace${n}Secret0123456789abcd for this` }] });

let up: Upstream;
beforeAll(async () => {
  up = await startUpstream();
});
afterAll(async () => {
  await up?.close();
});

/**
 * The answer of a call made again until Redis is back: the client reconnects on its own, and a
 * call right after a restart may find it down (a 503, not recorded).
 */
async function onceBack<T>(call: () => Promise<T>): Promise<T> {
  for (let i = 0; ; i++) {
    try {
      return await call();
    } catch (e) {
      if (i >= 50) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** The fake's answer up to its echo of the prompt: `Echo N`, N counting the calls it answered. */
const headOf = (answer: string | null | undefined) => answer?.split(':')[0];
const client = (fetch: typeof globalThis.fetch) => new OpenAI({ apiKey: 'sk-test', baseURL: `${up.url}/v1`, fetch, maxRetries: 0 });
const ask = async (fetch: typeof globalThis.fetch, n: number) => (await client(fetch).chat.completions.create(SECRET_ASK(n))).choices[0]!.message.content;

/** Runs `body` on a fresh namespace of a Redis server of its own (one it may restart), then stops the server. */
async function onOwnRedis(name: string, body: (store: string, redis: Awaited<ReturnType<typeof startRedis>>) => Promise<void>): Promise<void> {
  const redis = await startRedis();
  try {
    await body(`${redis.url}?namespace=${freshNamespace(name)}`, redis);
  } finally {
    await redis.stop();
  }
}

/** What a replay of the store answers to prompt n, up to the echo (see headOf). */
async function replayedHead(store: string, n: number): Promise<string | undefined> {
  const play = createFetch({ store, mode: 'replay', summary: false, onWarning: () => {} });
  try {
    return headOf(await ask(play, n));
  } finally {
    await play.close();
  }
}

redisDescribe('a Redis namespace emptied while a record run is open', () => {
  it('restarted without persistence: what the run records after the restart replays, secrets and all', async () => {
    await onOwnRedis('wiped', async (store, redis) => {
      const rec = createFetch({ store, mode: 'record', summary: false, onWarning: () => {} });
      await ask(rec, 1);
      await redis.restart(); // empty: no persistence
      const after = await onceBack(() => ask(rec, 2));
      await rec.close();
      // The answer as recorded (its echo of the key masked on the tape, as every answer's is).
      expect(await replayedHead(store, 2)).toBe(headOf(after));
    });
  });

  it('made again by another writer meanwhile: the open run records nothing there, and says why', async () => {
    await onOwnRedis('remade', async (store, redis) => {
      const first = createFetch({ store, mode: 'record', summary: false, onWarning: () => {} });
      await ask(first, 1);
      await redis.restart();
      // Another run opens the emptied namespace first: it makes it again, with a salt of its own.
      const other = createFetch({ store, mode: 'record', summary: false, onWarning: () => {} });
      const theirs = await onceBack(() => ask(other, 3));
      // The first run's client reconnects on its own, later than the new run's may (a loaded
      // machine): while it is offline its call is the store's own 503, and is made again.
      const refused = await onceBack(async () => {
        const e = await ask(first, 2).then(() => undefined, (e: unknown) => e as Error & { status?: number });
        if (e?.message.includes('E_STORE_UNAVAILABLE')) throw e;
        return e;
      });
      expect(refused?.status).toBe(503);
      expect(refused?.message).toContain('could not be recorded');
      expect(refused?.message).toContain('was emptied and made again by another writer');
      await first.close().catch(() => {});
      await other.close();
      expect(await replayedHead(store, 3)).toBe(headOf(theirs));
    });
  });
});
