// An AWS access key id and its secret access key sent in two request headers of plain names
// (`x-aws-access-key: AKIA…`, `x-aws-sak: wJalr…`, as a gateway in front of Bedrock takes them)
// were stored with the id masked and the secret as sent: a header is redacted alone, and no
// name said the second was a secret. The secret is masked now, keyed as the id's secret is
// elsewhere (two secrets stay two requests), and `tapedeck scan` reports it in older tapes.
import { describe, expect, it } from 'vitest';
import { redactor } from '../../src/store/redact.ts';
import { secretsInValue } from '../../src/store/secret-scan.ts';
import { awsKeys } from './aws-keys.ts';

const r = redactor({ salt: '0123456789abcdef0123456789abcdef' });
const { newSecret, newId } = awsKeys(8123, { slash: true });
const ID = newId();
const SECRET = newSecret();
const OTHER = newSecret();

const sent = (secret: string, name = 'x-aws-sak') => ({
  'content-type': 'application/json',
  'user-agent': 'my-gateway-client/1.4.2 (linux; node 20.20.0) with a long description of itself here',
  'x-aws-access-key': ID,
  [name]: secret,
  'x-aws-region': 'us-east-1',
});

describe('an AWS secret in a header of a plain name beside its id in another', () => {
  it('is masked, keyed, under any plain name, the other headers kept', () => {
    for (const name of ['x-aws-sak', 'x-aws-secret-access', 'x-amz-sk']) {
      const out = r.headers(sent(SECRET, name));
      expect(JSON.stringify(out), name).not.toContain(SECRET.slice(0, 12));
      expect(out[name]).toBe(r.mask(SECRET));
      expect(out['x-aws-region']).toBe('us-east-1');
      expect(out['content-type']).toBe('application/json');
      expect(r.headers(sent(OTHER, name))[name]).not.toBe(out[name]);
    }
  });

  it('leaves a 40-character header alone without an id', () => {
    const h = { 'x-request-hash': SECRET, 'x-aws-region': 'us-east-1' };
    expect(r.headers(h)).toEqual(h);
  });

  it('is found by scan in a tape recorded before', () => {
    const rec = { v: 1, kind: 'http', request: { method: 'POST', url: '/model/invoke', headers: sent(SECRET), body: { q: 'hi' } } };
    expect(secretsInValue(rec).map((f) => f.excerpt)).toContain(`"${SECRET.slice(0, 4)}…" (40 chars)`);
  });
});
