// A key after a percent-encoded separator (`api_key%3Dsk-proj-…`: a URL held in a URL's query,
// a form body quoted into a prompt or a cached value) was stored in clear and `tapedeck scan`
// called it clean: the key formats begin at a word boundary, and `D` then `s` is none. Each is
// now masked (keyed: two stay two) and found by the scan; prose with percent signs is left alone.
import { describe, expect, it } from 'vitest';
import { redactor } from '../../src/store/redact.ts';
import { secretsInValue } from '../../src/store/secret-scan.ts';
import { mayHoldCredential } from '../../src/store/credential.ts';
import { redactAnswerBody } from '../../src/store/stream-redact.ts';

const r = redactor({ salt: '00112233445566778899aabbccddeeff' });

const CASES: [string, string][] = [
  ['api_key%3D', 'sk-proj-K9b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0'],
  ['key%3d', 'AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q'],
  ['token%22', 'ghp_abcdefghijklmnopqrstuvwxyz0123456789'],
  ['x-api-key%3A%20', 'sk-ant-api03-abcdefghijklmnopqrstuvwxyz12'],
  ['%3D', 'github_pat_11gWxdzmF2dymW3jRQ0a1b2c3_d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8s9t0u1v2w3x4y5z6'],
];

describe('a key after a percent-encoded separator', () => {
  for (const [before, key] of CASES) {
    it(`${before}${key.slice(0, 8)}…: masked in text, keyed, found by scan and by the quick check`, () => {
      const text = `redirect=https://example.com/cb?${before}${key}&next=1`;
      const out = r.text(text);
      expect(out).not.toContain(key.slice(4));
      expect(out).toContain(`${before}[REDACTED:`);
      expect(out.endsWith('&next=1')).toBe(true);
      expect(r.text(text.replace(key, key.slice(0, -4) + 'ZZZZ'))).not.toBe(out);
      expect(mayHoldCredential(text)).toBe(true);
      expect(secretsInValue({ value: text }).length).toBeGreaterThan(0);
      // In an answer's bytes too.
      const body = new TextEncoder().encode(JSON.stringify({ choices: [{ message: { content: text } }] }));
      expect(new TextDecoder().decode(redactAnswerBody(body, 'application/json', r).body)).not.toContain(key.slice(4));
    });
  }

  it('percent signs in prose and in ordinary URLs are left alone', () => {
    for (const s of ['a 50%3Dsale is on', 'q=hello%20world%3Dsk-learn', 'path%2Fto%2Fa%2Ffile%3Dvalue_of_the_parameter_here', 'growth of 12%3D%3E then 13%']) {
      expect(r.text(s)).toBe(s);
    }
  });
});

describe('the quick check agrees with the search', () => {
  it('a bot token after a percent-encoded slash: masked, and the quick check says the text may hold one', () => {
    const s = 'https://api.telegram.org%2Fbot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw%2FgetMe';
    expect(r.text(s)).not.toContain('AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw');
    expect(mayHoldCredential(s)).toBe(true);
    expect(r.mayHaveSecrets(JSON.stringify({ messages: [{ role: 'user', content: s }] }))).toBe(true);
  });
});
