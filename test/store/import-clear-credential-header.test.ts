// The export -> edit -> import loop with a key pasted into a credential header (`authorization`,
// `x-api-key`): the header is no part of the request key, so the record did not count as edited
// and its key reached the tape in clear. Credential headers are masked on the way in, as on record.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { exportTapeJSON, importTapeJSON } from '../../src/store/export.ts';
import { readTape } from '../../src/store/tape-file.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-import-cred-header-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const KEY = 'sk-proj-CLEARKEYabcdefghijklmnopqrstuvwxyz0123456789';

async function recorded(): Promise<string> {
  const tape = join(dir, 'good.tape');
  const upstream = (async () => new Response(JSON.stringify({ id: 'c1', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'Hello' }, finish_reason: 'stop' }] }), { headers: { 'content-type': 'application/json' } })) as typeof fetch;
  const f = createFetch({ tape, mode: 'record', fetch: upstream, summary: false, onWarning: () => {} });
  for (const q of ['Hi', 'Bye']) {
    await (await f('https://api.openai.com/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-proj-realkeyabcdefghijklmnopqrstuvwxyz0123' }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: q }] }) })).text();
  }
  await f.close();
  return tape;
}

describe('import of an export with a key pasted into a credential header', () => {
  it('masks the header on the way in and counts it; the unedited export still imports byte for byte', async () => {
    const tape = await recorded();
    const json = await exportTapeJSON(tape);
    expect(json.match(/"authorization": "\[REDACTED\]"/g)?.length).toBe(2);
    const edited = json.replace(/"authorization": "\[REDACTED\]"/g, `"authorization": "Bearer ${KEY}"`).replace('"content-type": "application/json"', `"content-type": "application/json",\n        "x-api-key": "${KEY}"`);
    const out = join(dir, 'edited.tape');
    const r = await importTapeJSON(edited, out);
    expect(readFileSync(out).includes(Buffer.from('CLEARKEY'))).toBe(false);
    expect(r.masked).toBe(3);
    const { records } = await readTape(out);
    const heads = records.map((x) => (x.value as { request: { headers: Record<string, string> } }).request.headers);
    expect(heads.map((h) => h.authorization)).toEqual(['[REDACTED]', '[REDACTED]']);
    expect(heads.some((h) => h['x-api-key'] === '[REDACTED]')).toBe(true);
    const again = join(dir, 'again.tape');
    const same = await importTapeJSON(json, again);
    expect(same.masked).toBeUndefined();
    expect(readFileSync(again).equals(readFileSync(tape))).toBe(true);
  });
});
