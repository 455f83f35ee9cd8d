// A password in a URL's userinfo inside a prompt, a tool result or an answer
// (`https://admin:PASSWORD@host`, `postgres://app:PASSWORD@host:5432/db`, the agent that read
// DATABASE_URL) was stored in clear and missed by `tapedeck scan`. The password gets a keyed
// mask (two passwords stay two keys), the user name and host are kept, and the scan finds it.
import { describe, expect, it } from 'vitest';
import { redactor } from '../../src/store/redact.ts';
import { secretsInValue } from '../../src/store/secret-scan.ts';

const r = redactor({ salt: '00112233445566778899aabbccddeeff' });

describe('a URL userinfo password in stored text', () => {
  it('is masked with a keyed mask, the rest of the URL kept', () => {
    const prompt = 'fetch https://admin:PwYsKmuhCikaVoYDxxeQ@db.example.com/x and postgres://app:Db777fMoaSjuBkwK7ZZm@pg.internal:5432/prod';
    const out = r.text(prompt);
    expect(out).not.toContain('PwYsKmuhCikaVoYDxxeQ');
    expect(out).not.toContain('Db777fMoaSjuBkwK7ZZm');
    expect(out).toMatch(/^fetch https:\/\/admin:\[REDACTED:[0-9a-f]{16}\]@db\.example\.com\/x and postgres:\/\/app:\[REDACTED:[0-9a-f]{16}\]@pg\.internal:5432\/prod$/);
    expect(r.text('postgres://app:OtherPassw0rd777@pg.internal:5432/prod')).not.toBe(r.text('postgres://app:Db777fMoaSjuBkwK7ZZm@pg.internal:5432/prod'));
    // Idempotent: a stored record redacted again is unchanged.
    expect(r.text(out)).toBe(out);
  });

  it('in a JSON body: masked before keying, and in an answer\'s bytes', () => {
    const body = { messages: [{ role: 'tool', content: 'DATABASE_URL=postgres://app:Db777fMoaSjuBkwK7ZZm@pg.internal:5432/prod' }] };
    expect(r.mayHaveSecrets(JSON.stringify(body))).toBe(true);
    expect(JSON.stringify(r.value(body))).not.toContain('Db777fMoaSjuBkwK7ZZm');
    const answer = new TextEncoder().encode(JSON.stringify({ output: 'connect with mysql://root:Rt9xQ2wE5rT8yU1i@10.0.0.5/app' }));
    expect(new TextDecoder().decode(r.bytes(answer, 'application/json'))).not.toContain('Rt9xQ2wE5rT8yU1i');
  });

  it('is found by scan', () => {
    expect(secretsInValue({ input: 'fetch https://admin:PwYsKmuhCikaVoYDxxeQ@db.example.com/x' }).length).toBeGreaterThan(0);
    expect(secretsInValue({ input: r.text('fetch https://admin:PwYsKmuhCikaVoYDxxeQ@db.example.com/x') })).toEqual([]);
  });

  it('placeholders and URLs without a password are left alone', () => {
    for (const s of [
      'use postgres://user:password@localhost:5432/db in development',
      'postgres://app:${DB_PASSWORD}@pg.internal/prod',
      'https://user:<password>@example.com/',
      'https://alice@example.com/repo.git and ssh://git@github.com:22/x.git',
      'redis://:****@cache:6379',
    ]) expect(r.text(s)).toBe(s);
  });
});

describe('a URL password in JSON text with escaped slashes', () => {
  it('is seen by the cheap test, and masked on the parse', () => {
    const raw = '{"input":"postgres:\\/\\/app:Db777fMoaSjuBkwK7ZZm@pg.internal\\/prod"}';
    expect(r.mayHaveSecrets(raw)).toBe(true);
    expect(JSON.stringify(r.value(JSON.parse(raw)))).not.toContain('Db777fMoaSjuBkwK7ZZm');
  });
});
