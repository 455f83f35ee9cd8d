// A tape replaced under a running writer (another tape renamed over it: a git checkout of another
// branch, a copied-in tape) has another redaction salt. The writer went on appending records
// whose keyed masks (`[REDACTED:…]`) were made under the old tape's salt: in the new tape they
// never match a request again, and nothing said so. The append now compares the header's salt
// with the one the records were masked under and refuses (E_TAPE_CHANGED), appending nothing.
import { copyFileSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { appendRecords, createTape, readTape, scanTape } from '../../src/store/tape-file.ts';
import { TapeBackend } from '../../src/store/backends/tape.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-replaced-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const URL_ = 'https://api.openai.com/v1/chat/completions';
const SECRET = 'my call with Bearer eyJhbGciOiJIUzI1NiJ9.abcdefghijklmnop.qrstuvwxyz012345 fails, why?';
const chat = (text: string) => ({ method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }] }) });
let n = 0;
const provider = (async () => {
  n++;
  return new Response(JSON.stringify({ id: `chatcmpl-${n}`, object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: `answer ${n}` }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }), { headers: { 'content-type': 'application/json' } });
}) as typeof fetch;

async function recordOne(tape: string, text: string): Promise<void> {
  const f = createFetch({ tape, mode: 'record', fetch: provider, summary: false });
  expect((await f(URL_, chat(text))).status).toBe(200);
  await f.close();
}

describe('a tape renamed over while a writer has it open', () => {
  it('gets no record masked under the old tape salt: the append is refused and says why', async () => {
    const a = join(dir, 'a.tape');
    const b = join(dir, 'b.tape');
    const tape = join(dir, 'rs.tape');
    await recordOne(a, 'branch A question');
    await recordOne(b, 'branch B question');
    copyFileSync(a, tape);
    const saltB = (await scanTape(b)).header.salt;
    expect(saltB).not.toBe((await scanTape(a)).header.salt);

    const w = createFetch({ tape, mode: 'update', fetch: provider, summary: false });
    expect((await w(URL_, chat('branch A question'))).status).toBe(200); // the tape is loaded
    copyFileSync(b, `${tape}.new`);
    renameSync(`${tape}.new`, tape);
    const res = await w(URL_, chat(SECRET));
    const body = await res.text();
    const closed = await w.close().then(
      () => undefined,
      (e: unknown) => e as { code?: string; message?: string },
    );
    // Said, where the caller sees it: the response or the close.
    expect(`${body} ${closed?.code ?? ''} ${closed?.message ?? ''}`).toMatch(/E_TAPE_CHANGED/);
    // Tape B as it was: nothing appended under tape A's salt.
    const after = await readTape(tape);
    expect(after.header.salt).toBe(saltB);
    expect(after.records).toHaveLength(1);
  });

  it('appendRecords given the salt the records were masked under refuses a tape with another', async () => {
    const tape = join(dir, 'direct.tape');
    await createTape(tape, { salt: '00112233445566778899aabbccddeeff' });
    await expect(appendRecords(tape, [{ a: 1 }], { salt: 'ffeeddccbbaa99887766554433221100' })).rejects.toMatchObject({ code: 'E_TAPE_CHANGED' });
    await expect(appendRecords(tape, [{ a: 1 }], { salt: null })).rejects.toMatchObject({ code: 'E_TAPE_CHANGED' });
    expect((await readTape(tape)).records).toHaveLength(0);
    await appendRecords(tape, [{ a: 1 }], { salt: '00112233445566778899aabbccddeeff' });
    expect((await readTape(tape)).records).toHaveLength(1);
  });

  it('a writer that never loaded the tape masked nothing under a salt: its appends are not refused', async () => {
    const tape = join(dir, 'writers.tape');
    const writers = [new TapeBackend(tape), new TapeBackend(tape), new TapeBackend(tape)];
    // One loads (and makes) the tape; the others append to it as they are.
    await writers[0]!.load({ create: true });
    await Promise.all(writers.map((w, i) => w.append([{ v: 1, kind: 'http', key: `k${i}`, recordedAt: '2026-01-01T00:00:00.000Z' }], { durable: true })));
    await Promise.all(writers.map((w) => w.close()));
    expect((await readTape(tape)).records.length).toBe(3);
  });
});
