// Record mode replaces only what the run re-recorded (docs/modes.md, rule 3). Realtime sessions
// are stored under their connect key (route, model, subprotocols): re-recording one session of a
// connect removed every other session of it at close (a text, a tool-call and an audio session
// at /v1/realtime?model=gpt-realtime, each with its own session.update), and left their parts
// and audio on the tape. Now the run replaces the old sessions that sent the same client frames
// as one of its own, and keeps the others, whole. A real WebSocket client through the proxy,
// against the loopback fake of the Realtime API.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { afterAll, describe, expect, it } from 'vitest';
import { startProxy } from '../../src/proxy/server.ts';
import { openSessionCollection } from '../../src/store/session-tape.ts';
import { realtimeRecords, type RealtimeRecord } from '../../src/store/records.ts';
import { pcmFor, startFakeRealtime } from './fake-realtime.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-realtime-rerecord-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Event = Record<string, any>;

/** One conversation: its `session.update` instructions, then text or audio, and `response.create`; the answer's transcript and errors. */
async function talk(proxyUrl: string, instructions: string, say: { text: string } | { audio: Buffer }): Promise<{ transcript?: string; errors: string[] }> {
  const ws = new WebSocket(`${proxyUrl.replace(/^http/, 'ws')}/v1/realtime?model=gpt-realtime`, ['realtime'], { perMessageDeflate: false });
  const events: Event[] = [];
  const closed = new Promise<void>((r) => ws.once('close', () => r()));
  ws.on('message', (d) => events.push(JSON.parse(String(d)) as Event));
  await new Promise<void>((r, j) => {
    ws.once('open', () => r());
    ws.once('error', j);
  });
  ws.send(JSON.stringify({ type: 'session.update', session: { type: 'realtime', instructions } }));
  if ('text' in say) ws.send(JSON.stringify({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: say.text }] } }));
  else {
    ws.send(JSON.stringify({ type: 'input_audio_buffer.append', audio: say.audio.toString('base64') }));
    ws.send(JSON.stringify({ type: 'input_audio_buffer.commit' }));
  }
  ws.send(JSON.stringify({ type: 'response.create' }));
  await Promise.race([
    closed,
    new Promise<void>((r) => {
      const check = () => (events.some((e) => e.type === 'response.done' || e.type === 'error') ? r() : setTimeout(check, 5));
      check();
    }),
  ]);
  ws.close();
  await closed;
  const done = events.find((e) => e.type === 'response.done');
  return {
    ...(done ? { transcript: events.filter((e) => e.type === 'response.output_audio_transcript.delta').map((e) => e.delta).join('') } : {}),
    errors: events.filter((e) => e.type === 'error').map((e) => String(e.error?.message)),
  };
}

const audio = pcmFor('hello there', 9600);
const conversations: [name: string, run: (url: string) => ReturnType<typeof talk>, answer: string][] = [
  ['text', (url) => talk(url, 'You answer in text.', { text: 'hello' }), 'You said: hello'],
  ['tool', (url) => talk(url, 'You call tools.', { text: 'what is the weather' }), ''],
  ['audio', (url) => talk(url, 'You listen.', { audio }), `You said: audio of ${audio.length} bytes`],
];

/** The tape's realtime records: session heads, the sids of the parts, and the audio blobs. */
async function contents(tape: string): Promise<{ sessions: string[]; partSids: Set<string>; blobs: number }> {
  const { col } = await openSessionCollection<RealtimeRecord>({ tape, mode: 'replay' }, realtimeRecords, 'x');
  const out = { sessions: [] as string[], partSids: new Set<string>(), blobs: 0 };
  for (const { value } of col!.entries()) {
    if (value.role === 'session') out.sessions.push(value.sid);
    else if (value.role === 'part') out.partSids.add(value.sid);
    else out.blobs++;
  }
  await col!.close();
  return out;
}

describe('record mode with several sessions on one connect', () => {
  it('re-recording one session keeps the others (and removes only the replaced one, its parts and its audio)', async () => {
    const tape = join(dir, 'three.tape');
    const fake = await startFakeRealtime();
    let before: Awaited<ReturnType<typeof contents>>;
    try {
      const rec = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0, onWarning: () => {} });
      try {
        for (const [, run] of conversations) expect((await run(rec.url)).errors).toEqual([]);
      } finally {
        await rec.close();
      }
      before = await contents(tape);
      expect(before.sessions).toHaveLength(3);

      // Only the text conversation again, in record mode.
      const again = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0, onWarning: () => {} });
      try {
        expect(await conversations[0]![1](again.url)).toEqual({ transcript: 'You said: hello', errors: [] });
      } finally {
        await again.close();
      }
    } finally {
      await fake.close();
    }
    const after = await contents(tape);
    expect(after.sessions).toHaveLength(3);
    // The old text session went, its parts with it; the tool and audio sessions stayed whole.
    expect(after.sessions).not.toContain(before.sessions[0]);
    expect(after.sessions).toEqual(expect.arrayContaining(before.sessions.slice(1)));
    expect(after.partSids).toEqual(new Set(after.sessions));
    expect(after.blobs).toBe(before.blobs);

    const replay = await startProxy({ tape, mode: 'replay', port: 0, strictOrder: true, onWarning: () => {} });
    try {
      for (const [name, run, answer] of conversations) {
        const got = await run(replay.url);
        expect({ name, ...got }).toMatchObject({ name, errors: [] });
        if (answer) expect(got.transcript).toBe(answer);
      }
    } finally {
      await replay.close();
    }
  });
});
