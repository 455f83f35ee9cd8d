// `tapedeck scan` missed a secret-named member written as JSON text inside a string (a prompt or a
// JSONL batch line whose message holds `config: {"client_secret": "…"}`), which the recorder masks
// (redaction's JSON text inside a string). A tape made before that, or with keepSecrets, passed
// the scan. It now reports such a member's value, judged as a secret-named member's is.
import { expect, it } from 'vitest';
import { secretsInValue } from '../../src/store/secret-scan.ts';

const SECRET = 'Mn2bV6cX0zL8kJ4hG7fD1sA5';

it.each([
  `config: {"client_secret":"${SECRET}"}`,
  `config: {"password": "${SECRET}"}`,
  `{"custom_id":"a","body":{"messages":[{"role":"user","content":"cfg {\\"api_key\\":\\"${SECRET}\\"}"}]}}`,
])('finds the secret-named member in %s', (text) => {
  const found = secretsInValue({ request: { body: { messages: [{ role: 'user', content: text }] } } });
  expect(found.map((f) => f.kind)).toContain('secret member');
  expect(found.some((f) => SECRET.startsWith(f.excerpt.replace(/….*$/, '')) || f.excerpt.includes(SECRET.slice(0, 4)))).toBe(true);
});

it('leaves members that are not secrets, masks, placeholders and short values', () => {
  for (const text of [
    `config: {"city":"${SECRET}"}`,
    'config: {"password":"[REDACTED:0123456789abcdef]"}',
    'config: {"password":"changeme"}',
    'config: {"password":""}',
  ]) {
    expect(secretsInValue({ request: { body: { messages: [{ role: 'user', content: text }] } } }), text).toEqual([]);
  }
});
