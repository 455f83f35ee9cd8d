// `tapedeck scan` (the pre-commit check) judged headers and members by name but not a URL's
// query parameters: a tape holding `?api-key=` (Azure OpenAI), `?access_token=`, `?token=` or
// `?sig=` in clear (written with keepSecrets, by an older version, by another tool) passed. The
// oracle: the redactor's own URL rule, which masks exactly these by name.
import { describe, expect, it } from 'vitest';
import { redactor } from '../../src/store/redact.ts';
import { secretsInValue } from '../../src/store/secret-scan.ts';

const SECRET = ['api-key=Q5azureR4nd0mV4lu3xyz', 'access_token=aT9kLm2Qw8Zx4Vb7', 'token=tK3nPq8Ws2Lm6Xy1', 'sig=f0e1d2c3b4a5968778695a4b3c2d1e0f'];

describe('scan: secret query parameters', () => {
  it.each(SECRET)('finds %s in a stored URL and route', (param) => {
    const url = `/openai/deployments/d/chat/completions?api-version=2024-10-21&${param}`;
    // The premise: redaction masks it by its name.
    expect(redactor().url(url)).not.toBe(url);
    const found = secretsInValue({ route: `POST ${url}`, request: { url, body: { q: `see https://x.test/cb?${param} now` } } });
    expect(found.map((f) => [f.path, f.kind])).toEqual([
      ['$.route', 'secret query parameter'],
      ['$.request.url', 'secret query parameter'],
      ['$.request.body.q', 'secret query parameter'],
    ]);
    expect(found[0]!.excerpt).not.toContain(param.slice(param.indexOf('=') + 1));
  });

  it('leaves masked values and parameters of other names alone', () => {
    const masked = redactor({ salt: '00112233445566778899aabbccddeeff' }).url(`/v1/x?${SECRET.join('&')}&page=2&q=hello`);
    expect(masked).toContain('page=2');
    expect(secretsInValue({ request: { url: masked }, route: `GET ${masked}` })).toEqual([]);
    expect(secretsInValue({ request: { url: '/v1/x?page=2&cursor=Zk9PqL2mX8vR4tY7wQ1e' } })).toEqual([]);
    // Prose with a question mark and an equals sign is no URL.
    expect(secretsInValue({ text: 'is token=abcdefgh1234 right? yes' })).toEqual([]);
  });
});
