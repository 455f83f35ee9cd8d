// The export -> edit -> import loop (docs/tape-format.md, and scan's own hint for a finding) wrote
// a key pasted into an edited record to the tape in clear: an edited record is re-keyed on import
// but was never looked at for secrets. Such an import is now refused before anything is written,
// naming the record and what it holds.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { exportTapeJSON, importTapeJSON } from '../../src/store/export.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-import-edited-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const KEY = 'sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH';

async function recorded(): Promise<string> {
  const tape = join(dir, 'good.tape');
  const upstream = (async () => new Response(JSON.stringify({ id: 'c1', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'Hello' }, finish_reason: 'stop' }] }), { headers: { 'content-type': 'application/json' } })) as typeof fetch;
  const f = createFetch({ tape, mode: 'record', fetch: upstream, summary: false, onWarning: () => {} });
  await (await f('https://api.openai.com/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] }) })).text();
  await f.close();
  return tape;
}

describe('import of an edited export', () => {
  it('refuses an edited record that holds a key, writing nothing', async () => {
    const json = await exportTapeJSON(await recorded());
    expect(json).toContain('"Hi"');
    const edited = json.replace('"Hi"', `"use key ${KEY}"`);
    const out = join(dir, 'edited.tape');
    let e: unknown;
    try {
      await importTapeJSON(edited, out);
    } catch (x) {
      e = x;
    }
    expect(e).toBeInstanceOf(TapedeckError);
    expect((e as TapedeckError).code).toBe('E_IMPORT_ENTRY');
    expect((e as TapedeckError).message).toMatch(/record 0/);
    expect(existsSync(out)).toBe(false);
  });

  it('imports an edit without secrets (re-keyed), and an unedited export byte for byte', async () => {
    const tape = await recorded();
    const json = await exportTapeJSON(tape);
    const out = join(dir, 'plain.tape');
    const r = await importTapeJSON(json.replace('"Hi"', '"Hello there"'), out);
    expect(r.rekeyed).toBe(1);
    const again = join(dir, 'again.tape');
    await importTapeJSON(json, again);
    expect(readFileSync(again).equals(readFileSync(tape))).toBe(true);
  });
});
