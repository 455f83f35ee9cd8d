// Realtime sessions in a shared Redis store: a proxy that started replaying first, on an empty
// namespace, replays a session another proxy recorded there later (it asks Redis on a miss, for
// the session and for each of its parts).
import { WebSocket } from 'ws';
import { expect, it } from 'vitest';
import { startProxy } from '../../src/proxy/server.ts';
import { startFakeRealtime } from '../realtime/fake-realtime.ts';
import { freshNamespace, redisDescribe, useRedis } from './setup.ts';

async function ask(url: string, text: string): Promise<unknown[]> {
  const ws = new WebSocket(`${url.replace('http', 'ws')}/v1/realtime?model=gpt-realtime`);
  const events: { type: string }[] = [];
  ws.on('message', (d) => events.push(JSON.parse(d.toString()) as { type: string }));
  const closed = new Promise((r) => ws.once('close', r));
  await new Promise((r) => ws.once('open', r));
  ws.send(JSON.stringify({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] } }));
  ws.send(JSON.stringify({ type: 'response.create' }));
  for (let i = 0; i < 2000 && !events.some((e) => e.type === 'response.done' || e.type === 'error'); i++) await new Promise((r) => setTimeout(r, 2));
  ws.close();
  await closed;
  return events;
}

redisDescribe('realtime sessions in Redis', () => {
  const redis = useRedis();

  it('a replaying proxy started first replays a session another proxy records into the namespace later', async () => {
    const store = `${redis.current.url}/0?namespace=${freshNamespace('realtime')}`;
    const fake = await startFakeRealtime();
    const replayer = await startProxy({ store, mode: 'replay', port: 0, onWarning: () => {} });
    const recorder = await startProxy({ store, mode: 'record', upstream: fake.url, port: 0 });
    try {
      // The replayer's session tape is open (its first connect was a miss) before anything is recorded.
      expect(await ask(replayer.url, 'hello fleet')).toContainEqual(expect.objectContaining({ type: 'error' }));
      const live = await ask(recorder.url, 'hello fleet');
      await fake.close();
      expect(await ask(replayer.url, 'hello fleet')).toEqual(live);
    } finally {
      await recorder.close();
      await replayer.close();
    }
  });
});
