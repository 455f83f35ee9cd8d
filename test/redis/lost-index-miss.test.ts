// A namespace that lost its own keys (its master restarted without persistence) and, with them,
// one request's records: that request's miss said "The tape is damaged at byte 0: ... `tapedeck
// verify` shows the damage" (Redis has no bytes, and the namespace is no tape). It now says, in
// Redis terms, that the namespace lost its index and this request's recordings may have gone with
// it, and how to fix it (push the tape it was made from again, or re-record).
import { expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startUpstream } from '../proxy/fake-upstream.ts';
import { rawCommand } from './harness.mjs';
import { freshNamespace, redisDescribe, useRedis } from './setup.ts';

const ask = (f: typeof fetch, base: string, content: string) =>
  f(`${base}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] }) });

redisDescribe('a miss on a namespace that lost its index', () => {
  const redis = useRedis();
  const keysOf = async (ns: string) => (await rawCommand(redis.current.port, ['KEYS', `${ns}:*`])).split('\r\n').filter((l) => l.startsWith(`${ns}:`));

  it('names the lost index and its fix, not damage at a byte of a tape', async () => {
    const namespace = freshNamespace('lost-index');
    const store = `${redis.current.url}/0?namespace=${namespace}`;
    const up = await startUpstream();
    try {
      const first = createFetch({ store, mode: 'record' });
      expect((await ask(first, up.url, 'kept')).status).toBe(200);
      await first.close();
      const before = new Set(await keysOf(namespace));
      const second = createFetch({ store, mode: 'update' });
      expect((await ask(second, up.url, 'lost')).status).toBe(200);
      await second.close();
      // The namespace's own keys and the `lost` request's records go, as with a restarted master.
      const gone = (await keysOf(namespace)).filter((k) => !before.has(k) || k.startsWith(`${namespace}:{${namespace}}:`));
      await rawCommand(redis.current.port, ['DEL', ...gone]);
      const replay = createFetch({ store, mode: 'replay', onWarning: () => {} });
      try {
        const kept = await ask(replay, up.url, 'kept');
        expect(kept.status).toBe(200);
        await kept.text();
        const lost = await ask(replay, up.url, 'lost');
        expect(lost.status).toBe(400);
        const { error } = (await lost.json()) as { error: { message: string } };
        expect(error.message).not.toContain('damaged at byte');
        // Its headline said "the store has no HTTP recordings", in a run that had just served one.
        expect(error.message).not.toContain('has no HTTP recordings');
        expect(error.message).toMatch(/^tapedeck miss: this request has no recording the namespace still lists/);
        expect(error.message).toContain('lost its index');
        expect(error.message).toContain('tapedeck push');
      } finally {
        await replay.close();
      }
    } finally {
      await up.close();
    }
  });
});
