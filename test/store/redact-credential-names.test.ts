// Common credential names were kept in clear: JSON members `api_token`, `github_token`,
// `bot_token`, `hf_token`, `slack_token`, `OPENAI_KEY`, `stripe_key`, `encryption_key`,
// `master_key`, `license_key`, `signing_key`, `passphrase`, `pass`, `pwd`, `auth`, `bearer`,
// `jwt`, `credential`, `mnemonic`, `seed_phrase`; query `?pass=`, `?pwd=`, `?bearer=`; headers
// `x-pass`, `x-pwd`, `x-cred(s)`, `x-my-authz`; `secret_token:` in an uploaded YAML file. Each is
// masked now (keyed), and names that only look alike (`max_tokens`, `eos_token`, `page_token`,
// `idempotency_key`, `token`, `session`) are kept.
import { describe, expect, it } from 'vitest';
import { redactor } from '../../src/store/redact.ts';
import { envSecrets } from '../../src/store/env-secrets.ts';
import { secretsInValue } from '../../src/store/secret-scan.ts';

const r = redactor({ salt: '00112233445566778899aabbccddeeff' });
const V = 'AF4NeZmBmkqqiS9uFNaB2vYXiNb2KmHUv9V6CLv2';

const SECRET_MEMBERS = ['api_token', 'github_token', 'bot_token', 'hf_token', 'slack_token', 'OPENAI_KEY', 'stripe_key', 'encryption_key', 'master_key', 'license_key', 'signing_key', 'passphrase', 'pass', 'pwd', 'auth', 'bearer', 'jwt', 'credential', 'mnemonic', 'seed_phrase', 'secret_token', 'connection_string'];
const PLAIN_MEMBERS = ['max_tokens', 'eos_token', 'page_token', 'next_token', 'idempotency_key', 'token', 'session', 'prompt_cache_key', 'passage', 'bypass', 'author'];

describe('credential names', () => {
  for (const name of SECRET_MEMBERS) {
    it(`member ${name} is masked, keyed, and scan judges it secret`, () => {
      const out = r.value({ metadata: { a: { [name]: V } } });
      expect(out.metadata.a[name]).toMatch(/^\[REDACTED:[0-9a-f]{16}\]$/);
      expect(secretsInValue({ metadata: { [name]: V } }).length).toBeGreaterThan(0);
    });
  }
  it('names that only look alike are kept', () => {
    for (const name of PLAIN_MEMBERS) expect(r.value({ [name]: V })[name]).toBe(V);
  });
  it('query parameters and headers', () => {
    for (const q of ['pass', 'pwd', 'bearer']) expect(r.url(`/v1/x?${q}=${V}&a=1`)).not.toContain(V);
    for (const h of ['x-pass', 'x-pwd', 'x-cred', 'x-creds', 'x-my-authz', 'x-session-cred']) expect(r.headers({ [h]: V })[h]).not.toBe(V);
    expect(r.headers({ 'x-passage': 'chapter-one' })['x-passage']).toBe('chapter-one');
  });
  it('a secret_token line of an uploaded YAML file', () => {
    expect(envSecrets(`server:\n  secret_token: GLz7wxuCUj6eKTSPkW8EYoxGrZrFEE\n`, r)).not.toContain('GLz7wxuCUj6eKTSPkW8EYoxGrZrFEE');
  });
});
