// A close frame's reason is the server's text like any frame's: a Live API that refuses a key and
// names it in the reason ("Quota exceeded for key AIza...") must not put the key on disk. Recorded
// through the proxy with the real @google/genai client, then replayed with the upstream gone: the
// client gets the same code and the masked reason, also when masking a short key made a reason
// of the full 123 bytes longer than a close frame may carry.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GoogleGenAI, Modality } from '@google/genai';
import { afterAll, expect, it } from 'vitest';
import { startProxy } from '../../src/proxy/server.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { startFakeRealtime } from './fake-realtime.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-realtime-close-reason-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const KEY = 'AIza' + 'SyQu0ta-Ab3dEf6hIj9kLm2nOp5qRs8tUv1';
// Short enough that its mask is longer than it is.
const SHORT = 'k3yShrt9';

/** One Live session asking `text`; resolves with how the server closed it. */
async function refused(url: string, apiKey: string, text: string): Promise<{ code: number; reason: string }> {
  const ai = new GoogleGenAI({ apiKey, httpOptions: { baseUrl: url } });
  let closedWith: (c: { code: number; reason: string }) => void = () => {};
  const closed = new Promise<{ code: number; reason: string }>((r) => (closedWith = r));
  const session = await ai.live.connect({
    model: 'gemini-live-2.5-flash-preview',
    config: { responseModalities: [Modality.TEXT] },
    callbacks: { onmessage: () => {}, onerror: () => {}, onclose: (e: { code: number; reason: string }) => closedWith({ code: e.code, reason: e.reason }) },
  });
  session.sendClientContent({ turns: [{ role: 'user', parts: [{ text }] }], turnComplete: true });
  return closed;
}

it('masks a key named in the close reason, and replays the close with the masked reason', async () => {
  const tape = join(dir, 'quota.tape');
  const fake = await startFakeRealtime();
  const rec = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0 });
  let live: { code: number; reason: string }[];
  try {
    live = [await refused(rec.url, KEY, 'quota please'), await refused(rec.url, SHORT, 'quota please, pad it')];
  } finally {
    await rec.close();
    await fake.close();
  }
  // The live client saw the key: the server said it.
  expect(live[0]).toEqual({ code: 1011, reason: `Quota exceeded for key ${KEY}` });
  expect(Buffer.byteLength(live[1]!.reason)).toBe(123);
  const bytes = readFileSync(tape).toString('latin1');
  expect(bytes).not.toContain(KEY);
  expect(bytes).not.toContain(SHORT);
  const ends = (await readTape(tape)).records.map((r) => (r.value as { end?: { reason?: string } }).end?.reason).filter((x) => x !== undefined);
  expect(ends).toHaveLength(2);
  expect(ends[0]).toMatch(/^Quota exceeded for key \[REDACTED:[0-9a-f]+\]$/);

  const play = await startProxy({ tape, mode: 'replay', port: 0, strictOrder: true, onWarning: () => {} });
  try {
    const again = [await refused(play.url, KEY, 'quota please'), await refused(play.url, SHORT, 'quota please, pad it')];
    expect(again[0]).toEqual({ code: 1011, reason: ends[0] });
    // Longer once masked than a close frame carries: cut to 123 bytes, not a failed close (1006).
    expect(again[1]!.code).toBe(1011);
    expect(again[1]!.reason).toMatch(/^Quota exceeded for key \[REDACTED(:[0-9a-f]+)?\]\.+$/);
    expect(Buffer.byteLength(ends[1]!)).toBeGreaterThan(123);
    expect(Buffer.byteLength(again[1]!.reason)).toBeLessThanOrEqual(123);
  } finally {
    await play.close();
  }
});
