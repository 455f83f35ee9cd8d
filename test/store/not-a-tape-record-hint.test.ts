// A file at the tape path that is no tape (random bytes): its error told the user to "re-record
// it", and recording onto that path is refused with the same error (the file is never replaced),
// so the hint led back to itself. It now says to move the file away before recording.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-not-a-tape-hint-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it.each(['replay', 'record'] as const)('in %s mode the hint says to move the file away, not to re-record onto it', async (mode) => {
  const tape = join(dir, `garbage-${mode}.tape`);
  writeFileSync(tape, randomBytes(3000));
  const f = createFetch({ tape, mode, fetch: (async () => new Response('{}', { headers: { 'content-type': 'application/json' } })) as typeof fetch, onWarning: () => {} });
  try {
    const r = await f('https://api.openai.com/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }) });
    const text = await r.text();
    expect(text).toContain('is not a readable tape');
    expect(text).toContain('move it away');
    expect(text).not.toMatch(/or re-record it\./);
  } finally {
    await f.close().catch(() => {});
  }
});

it("random bytes that open with '{' or '[' are no readable tape, not JSON text (one file in 128 did, and the hint said to import it)", async () => {
  for (const first of [0x7b, 0x5b]) {
    const tape = join(dir, `garbage-${first}.tape`);
    const bytes = randomBytes(3000);
    bytes[0] = first;
    bytes[1] = 0x01; // a control byte no JSON text holds, as random bytes almost always have
    writeFileSync(tape, bytes);
    const f = createFetch({ tape, mode: 'replay', onWarning: () => {} });
    try {
      const r = await f('https://api.openai.com/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"model":"m","messages":[]}' });
      const text = await r.text();
      expect(text).toContain('is not a readable tape');
      expect(text).not.toContain('JSON text');
    } finally {
      await f.close().catch(() => {});
    }
  }
});
