// ReplayCache.put's raw body given as fetch gives it (`await res.arrayBuffer()`), or as another
// view of bytes (a DataView): refused with "must be a Uint8Array or a string ... exactly as
// received", which the user had done. Such bytes are now taken as they are; what is no bytes (a
// Blob, a number) is E_ARG naming what it is, with the line that fixes it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { ReplayCache } from '../../src/store/replay-cache.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-cache-raw-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const q = (content: string) => ({ model: 'm', messages: [{ role: 'user', content }] });

it('takes an ArrayBuffer or a DataView as the raw bytes; refuses a Blob naming it', async () => {
  const tape = join(dir, 'raw.tape');
  const text = '{"id":"c1","choices":[{"message":{"content":"hi"}}]}';
  const res = new Response(text, { headers: { 'content-type': 'application/json' } });
  const buffer = await res.arrayBuffer();
  const rec = await ReplayCache.open(tape, { mode: 'record' });
  try {
    await rec.put(q('buffer'), JSON.parse(text), { raw: { body: buffer, contentType: 'application/json' } });
    const padded = new Uint8Array(buffer.byteLength + 4);
    padded.set(new Uint8Array(buffer), 2);
    await rec.put(q('view'), JSON.parse(text), { raw: { body: new DataView(padded.buffer, 2, buffer.byteLength) } });
    const blob = await rec.put(q('blob'), 1, { raw: { body: new Blob([text]) as never } }).then(() => undefined, (e: unknown) => e as { code: string; message: string; hint: string });
    expect(blob?.code).toBe('E_ARG');
    expect(blob?.message).toContain('raw.body is a Blob');
    expect(blob?.hint).toContain('new Uint8Array(await blob.arrayBuffer())');
    const num = await rec.put(q('num'), 1, { raw: { body: 42 as never } }).then(() => undefined, (e: unknown) => e as { message: string; hint: string });
    expect(num?.message).toContain('raw.body is a number');
    expect(num?.hint).toContain('new Uint8Array(await res.arrayBuffer())');
  } finally {
    await rec.close();
  }
  const c = await ReplayCache.open(tape, { mode: 'replay' });
  try {
    for (const k of ['buffer', 'view']) {
      const r = await c.getRecord(q(k));
      expect(Buffer.from(r!.raw!.body).toString('utf8'), k).toBe(text);
    }
  } finally {
    await c.close();
  }
});
