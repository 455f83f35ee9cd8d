// `tapedeck serve` ends with what it did, realtime sessions included: a run that recorded only
// sessions does not read as one that recorded nothing.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { serve } from '../proxy/serve-cli.ts';
import { startFakeRealtime } from './fake-realtime.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-realtime-summary-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function session(url: string): Promise<void> {
  const ws = new WebSocket(`${url.replace('http', 'ws')}/v1/realtime?model=gpt-realtime`);
  const events: { type: string }[] = [];
  ws.on('message', (d) => events.push(JSON.parse(d.toString()) as { type: string }));
  await new Promise((r) => ws.once('open', r));
  ws.send(JSON.stringify({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hello' }] } }));
  ws.send(JSON.stringify({ type: 'response.create' }));
  for (let i = 0; i < 2000 && !events.some((e) => e.type === 'response.done'); i++) await new Promise((r) => setTimeout(r, 2));
  expect(events.some((e) => e.type === 'response.done')).toBe(true);
  const closed = new Promise((r) => ws.once('close', r));
  ws.close();
  await closed;
}

describe('tapedeck serve, closing', () => {
  it('counts the realtime sessions it recorded, then those it replayed', async () => {
    const fake = await startFakeRealtime();
    const tape = join(dir, 'rt.tape');
    try {
      const rec = serve(['--upstream', fake.url, '--tape', tape, '--mode', 'record', '--port', '0']);
      await session(await rec.url);
      rec.child.kill('SIGINT');
      expect(await rec.exited).toBe(0);
      expect(rec.stderr()).toMatch(/closed \(0 hit\(s\), 0 miss\(es\), 0 recorded; realtime sessions: 0 replayed, 0 missed, 1 recorded\)/);
    } finally {
      await fake.close();
    }
    const play = serve(['--tape', tape, '--port', '0']);
    await session(await play.url);
    // A tape of sessions only does not open as an empty one.
    expect(play.stderr()).toMatch(/listening on \S+ \(mode replay, tape \S+, 0 recording\(s\), 1 realtime session\(s\)\)/);
    play.child.kill('SIGINT');
    expect(await play.exited).toBe(0);
    expect(play.stderr()).toMatch(/realtime sessions: 1 replayed, 0 missed, 0 recorded\)/);
  });

  it('tells a realtime miss with one prefix', async () => {
    const play = serve(['--tape', join(dir, 'rt.tape'), '--port', '0']);
    const ws = new WebSocket(`${(await play.url).replace('http', 'ws')}/v1/realtime?model=gpt-realtime`);
    await new Promise((r) => ws.once('open', r));
    const closed = new Promise((r) => ws.once('close', r));
    ws.send(JSON.stringify({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'goodbye' }] } }));
    await closed;
    play.child.kill('SIGINT');
    expect(await play.exited).toBe(0);
    expect(play.stderr()).toMatch(/^tapedeck serve: realtime miss in /m);
    expect(play.stderr()).not.toContain('tapedeck serve: tapedeck:');
  });
});
