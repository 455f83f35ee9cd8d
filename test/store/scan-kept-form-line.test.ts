// A prompt that is one `DB_PASSWORD=…` line reads like a form, and scan judged it as a form body
// (which the recorder masks), so its finding had no "kept by the recorder" mark and scan's hint
// said re-recording would fix it; the recorder keeps such text in a prompt. The mark is now set
// for form-looking text inside a document; a form sent as the body itself is masked on record.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { secretsInValue } from '../../src/store/secret-scan.ts';
import { readTape } from '../../src/store/tape-file.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-scan-form-line-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const PASSWORD = 'Sup3rS3cretPassw0rd!';

describe('scan of a DB_PASSWORD= prompt line', () => {
  it('marks it kept by the recorder, as the recorder indeed keeps it; a form body stays unmarked', async () => {
    const tape = join(dir, 'pw.tape');
    const upstream = (async () => new Response(JSON.stringify({ id: 'c1', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }] }), { headers: { 'content-type': 'application/json' } })) as typeof fetch;
    const f = createFetch({ tape, mode: 'record', fetch: upstream, summary: false, onWarning: () => {} });
    await (await f('https://api.openai.com/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `DB_PASSWORD=${PASSWORD}` }] }) })).text();
    await f.close();
    // Today's recorder keeps the line as it is: re-recording would not mask it.
    expect(readFileSync(tape).includes(Buffer.from(PASSWORD))).toBe(true);
    const found = secretsInValue((await readTape(tape)).records[0]!.value);
    const inPrompt = found.filter((x) => x.path.startsWith('$.request.body.messages[0].content'));
    expect(inPrompt.length).toBeGreaterThan(0);
    expect(inPrompt.every((x) => x.kept === true)).toBe(true);

    const form = secretsInValue({ v: 1, kind: 'http', request: { method: 'POST', url: '/token', headers: {}, body: `DB_PASSWORD=${PASSWORD}&x=1` } });
    expect(form.length).toBeGreaterThan(0);
    expect(form.some((x) => x.kept === true)).toBe(false);
  });
});
