// What a realtime session promises about the tape: a frame that completes a response reaches
// the client only once the frames up to it are stored (a store that holds its writes holds the
// `response.done` back, while the deltas before it flow); a session the upstream cuts (1006)
// keeps what was answered up to the last complete response, is marked cut, and its replay cuts
// the connection at that point.
import { WebSocket } from 'ws';
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startProxy } from '../../src/proxy/server.ts';
import { MemoryBackend } from '../../src/store/backends/memory.ts';
import { readFileSync, writeFileSync } from 'node:fs';
import { readTape, scanTape } from '../../src/store/tape-file.ts';
import { isRealtimeRecord } from '../../src/store/records.ts';
import { startFakeRealtime } from './fake-realtime.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-realtime-durable-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Event = { type: string; [k: string]: unknown };

function client(url: string) {
  const ws = new WebSocket(`${url.replace('http', 'ws')}/v1/realtime?model=gpt-realtime`);
  const events: Event[] = [];
  ws.on('message', (d) => events.push(JSON.parse(d.toString()) as Event));
  const closed = new Promise<number>((r) => ws.once('close', (c) => r(c)));
  const opened = new Promise((r) => ws.once('open', r));
  const ask = (text: string) => {
    ws.send(JSON.stringify({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] } }));
    ws.send(JSON.stringify({ type: 'response.create' }));
  };
  const waitFor = async (pred: (e: Event) => boolean) => {
    for (let i = 0; i < 2000 && !events.some(pred); i++) await new Promise((r) => setTimeout(r, 2));
  };
  return { ws, events, closed, opened, ask, waitFor };
}

/** A memory store whose appends wait until released. */
class HeldBackend extends MemoryBackend {
  held = false;
  private waiting: (() => void)[] = [];
  override async append(values: readonly unknown[], opts?: { durable?: boolean }): Promise<void> {
    if (this.held) await new Promise<void>((r) => this.waiting.push(r));
    return super.append(values, opts as never);
  }
  release(): void {
    this.held = false;
    for (const w of this.waiting.splice(0)) w();
  }
}

