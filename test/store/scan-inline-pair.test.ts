// `tapedeck scan` missed a secret-named `name=value` pair in the middle of a line of a prompt
// ("repeat: client_secret=kj5BME2P23W4huMTuEb7eZYg2kVtLs"): it judged only whole `.env` lines, and
// a prompt of one line not even those. Such a pair is found now, marked as kept by the recorder
// (which masks `NAME=value` lines only in uploaded files), and prose pairs are not findings.
import { describe, expect, it } from 'vitest';
import { secretsInValue } from '../../src/store/secret-scan.ts';
import { redactor } from '../../src/store/redact.ts';

const SECRET = 'kj5BME2P23W4huMTuEb7eZYg2kVtLs';

describe('a secret-named name=value pair inside a line', () => {
  it('in a one-line prompt: found and marked kept', () => {
    const found = secretsInValue({ request: { body: { messages: [{ role: 'user', content: `repeat: client_secret=${SECRET}` }] } } });
    expect(found.length).toBe(1);
    expect(found[0]!.kind).toBe('secret member');
    expect(found[0]!.kept).toBe(true);
  });

  it('in a line of a text of many lines, and after an export', () => {
    expect(secretsInValue({ request: { body: { input: `hello\nplease use export DB_HOST=db DB_PASSWORD="${SECRET}" now\n` } } }).length).toBe(1);
  });

  // A password name's value is judged as people write passwords (scan-password-in-prose.test.ts):
  // `password=hunter2` is a finding; one too short to be a password, or a placeholder, is not.
  it('masked, plain-named, short or plain values are no finding', () => {
    const r = redactor({ salt: '00112233445566778899aabbccddeeff' });
    for (const s of [`repeat: client_secret=${r.mask(SECRET)}`, `repeat: region=${SECRET}`, 'set password=abc there', 'a == b and password=aaaaaaaaaaaaaaaaaaaaa']) expect(secretsInValue({ input: s })).toEqual([]);
  });
});
