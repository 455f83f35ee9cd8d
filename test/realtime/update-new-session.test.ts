// Update mode records a session the tape has no recording of. An OpenAI connect is sent the
// opening of a recorded session at once (`session.created` comes before the client says
// anything), and the session is known to be new only at a later frame (same `session.update`,
// another question). Before, that connect missed there: the first run of a test with two
// conversations failed on a fresh tape. Now it goes on live from where the recording stopped
// answering it, recorded as a new session, and both replay afterwards. A real WebSocket client
// through the proxy, against the loopback fake of the Realtime API.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { afterAll, describe, expect, it } from 'vitest';
import { startProxy } from '../../src/proxy/server.ts';
import { RealtimeTape } from '../../src/realtime/tape.ts';
import { startFakeRealtime } from './fake-realtime.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-realtime-update-new-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Event = Record<string, any>;

/**
 * A voice agent's turn: `session.update`, the user's text and `response.create` sent at once;
 * the transcript of the answer, the errors, and how many `session.created` / `session.updated`
 * the client got (once each: the catch-up's own are not sent on).
 */
async function talk(proxyUrl: string, text: string): Promise<{ transcript?: string; errors: string[]; created: number; updated: number; sessionIds: string[] }> {
  const ws = new WebSocket(`${proxyUrl.replace(/^http/, 'ws')}/v1/realtime?model=gpt-realtime`, ['realtime'], { perMessageDeflate: false });
  const events: Event[] = [];
  const closed = new Promise<void>((r) => ws.once('close', () => r()));
  ws.on('message', (d) => events.push(JSON.parse(String(d)) as Event));
  await new Promise<void>((r, j) => {
    ws.once('open', () => r());
    ws.once('error', j);
  });
  ws.send(JSON.stringify({ type: 'session.update', session: { type: 'realtime', instructions: 'Be brief.' } }));
  ws.send(JSON.stringify({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] } }));
  ws.send(JSON.stringify({ type: 'response.create' }));
  await Promise.race([
    closed,
    new Promise<void>((r) => {
      const check = () => (events.some((e) => e.type === 'response.done' || e.type === 'error') ? r() : setTimeout(check, 5));
      check();
    }),
  ]);
  await new Promise((r) => setTimeout(r, 20));
  ws.close();
  await closed;
  const done = events.find((e) => e.type === 'response.done');
  return {
    transcript: done?.response?.output?.[0]?.content?.[0]?.transcript ?? (done ? events.filter((e) => e.type === 'response.output_audio_transcript.delta').map((e) => e.delta).join('') : undefined),
    errors: events.filter((e) => e.type === 'error').map((e) => String(e.error?.message)),
    created: events.filter((e) => e.type === 'session.created').length,
    updated: events.filter((e) => e.type === 'session.updated').length,
    // The session id every frame that names one gave this client.
    sessionIds: [...new Set(events.filter((e) => e.session?.id).map((e) => e.session.id as string))],
  };
}

describe('update mode on a tape without the session', () => {
  it('records a second OpenAI session that starts like the first and differs later, and replays both', async () => {
    const tape = join(dir, 'two.tape');
    const fake = await startFakeRealtime();
    const proxy = await startProxy({ upstream: fake.url, tape, mode: 'update', port: 0, onWarning: () => {} });
    try {
      for (const text of ['first question', 'second question']) {
        const got = await talk(proxy.url, text);
        expect(got.errors).toEqual([]);
        expect(got.transcript).toBe(`You said: ${text}`);
        expect([got.created, got.updated]).toEqual([1, 1]);
        expect(got.sessionIds).toHaveLength(1);
      }
    } finally {
      await proxy.close();
      await fake.close();
    }
    const t = await RealtimeTape.open({ tape, mode: 'replay' });
    expect([...t.sessions()]).toHaveLength(2);
    await t.close();

    const replay = await startProxy({ tape, mode: 'replay', port: 0, strictOrder: true, onWarning: () => {} });
    try {
      for (const text of ['second question', 'first question']) {
        const got = await talk(replay.url, text);
        expect(got.errors).toEqual([]);
        expect(got.transcript).toBe(`You said: ${text}`);
        expect([got.created, got.updated]).toEqual([1, 1]);
      }
    } finally {
      await replay.close();
    }
  });
});
