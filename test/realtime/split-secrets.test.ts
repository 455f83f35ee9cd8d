// A token the model speaks back in a realtime session arrives one transcript delta a word: no
// frame holds `Bearer` and the token together, so masking each frame's text left the token on
// the tape. The frames of a response are read joined: the token never reaches the tape, and the
// replayed transcript reads with its mask.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { afterAll, expect, it } from 'vitest';
import { startProxy } from '../../src/proxy/server.ts';
import { startFakeRealtime } from './fake-realtime.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-realtime-split-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const TOKEN = 'Rt12Tk34Xy56Zq78Wv90Lm12Np34Qr56';

/** One session: a user message holding the token, a response; returns the transcript deltas joined. */
async function session(url: string): Promise<string> {
  const ws = new WebSocket(`${url.replace('http', 'ws')}/v1/realtime?model=gpt-realtime`, ['realtime']);
  let transcript = '';
  const done = new Promise<void>((resolve, reject) => {
    ws.on('message', (d) => {
      const e = JSON.parse(d.toString()) as { type: string; delta?: string };
      if (e.type === 'session.created') {
        ws.send(JSON.stringify({ type: 'conversation.item.create', item: { id: 'item_u1', type: 'message', role: 'user', content: [{ type: 'input_text', text: `call with Bearer ${TOKEN} please` }] } }));
        ws.send(JSON.stringify({ type: 'response.create' }));
      }
      if (e.type === 'response.output_audio_transcript.delta') transcript += e.delta;
      if (e.type === 'response.done' || e.type === 'error') resolve();
    });
    ws.once('error', reject);
  });
  await done;
  ws.close();
  await new Promise((r) => ws.once('close', r));
  return transcript;
}

it('masks a bearer token cut across transcript deltas, and replays the masked transcript', async () => {
  const tape = join(dir, 'split.tape');
  const fake = await startFakeRealtime();
  const rec = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0 });
  let live: string;
  try {
    live = await session(rec.url);
  } finally {
    await rec.close();
    await fake.close();
  }
  expect(live).toBe(`You said: call with Bearer ${TOKEN} please`);
  const bytes = readFileSync(tape).toString('latin1');
  for (let i = 0; i + 6 <= TOKEN.length; i++) expect(bytes, TOKEN.slice(i, i + 6)).not.toContain(TOKEN.slice(i, i + 6));
  const play = await startProxy({ tape, mode: 'replay', port: 0 });
  try {
    expect(await session(play.url)).toMatch(/^You said: call with \[REDACTED(?::[0-9a-f]{16})?\] ?please$/);
  } finally {
    await play.close();
  }
});
