// `tapedeck serve --prune-unused` removing a session recorded before one the run used, on the
// same connect: the session heads of a connect are numbered in recorded order, and the one left
// kept its number (2nd) with no 1st before it, which reads as a recording lost to damage. The
// run that pruned said nothing was wrong, and the next replay of the session it kept failed at
// connect with E_TAPE_DAMAGED ("the 1st recording ... is missing ... an import of an export").
// A connect's sessions are chosen by their first frames, not by their turn: a session numbered
// past a removed one (nothing on the tape damaged) now replays, on tapes pruned before too. A
// real WebSocket client through the proxy, against the loopback fake of the Realtime API.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { afterAll, expect, it } from 'vitest';
import { startProxy } from '../../src/proxy/server.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { startFakeRealtime } from './fake-realtime.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-realtime-prune-earlier-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A session with `instructions`, then a message and a response: its answer's transcript, or the error it got. */
async function talk(proxyUrl: string, instructions: string): Promise<string> {
  const ws = new WebSocket(`${proxyUrl.replace(/^http/, 'ws')}/v1/realtime?model=gpt-realtime`, ['realtime']);
  const events: Record<string, any>[] = [];
  const closed = new Promise<void>((r) => ws.once('close', () => r()));
  ws.on('message', (d) => events.push(JSON.parse(String(d))));
  ws.on('error', () => {});
  await new Promise<void>((r) => ws.once('open', () => r()));
  ws.send(JSON.stringify({ type: 'session.update', session: { type: 'realtime', instructions } }));
  ws.send(JSON.stringify({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: instructions } ] } }));
  ws.send(JSON.stringify({ type: 'response.create' }));
  const answer = await new Promise<string>((resolve) => {
    const said = () => {
      const done = events.find((e) => e.type === 'response.done' || e.type === 'error');
      return done && (done.type === 'error' ? `error: ${done.error.message}` : String(done.response.output[0].content[0].transcript));
    };
    const check = () => {
      const s = said();
      if (s !== undefined) return resolve(s);
      setTimeout(check, 5);
    };
    check();
    void closed.then(() => resolve(said() ?? `closed: ${events.map((e) => e.type).join(', ')}`));
  });
  ws.close();
  await closed;
  return answer;
}

it('pruning a session recorded before the one the run used leaves that one replayable', async () => {
  const tape = join(dir, 'two.tape');
  const fake = await startFakeRealtime();
  const rec = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0, onWarning: () => {} });
  try {
    expect(await talk(rec.url, 'first')).toBe('You said: first');
    expect(await talk(rec.url, 'second')).toBe('You said: second');
  } finally {
    await rec.close();
    await fake.close();
  }
  const warnings: string[] = [];
  const prune = await startProxy({ tape, mode: 'replay', port: 0, pruneUnused: true, onWarning: (w) => warnings.push(w) });
  try {
    expect(await talk(prune.url, 'second')).toBe('You said: second');
  } finally {
    await prune.close();
  }
  expect(warnings.join('\n')).toMatch(/removed 1 unused recording\(s\)/);
  const heads = (await readTape(tape)).records.map((r) => r.value as { role?: string }).filter((v) => v.role === 'session');
  expect(heads).toHaveLength(1);

  const again = await startProxy({ tape, mode: 'replay', port: 0, onWarning: () => {} });
  try {
    expect(await talk(again.url, 'second')).toBe('You said: second');
    // The pruned one is gone: a miss.
    expect(await talk(again.url, 'first')).toMatch(/^error: tapedeck miss: client frame 1 \(session\.update\): session\.instructions differs, "first" vs "second"/);
  } finally {
    await again.close();
  }
});
