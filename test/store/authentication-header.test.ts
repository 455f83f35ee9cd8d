// A key sent in an `Authentication` header (a misnomer some gateways and in-house APIs take
// their key in) was stored in clear when its value had no `Bearer`/`Token` word before it, and
// `tapedeck scan` called such a tape clean: the header rules know a name by its last word, and
// `authentication` was not among the words. It is now masked (keyed: two keys stay two requests)
// like `authorization`, in a header or a query parameter, and scan reports one on an older tape.
import { describe, expect, it } from 'vitest';
import { redactor } from '../../src/store/redact.ts';
import { secretsInValue } from '../../src/store/secret-scan.ts';

const r = redactor({ salt: '00112233445566778899aabbccddeeff' });
const KEY = 'q8ZrT2vLm4Xc9NpB7wKd3FhJ6sYa1Ge5';

describe('a key in an Authentication header', () => {
  it('is masked with a keyed mask under each spelling, and two keys stay two', () => {
    for (const name of ['Authentication', 'authentication', 'X-Authentication', 'Proxy-Authentication', 'x-authn', 'X-Gateway-Authentication']) {
      expect(r.isSecretHeader(name), name).toBe(true);
      const out = r.headers({ [name]: KEY, accept: 'application/json' });
      expect(out[name], name).toMatch(/^\[REDACTED:[0-9a-f]{16}\]$/);
      expect(out.accept).toBe('application/json');
      expect(r.headers({ [name]: `${KEY}x` })[name]).not.toBe(out[name]);
    }
  });

  it('in a query parameter too', () => {
    const u = r.url(`https://gw.example.com/v1/chat?authentication=${KEY}&model=m`);
    expect(u).not.toContain(KEY);
    expect(u).toContain('model=m');
  });

  it('names that only hold the word keep their values', () => {
    for (const name of ['WWW-Authenticate', 'x-authentication-method', 'authentication-scheme']) {
      expect(r.isSecretHeader(name), name).toBe(false);
      expect(r.headers({ [name]: 'Bearer realm="api"' })[name]).toBe('Bearer realm="api"');
    }
  });

  it('tapedeck scan reports one stored in clear', () => {
    const found = secretsInValue({ request: { method: 'POST', url: 'https://gw.example.com/v1/chat', headers: { authentication: KEY } } });
    expect(found.map((f) => f.path)).toContain('$.request.headers.authentication');
  });
});
