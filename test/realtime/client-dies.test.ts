// The recording client dies mid-response (its process killed: no close frame, the proxy sees
// 1006). The half-answered turn was stored with the session's end, so a replay of the same
// client played the turn's first frames and then nothing: no response.done, no error, no
// close, a test hung until its timeout. Such a session is now kept up to its last complete
// response and marked cut, as one the upstream cut: the replay's frame past it is cut (1006).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { afterAll, expect, it } from 'vitest';
import { startProxy } from '../../src/proxy/server.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { startFakeRealtime } from './fake-realtime.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-realtime-client-dies-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * Two turns: the first answered whole, the second ('slowly', deltas 30 ms apart) until its first
 * transcript delta, when the client dies if `die`. Returns what happened to the second turn.
 */
async function twoTurns(url: string, die: boolean): Promise<string> {
  const ws = new WebSocket(`${url.replace('http', 'ws')}/v1/realtime?model=gpt-realtime`, ['realtime']);
  const say = (text: string) => {
    ws.send(JSON.stringify({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] } }));
    ws.send(JSON.stringify({ type: 'response.create' }));
  };
  let turn = 0;
  return new Promise<string>((resolve) => {
    // A replay that neither answers nor closes is what this test is about: said, not waited out.
    const timer = setTimeout(() => {
      ws.terminate();
      resolve('hung: no response.done, no close');
    }, 3000);
    const end = (what: string) => {
      clearTimeout(timer);
      resolve(what);
    };
    ws.on('message', (d) => {
      const e = JSON.parse(d.toString()) as { type: string };
      if (e.type === 'session.created') say('hello');
      if (e.type === 'response.done' && ++turn === 1) say('count slowly');
      else if (e.type === 'response.done') end('answered');
      if (die && turn === 1 && e.type === 'response.output_audio_transcript.delta') {
        ws.terminate();
        end('died');
      }
    });
    ws.on('close', (code) => end(`closed ${code}`));
    ws.on('error', () => {});
  });
}

it('a session whose client died mid-response is kept to its last complete response; its replay cuts there instead of hanging', async () => {
  const tape = join(dir, 'dies.tape');
  const fake = await startFakeRealtime();
  const rec = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0 });
  try {
    expect(await twoTurns(rec.url, true)).toBe('died');
    await new Promise((r) => setTimeout(r, 200));
  } finally {
    await rec.close();
    await fake.close();
  }
  const values = (await readTape(tape)).records.map((r) => r.value as { kind?: string; end?: { by: string; code: number; cut?: boolean } });
  const end = values.find((v) => v.end !== undefined)?.end;
  expect(end).toMatchObject({ by: 'client', code: 1006, cut: true });
  const warned: string[] = [];
  const play = await startProxy({ tape, mode: 'replay', port: 0, onWarning: (m) => warned.push(m) });
  try {
    expect(await twoTurns(play.url, false)).toBe('closed 1006');
    // Not a silent drop: what the recording holds, why the connection is cut, how to record the rest.
    const note = warned.find((m) => m.includes('recorded cut'));
    expect(note, warned.join('\n')).toMatch(/after 2 client frames/);
    expect(note).toContain('re-record');
  } finally {
    await play.close();
  }
});
