// A store that connects but then fails to open (an ACL user that may connect but not run the
// scripts tapedeck needs) must let go of its connection: the open's error went to the caller,
// and a socket left open kept the process (a CI job) alive for ever instead of failing it.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { ReplayCache } from '../../src/store/replay-cache.ts';
import { rawCommand, startRedis } from './harness.mjs';
import { freshNamespace, redisDescribe, rejectedWith, type Server } from './setup.ts';

/** How many connections of `user` the server has, once they settle (a close takes a moment to arrive). */
async function connectionsOf(port: number, user: string): Promise<number> {
  let n = -1;
  for (let i = 0; i < 40; i++) {
    n = (await rawCommand(port, ['CLIENT', 'LIST'])).split('\n').filter((l) => l.includes(` user=${user} `)).length;
    if (n === 0) return 0;
    await new Promise((r) => setTimeout(r, 50));
  }
  return n;
}

redisDescribe('a store that connects and then fails to open', () => {
  let redis: Server;
  beforeAll(async () => {
    redis = await startRedis({
      // `noscript` may connect but not EVAL; `readonly` may only read (EVAL_RO, not EVAL).
      args: ['--user', 'noscript', 'on', '>nsp', '~*', '&*', '+@all', '-@scripting', '--user', 'readonly', 'on', '>rop', '~*', '&*', '+@read', '+eval_ro', '+evalsha_ro', '+info', '+cluster', '+select', '+ping', '+client'],
    });
  }, 60_000);
  afterAll(() => redis?.stop());

  it('ReplayCache.open: NOPERM, and no connection is left open', async () => {
    const store = `redis://noscript:nsp@127.0.0.1:${redis.port}/0?namespace=${freshNamespace('noperm')}`;
    const err = await rejectedWith(ReplayCache.open(store, { mode: 'replay' }));
    expect(err.code).toBe('E_STORE_UNAVAILABLE');
    expect(err.message).toContain('NOPERM');
    expect(await connectionsOf(redis.port, 'noscript')).toBe(0);
  });

  it('ReplayCache.open in record mode (the writer registers first): no connection is left open', async () => {
    const store = `redis://readonly:rop@127.0.0.1:${redis.port}/0?namespace=${freshNamespace('noperm-rec')}`;
    const err = await rejectedWith(ReplayCache.open(store, { mode: 'record' }));
    expect(err.code).toBe('E_STORE_UNAVAILABLE');
    expect(await connectionsOf(redis.port, 'readonly')).toBe(0);
  });

  // A 400, not a 503: an ACL refusal answers every call the same, and the AI SDK retries any 5xx.
  it('createFetch: the call gets 400, close() resolves, and no connection is left open', async () => {
    const store = `redis://readonly:rop@127.0.0.1:${redis.port}/0?namespace=${freshNamespace('noperm-fetch')}`;
    const f = createFetch({ store, mode: 'replay', summary: false });
    const res = await f('http://127.0.0.1:9/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'acl' }] }) });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('NOPERM');
    await f.close();
    expect(await connectionsOf(redis.port, 'readonly')).toBe(0);
  });
});
