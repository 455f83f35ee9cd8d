// A key on a line of its own in a raw JSON answer (`"Here is the key:\nsk-proj-…"`, what a model
// writes when asked for a config file or an env line) was stored in clear, for every key format,
// and `tapedeck scan` called the tape clean: answers are redacted as the bytes they came in (a
// replay gives them back byte for byte), where the escape's letter `n` stands before the key and
// the key formats' word boundary fails. Request bodies were masked (they are read parsed). Each
// is now masked (keyed: two keys stay two answers), in one body and in a stream, and found by the
// scan; the AWS access key id after an escape too, with its secret. Text without a key is kept.
import { createServer } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { redactor } from '../../src/store/redact.ts';
import { secretsInValue } from '../../src/store/secret-scan.ts';
import { mayHoldCredential } from '../../src/store/credential.ts';
import { redactAnswerBody } from '../../src/store/stream-redact.ts';
import { createFetch } from '../../src/proxy/fetch.ts';

const r = redactor({ salt: '00112233445566778899aabbccddeeff' });
const KEYS = [
  'sk-proj-K9b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0',
  'sk-ant-api03-abcdefghijklmnopqrstuvwxyz12',
  'AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q',
  'ghp_abcdefghijklmnopqrstuvwxyz0123456789',
  'xoxb-1234567890-abcdefghijklmnopqrstuv',
  'AKIAQ3EGRT6VNZB7XK2M',
];
const ESCAPES = ['\\n', '\\t', '\\r', '\\n\\n', '\\u00a0'];
const decode = (b: Uint8Array) => new TextDecoder().decode(b);
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('a key right after a JSON escape, in raw JSON text', () => {
  for (const key of KEYS)
    for (const esc of ESCAPES) {
      it(`${JSON.stringify(esc)} then ${key.slice(0, 8)}…: masked in an answer body, keyed, found by the scan and the quick check`, () => {
        const raw = `{"choices":[{"message":{"content":"Here is the key:${esc}${key}${esc}keep it safe"}}]}`;
        const bytes = new TextEncoder().encode(raw);
        const out = decode(redactAnswerBody(bytes, 'application/json', r).body);
        expect(out).not.toContain(key.slice(4));
        expect(out).toContain(`Here is the key:${esc}[REDACTED:`);
        expect(out).toContain(`${esc}keep it safe`);
        // Keyed: another key gives another stored answer.
        const other = key.slice(0, -4) + 'WXYZ';
        expect(decode(redactAnswerBody(new TextEncoder().encode(raw.replace(key, other)), 'application/json', r).body)).not.toBe(out);
        expect(r.text(raw)).not.toContain(key.slice(4));
        expect(mayHoldCredential(raw)).toBe(true);
        expect(secretsInValue({ value: raw }).length).toBeGreaterThan(0);
      });
    }

  it('in a stream, split across events after the escape', () => {
    const key = KEYS[0]!;
    const pieces = ['Here is the key:\n', key.slice(0, 11), key.slice(11), '\nkeep it safe'];
    const sse = pieces.map((p) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: p } }] })}\n\n`).join('') + 'data: [DONE]\n\n';
    const out = decode(redactAnswerBody(new TextEncoder().encode(sse), 'text/event-stream', r).body);
    expect(out).not.toContain(key.slice(11));
    expect(out).not.toContain(key.slice(0, 11) + key.slice(11, 14));
  });

  it("an AWS secret access key after its id on the next line", () => {
    const id = 'AKIAQ3EGRT6VNZB7XK2M';
    const secret = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq3Lm8Pd0T';
    const raw = `{"content":"Your credentials:\\n${id}\\n${secret}\\nrotate them"}`;
    const out = decode(redactAnswerBody(new TextEncoder().encode(raw), 'application/json', r).body);
    expect(out).not.toContain(id);
    expect(out).not.toContain(secret);
    // The id and the secret, each a finding of its own.
    expect(secretsInValue({ value: raw }).length).toBeGreaterThanOrEqual(2);
  });

  it('escapes before words, short tokens and paths are kept as they are', () => {
    for (const raw of [
      '{"content":"line one\\nThe quick brown fox\\tjumps"}',
      '{"content":"use\\nsk-learn for that\\nand numpy"}',
      '{"content":"C:\\\\Users\\\\nobody\\\\Documents\\\\notes.txt"}',
      '{"content":"\\nabcdefghijklmnopqrstuvwxyz is the alphabet"}',
      '{"url":"https:\\/\\/example.com\\/a\\/b\\/c\\/d\\/e\\/f\\/g"}',
    ]) {
      expect(decode(redactAnswerBody(new TextEncoder().encode(raw), 'application/json', r).body)).toBe(raw);
      expect(secretsInValue({ value: raw })).toEqual([]);
    }
  });

  it('createFetch records such an answer without the key, and replays it', async () => {
    const key = KEYS[0]!;
    const answer = JSON.stringify({ choices: [{ message: { role: 'assistant', content: `Here is the key:\n${key}\nkeep it safe` } }] });
    const srv = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(answer);
    });
    await new Promise<void>((ok) => srv.listen(0, '127.0.0.1', ok));
    const dir = mkdtempSync(join(tmpdir(), 'tapedeck-escaped-key-'));
    dirs.push(dir);
    const tape = join(dir, 'a.tape');
    const url = `http://127.0.0.1:${(srv.address() as { port: number }).port}/v1/chat/completions`;
    const init = { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'what key?' }] }) };
    try {
      const rec = createFetch({ tape, mode: 'record' });
      await (await rec(url, init)).text();
      await rec.close();
    } finally {
      srv.close();
    }
    expect(readFileSync(tape).includes(Buffer.from(key.slice(8)))).toBe(false);
    const play = createFetch({ tape, mode: 'replay' });
    const text = await (await play(url, init)).text();
    await play.close();
    expect(text).toContain('Here is the key:\\n[REDACTED:');
    expect(text).not.toContain(key.slice(8));
  });
});