describe('realtime sessions and the store', () => {
  it('holds a response.done back until its part is stored; the deltas before it flow', async () => {
    const fake = await startFakeRealtime();
    const store = new HeldBackend();
    const proxy = await startProxy({ upstream: fake.url, store, mode: 'record', port: 0 });
    try {
      const c = client(proxy.url);
      await c.opened;
      await c.waitFor((e) => e.type === 'session.created');
      store.held = true;
      c.ask('hello');
      await c.waitFor((e) => e.type === 'response.output_text.delta');
      await new Promise((r) => setTimeout(r, 100));
      // The answer is all at the proxy, its deltas at the client; its end waits for the store.
      expect(c.events.some((e) => e.type === 'response.output_audio.delta')).toBe(true);
      expect(c.events.some((e) => e.type === 'response.done')).toBe(false);
      store.release();
      await c.waitFor((e) => e.type === 'response.done');
      expect(c.events.at(-1)?.type).toBe('response.done');
      c.ws.close();
      await c.closed;
    } finally {
      await proxy.close();
      await fake.close();
    }
  });

  it('a session the upstream cuts is kept up to the last complete response, marked cut, and replayed with the cut', async () => {
    const fake = await startFakeRealtime();
    const tape = join(dir, 'cut.tape');
    const proxy = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0 });
    let live: Event[];
    try {
      const c = client(proxy.url);
      await c.opened;
      c.ask('first');
      await c.waitFor((e) => e.type === 'response.done');
      const answered = c.events.length;
      c.ask('now crash');
      expect(await c.closed).toBe(1006);
      // The client saw the start of the cut answer live; the tape keeps only what came before it.
      expect(c.events.length).toBeGreaterThan(answered);
      live = c.events.slice(0, answered);
    } finally {
      await proxy.close();
      await fake.close();
    }
    const parts = (await readTape(tape)).records.map((r) => r.value).filter((v) => isRealtimeRecord(v) && v.role === 'part');
    const last = parts.at(-1) as { end?: { cut?: boolean; code: number }; frames: unknown[] };
    expect(last.end).toMatchObject({ by: 'server', code: 1006, cut: true });
    expect(last.frames).toEqual([]);
    const replay = await startProxy({ tape, mode: 'replay', port: 0 });
    try {
      const r = client(replay.url);
      await r.opened;
      r.ask('first');
      await r.waitFor((e) => e.type === 'response.done');
      expect(r.events).toEqual(live);
      r.ask('now crash');
      expect(await r.closed).toBe(1006);
    } finally {
      await replay.close();
    }
  });

  it('--timing recorded replays the server frames with their recorded gaps; the default sends them at once', async () => {
    const fake = await startFakeRealtime();
    const tape = join(dir, 'paced.tape');
    const rec = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0 });
    try {
      const c = client(rec.url);
      await c.opened;
      c.ask('count slowly');
      await c.waitFor((e) => e.type === 'response.done');
      c.ws.close();
      await c.closed;
    } finally {
      await rec.close();
      await fake.close();
    }
    /** ms from the client's question to the response.done, replayed with `timing`. */
    const span = async (timing: 'none' | 'recorded') => {
      const p = await startProxy({ tape, mode: 'replay', port: 0, timing });
      try {
        const c = client(p.url);
        await c.opened;
        const t0 = performance.now();
        c.ask('count slowly');
        await c.waitFor((e) => e.type === 'response.done');
        const ms = performance.now() - t0;
        c.ws.close();
        await c.closed;
        return ms;
      } finally {
        await p.close();
      }
    };
    // Recorded: four gaps of about 30 ms between the deltas and the done.
    expect(await span('recorded')).toBeGreaterThanOrEqual(100);
    expect(await span('none')).toBeLessThan(100);
  });

  it('audio whose base64 looks like a key is stored as audio and replayed byte for byte, not masked', async () => {
    const fake = await startFakeRealtime();
    const tape = join(dir, 'keylike.tape');
    const rec = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0 });
    let live: Event[];
    try {
      const c = client(rec.url);
      await c.opened;
      c.ask('keylike audio');
      await c.waitFor((e) => e.type === 'response.done');
      live = c.events;
      c.ws.close();
      await c.closed;
    } finally {
      await rec.close();
      await fake.close();
    }
    expect(live.find((e) => e.type === 'response.output_audio.delta')?.delta).toBe(`AIza${'Q'.repeat(36)}`);
    const play = await startProxy({ tape, mode: 'replay', port: 0 });
    try {
      const c = client(play.url);
      await c.opened;
      c.ask('keylike audio');
      await c.waitFor((e) => e.type === 'response.done');
      expect(c.events).toEqual(live);
      c.ws.close();
      await c.closed;
    } finally {
      await play.close();
    }
  });

  it('a proxy that shuts down mid-session records the session as ended by it, and closes a client that lingers', async () => {
    const fake = await startFakeRealtime();
    const tape = join(dir, 'shutdown.tape');
    const rec = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0 });
    const c = client(rec.url);
    try {
      await c.opened;
      c.ask('first');
      await c.waitFor((e) => e.type === 'response.done');
    } finally {
      await rec.close();
      await fake.close();
    }
    expect(await c.closed).toBe(1001);
    const parts = (await readTape(tape)).records.map((r) => r.value).filter((v) => isRealtimeRecord(v) && v.role === 'part');
    expect((parts.at(-1) as { end?: unknown }).end).toEqual({ by: 'proxy', code: 1001, reason: 'tapedeck is shutting down' });
    // Replay: the recording run's shutdown is not the server's close. The session stays open
    // after its last answer; a frame past the recording is a miss that says so.
    const again = await startProxy({ tape, mode: 'replay', port: 0 });
    try {
      const a = client(again.url);
      await a.opened;
      a.ask('first');
      await a.waitFor((e) => e.type === 'response.done');
      a.ws.send(JSON.stringify({ type: 'response.create' }));
      expect(await a.closed).toBe(1008);
      const error = a.events.findLast((e) => e.type === 'error') as { error?: { message?: string } } | undefined;
      expect(error?.error?.message).toMatch(/^tapedeck miss: the recording has no more client frames/);
    } finally {
      await again.close();
    }
    // Replay: a client that never closes does not hold the shutdown past its grace.
    const play = await startProxy({ tape, mode: 'replay', port: 0 });
    const r = client(play.url);
    await r.opened;
    r.ws.pause();
    const t0 = performance.now();
    await play.close();
    expect(performance.now() - t0).toBeLessThan(5000);
  });

  it('damage never moves a session: with the head of the first one damaged, the first connect gets E_TAPE_DAMAGED and the second still the second session', async () => {
    const fake = await startFakeRealtime();
    const tape = join(dir, 'damaged.tape');
    const rec = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0 });
    const transcripts: string[] = [];
    try {
      for (const text of ['first', 'second']) {
        const c = client(rec.url);
        await c.opened;
        c.ask(text);
        await c.waitFor((e) => e.type === 'response.done');
        transcripts.push(c.events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta).join(''));
        c.ws.close();
        await c.closed;
      }
    } finally {
      await rec.close();
      await fake.close();
    }
    expect(transcripts).toEqual(['You said: first', 'You said: second']);
    // Flip a byte inside the first session's head record: its checksum fails, the record is lost.
    const k = (await readTape(tape)).records.findIndex((r) => isRealtimeRecord(r.value) && r.value.role === 'session');
    const frame = (await scanTape(tape)).frames[k]!;
    const bytes = readFileSync(tape);
    bytes[frame.offset + 30] = bytes[frame.offset + 30]! ^ 0x5a;
    writeFileSync(tape, bytes);
    const play = await startProxy({ tape, mode: 'replay', port: 0, onWarning: () => {} });
    try {
      const a = client(play.url);
      await a.opened;
      const codeA = await a.closed;
      expect(a.events[0]).toMatchObject({ type: 'error', error: { code: 'tapedeck_miss' } });
      expect(String((a.events[0]!.error as { message: string }).message)).toMatch(/E_TAPE_DAMAGED: The 1st recording/);
      expect(codeA).toBe(1008);
      const b = client(play.url);
      await b.opened;
      b.ask('second');
      await b.waitFor((e) => e.type === 'response.done');
      expect(b.events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta).join('')).toBe('You said: second');
      b.ws.close();
      await b.closed;
    } finally {
      await play.close();
    }
  });

  it('no writer deletes the sessions of another: two proxies recording into one tape at once both keep theirs; a later re-record replaces them', async () => {
    const fake = await startFakeRealtime();
    const tape = join(dir, 'writers.tape');
    const say = async (url: string, text: string) => {
      const c = client(url);
      await c.opened;
      c.ask(text);
      await c.waitFor((e) => e.type === 'response.done');
      c.ws.close();
      await c.closed;
      return c.events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta).join('');
    };
    const a = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0 });
    const b = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0 });
    try {
      expect(await say(a.url, 'from a')).toBe('You said: from a');
      expect(await say(b.url, 'from b')).toBe('You said: from b');
    } finally {
      await a.close();
      await b.close();
    }
    const heads = async () => (await readTape(tape)).records.filter((r) => isRealtimeRecord(r.value) && r.value.role === 'session').length;
    expect(await heads()).toBe(2);
    const play = await startProxy({ tape, mode: 'replay', port: 0, strictOrder: true, onWarning: () => {} });
    try {
      expect(await say(play.url, 'from a')).toBe('You said: from a');
      expect(await say(play.url, 'from b')).toBe('You said: from b');
    } finally {
      await play.close();
    }
    // A run that starts after both ended and records the connect again replaces their sessions.
    const again = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0 });
    try {
      expect(await say(again.url, 'from c')).toBe('You said: from c');
    } finally {
      await again.close();
      await fake.close();
    }
    const replay = await startProxy({ tape, mode: 'replay', port: 0, strictOrder: true, onWarning: () => {} });
    try {
      expect(await say(replay.url, 'from c')).toBe('You said: from c');
    } finally {
      await replay.close();
    }
  });
});
