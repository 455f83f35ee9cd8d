// `tapedeck serve --prune-unused` (startProxy's pruneUnused) removes at close what no request of
// the run used: the realtime sessions on the tape too, with their parts and the audio only they
// refer to, reported as the unused HTTP recordings are. Before, they were left without a word
// (the vitest helpers' TAPEDECK_PRUNE=1 did prune them). A real WebSocket client through the
// proxy, against the loopback fake of the Realtime API.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { afterAll, describe, expect, it } from 'vitest';
import { startProxy } from '../../src/proxy/server.ts';
import { openSessionCollection } from '../../src/store/session-tape.ts';
import { realtimeRecords, type RealtimeRecord } from '../../src/store/records.ts';
import { pcmFor, startFakeRealtime } from './fake-realtime.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-realtime-prune-serve-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** One conversation (its instructions, then text or audio, then `response.create`); whether it got its answer. */
async function talk(proxyUrl: string, instructions: string, say: { text: string } | { audio: Buffer }): Promise<boolean> {
  const ws = new WebSocket(`${proxyUrl.replace(/^http/, 'ws')}/v1/realtime?model=gpt-realtime`, ['realtime'], { perMessageDeflate: false });
  const types: string[] = [];
  const closed = new Promise<void>((r) => ws.once('close', () => r()));
  ws.on('message', (d) => types.push((JSON.parse(String(d)) as { type: string }).type));
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
      const check = () => (types.includes('response.done') || types.includes('error') ? r() : setTimeout(check, 5));
      check();
    }),
  ]);
  ws.close();
  await closed;
  return types.includes('response.done') && !types.includes('error');
}

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

describe('tapedeck serve --prune-unused', () => {
  it('removes the realtime sessions no connect used, their parts and their audio, and says so', async () => {
    const tape = join(dir, 'prune.tape');
    const audio = pcmFor('only in the audio session', 9600);
    const fake = await startFakeRealtime();
    try {
      const rec = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0, onWarning: () => {} });
      try {
        expect(await talk(rec.url, 'You answer in text.', { text: 'hello' })).toBe(true);
        expect(await talk(rec.url, 'You call tools.', { text: 'what is the weather' })).toBe(true);
        expect(await talk(rec.url, 'You listen.', { audio })).toBe(true);
      } finally {
        await rec.close();
      }
    } finally {
      await fake.close();
    }
    const before = await contents(tape);
    expect(before.sessions).toHaveLength(3);
    expect(before.blobs).toBeGreaterThan(0);

    const warnings: string[] = [];
    const replay = await startProxy({ tape, mode: 'replay', port: 0, pruneUnused: true, onWarning: (w) => warnings.push(w) });
    try {
      expect(await talk(replay.url, 'You answer in text.', { text: 'hello' })).toBe(true);
    } finally {
      await replay.close();
    }
    const after = await contents(tape);
    expect(after.sessions).toEqual([before.sessions[0]]);
    expect(after.partSids).toEqual(new Set(after.sessions));
    // The audio the text session refers to stays (its answer's), the audio session's own goes.
    expect(after.blobs).toBeLessThan(before.blobs);
    expect(warnings.join('\n')).toMatch(/removed 2 unused recording\(s\)/);

    // What is left replays.
    const again = await startProxy({ tape, mode: 'replay', port: 0, onWarning: () => {} });
    try {
      expect(await talk(again.url, 'You answer in text.', { text: 'hello' })).toBe(true);
    } finally {
      await again.close();
    }
  });
});
