// A damaged tape header (its metadata CRC-32 fails) lost its redaction salt with it, although
// the salt bytes themselves were intact: every recording holding a keyed mask (`[REDACTED:…]`,
// made under that salt) stopped matching, and `prune`'s fresh header with a new salt made the
// loss final. A salt that still reads whole (32 lowercase hex digits after the `salt` key) is now
// kept: reading uses it, the warning says so, and the rewrite's fresh header carries it.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { rewriteTape, scanTape } from '../../src/store/tape-file.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-header-salt-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const URL_ = 'https://api.openai.com/v1/chat/completions';
const SECRET = 'why does my call with Bearer eyJhbGciOiJIUzI1NiJ9.abcdefghijklmnop.qrstuvwxyz012345 fail?';
const chat = (text: string) => ({ method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }] }) });
let n = 0;
const provider = (async () => {
  n++;
  return new Response(JSON.stringify({ id: `chatcmpl-${n}`, object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: `answer ${n}` }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }), { headers: { 'content-type': 'application/json' } });
}) as typeof fetch;
const down = (async () => {
  throw new Error('replay must not reach the provider');
}) as typeof fetch;

async function replayed(tape: string, text: string): Promise<{ status: number; body: string }> {
  const f = createFetch({ tape, mode: 'replay', fetch: down, summary: false });
  try {
    const res = await f(URL_, chat(text));
    return { status: res.status, body: await res.text() };
  } finally {
    await f.close().catch(() => {});
  }
}

describe('a header whose metadata CRC fails but whose salt is intact', () => {
  it('keeps the salt for reading and through prune, so keyed masks keep matching', async () => {
    const tape = join(dir, 'salted.tape');
    const rec = createFetch({ tape, mode: 'record', fetch: provider, summary: false });
    expect((await rec(URL_, chat(SECRET))).status).toBe(200);
    await rec.close();
    const salt = (await scanTape(tape)).header.salt;
    expect(salt).toMatch(/^[0-9a-f]{32}$/);
    expect(readFileSync(tape).includes('[REDACTED:')).toBe(true);

    // One bit of the `created` timestamp flipped: the metadata CRC fails, the salt is untouched.
    const bytes = readFileSync(tape);
    const at = bytes.indexOf('created') + 'created'.length + 4;
    bytes[at] = bytes[at]! ^ 0x01;
    writeFileSync(tape, bytes);

    const scan = await scanTape(tape);
    expect(scan.header.headerLost).toBe(true);
    expect(scan.header.salt).toBe(salt);
    const w = scan.warnings.find((x) => x.code === 'E_TAPE_HEADER');
    expect(w?.message).toMatch(/redaction salt .*kept/);

    const r = await replayed(tape, SECRET);
    expect(r.status, r.body).toBe(200);
    expect(r.body).toContain('answer 1');

    // prune's fresh header carries the salt: still served afterwards.
    const p = await rewriteTape(tape, () => true);
    expect(p.freshHeader).toBe('damaged');
    const pruned = await scanTape(tape);
    expect(pruned.header.headerLost).toBeUndefined();
    expect(pruned.header.salt).toBe(salt);
    const again = await replayed(tape, SECRET);
    expect(again.status, again.body).toBe(200);
  });

  it('a salt whose own bytes are damaged is not guessed at: the header is lost with it', async () => {
    const tape = join(dir, 'bad-salt.tape');
    const rec = createFetch({ tape, mode: 'record', fetch: provider, summary: false });
    await rec(URL_, chat('plain question'));
    await rec.close();
    const bytes = readFileSync(tape);
    const at = bytes.indexOf('salt') + 'salt'.length + 2 + 5;
    bytes[at] = bytes[at]! ^ 0xff; // no longer a hex digit
    writeFileSync(tape, bytes);
    const scan = await scanTape(tape);
    expect(scan.header.headerLost).toBe(true);
    expect(scan.header.salt).toBeUndefined();
  });
});
