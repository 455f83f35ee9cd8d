// A prompt that is nothing but one `DB_PASSWORD=hunter2hunter2` line (the example the docs give
// of what the recorder keeps and scan flags) was read as a form, whose fields got only the
// long-and-random rule, and one `password: hunter2hunter2` line was never read as a YAML line:
// scan found nothing and the pre-commit hook let the password through. A whole string is now
// judged as the same line inside a longer prompt is.
import { describe, expect, it } from 'vitest';
import { secretsInValue } from '../../src/store/secret-scan.ts';

const prompt = (content: string) => ({ v: 1, kind: 'http', request: { method: 'POST', url: '/v1/chat/completions', headers: {}, body: { model: 'm', messages: [{ role: 'user', content }] } } });

describe('scan: a prompt that is one password line', () => {
  it('flags a typed password as NAME=value or name: value, marked kept by the recorder', () => {
    for (const line of ['DB_PASSWORD=hunter2hunter2', 'password: hunter2hunter2', 'PGPASSWORD=Summer2024!', 'db_passwd: letmein99']) {
      const found = secretsInValue(prompt(line));
      expect(found.length, line).toBe(1);
      expect(found[0]!.kind, line).toBe('secret member');
      expect(found[0]!.kept, line).toBe(true);
      expect(found[0]!.path, line).toContain('$.request.body.messages[0].content');
    }
  });

  it('flags it in a form body too (an old tape: the recorder masks a form body), unmarked', () => {
    const found = secretsInValue({ v: 1, kind: 'http', request: { method: 'POST', url: '/token', headers: {}, body: 'grant_type=password&username=ann&password=hunter2hunter2' } });
    expect(found.map((f) => [f.kind, f.kept === true])).toEqual([['secret member', false]]);
  });

  it('leaves placeholders, masks and names that are no password alone', () => {
    for (const line of ['DB_PASSWORD=changeme', 'password: <your password>', 'DB_PASSWORD=${DB_PASSWORD}', 'password: ********', 'DB_PASSWORD=[REDACTED:3f9a12ab34cd56ef]', 'api_token=abc123', 'user: hunter2hunter2', 'time: 12:30 today']) {
      expect(secretsInValue(prompt(line)), line).toEqual([]);
    }
  });
});
