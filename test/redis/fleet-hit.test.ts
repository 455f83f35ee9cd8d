// A proxy on a shared store (Redis) answers a recording it already holds at once, in the same
// call, as a proxy on a tape file does; it asks the store only when the store may hold more: a
// recording another proxy made after this one opened, or a miss. On a real redis-server.
import { expect, it } from 'vitest';
import { Deck, type Decision, type DeckRequest } from '../../src/proxy/deck.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startUpstream } from '../proxy/fake-upstream.ts';
import { freshNamespace, redisDescribe, useRedis } from './setup.ts';

const CHAT = '/v1/chat/completions';
const JSON_TYPE = { 'content-type': 'application/json' };
const body = (text: string) => JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }] });
const request = (text: string): DeckRequest => ({ method: 'POST', url: CHAT, headers: JSON_TYPE, body: Buffer.from(body(text)) });

/** Records a chat answer for `text` through `rec` against the fake provider; its id. */
async function record(rec: typeof fetch, upstream: string, text: string): Promise<string> {
  const r = await rec(`${upstream}${CHAT}`, { method: 'POST', headers: JSON_TYPE, body: body(text) });
  return ((await r.json()) as { id: string }).id;
}

/** The id of the answer a replay decision would send. */
function answerId(d: Decision): unknown {
  if (d.kind !== 'replay') throw new Error(`expected a replay, got ${d.kind}`);
  return JSON.parse(Buffer.from(d.record.response.body as Uint8Array).toString('utf8')).id;
}

redisDescribe('a proxy on a shared store', () => {
  const redis = useRedis();

  it('answers a recording it holds in the same call; one another proxy made since it opened, and a miss, go through the store', async () => {
    const store = `${redis.current.url}?namespace=${freshNamespace('fleet-hit')}`;
    const up = await startUpstream();
    const rec = createFetch({ store, mode: 'record' });
    const deck = await Deck.open({ store, mode: 'replay', onWarning: () => {} }, { kind: 'proxy' });
    try {
      // Recorded after the deck opened: the first lookup asks the store...
      const held = await record(rec, up.url, 'held');
      const fetched = deck.decideShared(request('held'));
      expect(fetched).toBeInstanceOf(Promise);
      expect(answerId(await fetched)).toBe(held);
      // ...and serving it again is a repeat past its last known recording: the store is asked
      // for a later turn another proxy may have recorded (none here: the same one again).
      const again = deck.decideShared(request('held'));
      expect(again).toBeInstanceOf(Promise);
      expect(answerId(await again)).toBe(held);

      const later = await record(rec, up.url, 'later');
      const fromFleet = deck.decideShared(request('later'));
      expect(fromFleet).toBeInstanceOf(Promise);
      expect(answerId(await fromFleet)).toBe(later);

      let missed: unknown;
      try {
        await deck.decideShared(request('never recorded'));
      } catch (e) {
        missed = e;
      }
      expect(missed).toMatchObject({ code: 'E_MISS' });
    } finally {
      await deck.close();
      await rec.close();
      await up.close();
    }
  });

  it('answers what it loaded at open in the same call, the same recording as the store holds', async () => {
    const store = `${redis.current.url}?namespace=${freshNamespace('fleet-open')}`;
    const up = await startUpstream();
    const rec = createFetch({ store, mode: 'record' });
    const recorded = await record(rec, up.url, 'before open');
    await rec.close();
    await up.close();
    const deck = await Deck.open({ store, mode: 'replay', onWarning: () => {} }, { kind: 'proxy' });
    try {
      const d = deck.decideShared(request('before open'));
      expect(d).not.toBeInstanceOf(Promise);
      expect(answerId(d as Decision)).toBe(recorded);
    } finally {
      await deck.close();
    }
  });
});
