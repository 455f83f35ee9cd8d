// A key written with JSON escapes (`sk\u002dproj\u002d…`): the request side read it decoded and
// masked it, but an answer echoing the body it got holds it inside a string as JSON text (still
// escaped once decoded), and a JSON answer's raw text shows no key either, so both reached the
// tape while `tapedeck scan`, which parses that text, reported them and said re-recording would
// mask them. Runs of key characters with escapes are read decoded; the key gets the mask its
// request copy got.
import { describe, expect, it } from 'vitest';
import { echoing } from '../../src/store/echo-redact.ts';
import { redactor } from '../../src/store/redact.ts';
import { secretsInValue } from '../../src/store/secret-scan.ts';

const r = redactor({ salt: '00112233445566778899aabbccddeeff' });
const KEY = 'sk-proj-PLANTEDESC09abcdefghijklmnopqrstuv';
const ESCAPED = KEY.replaceAll('-', '\\u002d');
const enc = new TextEncoder();
const dec = new TextDecoder();

describe('a key written with JSON escapes', () => {
  const sent = `{"model":"m","messages":[{"role":"user","content":"my key ${ESCAPED}"}]}`;

  it('is masked where an answer echoes the request body inside a string, with the request copy\'s mask', () => {
    const request = JSON.stringify(r.value(JSON.parse(sent)));
    expect(request).toContain(r.mask(KEY));
    const answer = enc.encode(JSON.stringify({ id: 'r1', echo: { body: sent } }));
    const masks = echoing(r, { headers: { 'content-type': 'application/json' }, url: '/v1/chat/completions', body: enc.encode(sent) });
    const stored = dec.decode(masks.bytes(answer, 'application/json'));
    expect(stored).not.toContain('PLANTED');
    expect(JSON.parse(JSON.parse(stored).echo.body).messages[0].content).toBe(`my key ${r.mask(KEY)}`);
    // What scan reports of the answer as sent, it does not of the answer as stored.
    expect(secretsInValue({ response: { body: answer } }).length).toBeGreaterThan(0);
    expect(secretsInValue({ response: { body: enc.encode(stored) } })).toEqual([]);
  });

  it('is masked in a JSON answer whose raw text escapes it', () => {
    const answer = enc.encode(`{"choices":[{"message":{"content":"your key ${ESCAPED}"}}]}`);
    const stored = dec.decode(r.bytes(answer, 'application/json'));
    expect(stored).not.toContain('PLANTED');
    expect(JSON.parse(stored).choices[0].message.content).toBe(`your key ${r.mask(KEY)}`);
  });

  it('leaves escapes around no key alone, and a long run without escapes costs no backtracking', () => {
    const plain = 'caf\\u00e9 and \\u002d-dash and path\\u002fto\\u002ffile';
    expect(r.text(plain)).toBe(plain);
    const long = `${'a'.repeat(200_000)}\\u0041 x`;
    const t0 = performance.now();
    expect(r.text(long)).toBe(long);
    expect(performance.now() - t0).toBeLessThan(500);
  });
});
