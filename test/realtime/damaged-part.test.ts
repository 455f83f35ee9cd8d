// A realtime session whose part is damaged on the tape (bytes changed on disk: the store skips
// the record) is replayed up to there and then cut, and the proxy says it is damage: before, it
// said the session "was recorded cut ... (the upstream or the recording client went away)", which
// sent the user looking at the recording run rather than at the tape.
import { mkdtempSync, openSync, rmSync, writeSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { afterAll, describe, expect, it } from 'vitest';
import { startProxy } from '../../src/proxy/server.ts';
import { openSessionCollection } from '../../src/store/session-tape.ts';
import { realtimeRecords, type RealtimeRecord } from '../../src/store/records.ts';
import { startFakeRealtime } from './fake-realtime.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-realtime-damaged-part-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `session.update` (waiting for its answer), then a question and `response.create`; the event types the client got. */
async function talk(proxyUrl: string): Promise<string[]> {
  const ws = new WebSocket(`${proxyUrl.replace(/^http/, 'ws')}/v1/realtime?model=gpt-realtime`, ['realtime'], { perMessageDeflate: false });
  const types: string[] = [];
  const closed = new Promise<void>((r) => ws.once('close', () => r()));
  ws.on('message', (d) => types.push((JSON.parse(String(d)) as { type: string }).type));
  ws.on('error', () => {});
  await new Promise<void>((r) => ws.once('open', () => r()));
  const until = (type: string) =>
    Promise.race([
      closed,
      new Promise<void>((r) => {
        const check = () => (types.includes(type) ? r() : setTimeout(check, 5));
        check();
      }),
    ]);
  ws.send(JSON.stringify({ type: 'session.update', session: { type: 'realtime', instructions: 'Be brief.' } }));
  await until('session.updated');
  if (ws.readyState === ws.OPEN) {
    ws.send(JSON.stringify({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hello' }] } }));
    ws.send(JSON.stringify({ type: 'response.create' }));
  }
  await until('response.done');
  ws.close();
  await closed;
  return types;
}

describe('a realtime session with a damaged part', () => {
  it('is replayed up to the damage and told as damage, with where', async () => {
    const tape = join(dir, 'damaged.tape');
    const fake = await startFakeRealtime();
    try {
      const rec = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0, onWarning: () => {} });
      try {
        expect(await talk(rec.url)).toContain('response.done');
      } finally {
        await rec.close();
      }
    } finally {
      await fake.close();
    }
    // Part 1 (the `session.update` and its answer) is damaged: bytes in the middle of it change.
    const { col } = await openSessionCollection<RealtimeRecord>({ tape, mode: 'replay' }, realtimeRecords, 'x');
    const at = [...col!.entries()].find((e) => e.value.role === 'part' && e.value.n === 1)!.at!;
    await col!.close();
    const fd = openSync(tape, 'r+');
    writeSync(fd, Buffer.from('XXXX'), 0, 4, at + 60);
    closeSync(fd);

    const warnings: string[] = [];
    const replay = await startProxy({ tape, mode: 'replay', port: 0, onWarning: (w) => warnings.push(w) });
    try {
      // The opening replays; the client's first frame meets the damage: the connection is cut.
      expect(await talk(replay.url)).toEqual(['session.created']);
    } finally {
      await replay.close();
    }
    const said = warnings.find((w) => w.includes('realtime session GET /v1/realtime?model=gpt-realtime'));
    expect(said).toContain('is damaged after 0 client frames (E_TAPE_DAMAGED: part 1 of the session');
    expect(said).toMatch(/damaged bytes at \d+\.\.\d+/);
    expect(said).not.toContain('recorded cut');
  });
});
