// A Redis that stops answering (SIGSTOP: the socket stays open, nothing comes back) never hangs a
// request: every store command on the request path has a deadline (commandTimeoutMs), and the
// caller's AbortSignal ends the wait at once (docs/redis.md, "Failure behaviour").
import { afterEach, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { RedisBackend } from '../../src/store/backends/redis-backend.ts';
import { startUpstream, type Upstream } from '../proxy/fake-upstream.ts';
import { freshNamespace, redisDescribe, useRedis } from './setup.ts';

const ask = (f: typeof fetch, base: string, content: string, signal?: AbortSignal) =>
  f(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] }),
    ...(signal ? { signal } : {}),
  });

/** How a call settled, and after how long. */
async function settle(p: Promise<Response>): Promise<{ ms: number; status?: number; body?: string; thrown?: string }> {
  const t0 = Date.now();
  try {
    const r = await p;
    return { ms: Date.now() - t0, status: r.status, body: await r.text() };
  } catch (e) {
    return { ms: Date.now() - t0, thrown: (e as Error).message };
  }
}

redisDescribe('a frozen Redis (SIGSTOP)', () => {
  const redis = useRedis();
  let up: Upstream | undefined;
  let frozen = false;
  const freeze = () => {
    process.kill(redis.current.pid!, 'SIGSTOP');
    frozen = true;
  };
  afterEach(async () => {
    if (frozen) process.kill(redis.current.pid!, 'SIGCONT');
    frozen = false;
    await up?.close();
    up = undefined;
  });

  for (const mode of ['replay', 'update'] as const) {
    it(`${mode}: a request not in memory fails within the deadline, and an abort ends it at once`, async () => {
      up = await startUpstream();
      const namespace = freshNamespace(`frozen-${mode}`);
      const seed = createFetch({ store: `${redis.current.url}?namespace=${namespace}`, mode: 'update' });
      expect((await settle(ask(seed, up.url, 'seed'))).status).toBe(200);
      await seed.close();
      const f = createFetch({ store: new RedisBackend(redis.current.url, { namespace, connect: { commandTimeoutMs: 800 } }), mode });
      expect((await settle(ask(f, up.url, 'seed'))).status).toBe(200);
      freeze();
      const late = await settle(ask(f, up.url, 'not recorded'));
      expect(late.ms).toBeLessThan(4000);
      expect(late.status).toBe(503);
      expect(late.body).toMatch(mode === 'replay' ? /E_STORE_UNAVAILABLE/ : /E_RECORD_FAILED/);
      expect(late.body).toMatch(/did not answer within 800 ms/);
      const ac = new AbortController();
      setTimeout(() => ac.abort(new Error('client gave up')), 200);
      const aborted = await settle(ask(f, up.url, 'not recorded either', ac.signal));
      expect(aborted.thrown).toBe('client gave up');
      expect(aborted.ms).toBeLessThan(700);
      process.kill(redis.current.pid!, 'SIGCONT');
      frozen = false;
      await f.close();
    }, 30_000);
  }

  it('frozen before the first connection: the abort is honoured, and the call still settles', async () => {
    freeze();
    const f = createFetch({ store: `${redis.current.url}?namespace=${freshNamespace('frozen-open')}`, mode: 'replay' });
    const ac = new AbortController();
    setTimeout(() => ac.abort(new Error('client gave up')), 300);
    const aborted = await settle(ask(f, 'http://api.test', 'hi', ac.signal));
    expect(aborted.thrown).toBe('client gave up');
    expect(aborted.ms).toBeLessThan(1000);
    const late = await settle(ask(f, 'http://api.test', 'hi'));
    expect(late.status).toBe(503);
    expect(late.body).toMatch(/E_STORE_UNAVAILABLE/);
    process.kill(redis.current.pid!, 'SIGCONT');
    frozen = false;
    await f.close();
  }, 30_000);
});
