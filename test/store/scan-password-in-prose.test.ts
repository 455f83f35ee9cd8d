// `tapedeck scan` (and the pre-commit hook `tapedeck init` installs) must flag a password kept
// in a prompt as `NAME=value` (the recorder keeps such a line: masking name=value in prose would
// mask ordinary text), as the README promises. It flagged only values of 16 characters or more
// that look random, so the passwords people paste (`hunter2hunter2`) were committed.
import { describe, expect, it } from 'vitest';
import { secretsInValue } from '../../src/store/secret-scan.ts';

const prompt = (line: string) => ({ request: { body: { model: 'm', messages: [{ role: 'user', content: `my config: ${line} - why does the app not connect?` }] } } });

describe('scan: a password named in a line of prose', () => {
  it('flags a human password after a password name, whatever its entropy', () => {
    for (const line of ['DB_PASSWORD=hunter2hunter2', 'password=hunter2', 'PGPASSWORD=Summer2024!', 'db_passwd=letmein99', 'SMTP_PASSWORD=tr0ub4dor']) {
      const found = secretsInValue(prompt(line));
      expect(found.length, line).toBe(1);
      expect(found[0]!.kind).toBe('secret member');
    }
  });

  it('leaves placeholders and masks alone', () => {
    for (const line of ['DB_PASSWORD=changeme', 'DB_PASSWORD=<your password>', 'DB_PASSWORD=${DB_PASSWORD}', 'password=********', 'PASSWORD=xxxxxxxx', 'DB_PASSWORD=[REDACTED:3f9a12ab34cd56ef]', 'password=none', 'DB_PASSWORD={{db_password}}', 'password=your_password']) {
      expect(secretsInValue(prompt(line)), line).toEqual([]);
    }
  });

  it('keeps the long-and-random rule for other secret names (a short token value is not flagged)', () => {
    expect(secretsInValue(prompt('api_token=abc123'))).toEqual([]);
    expect(secretsInValue(prompt('api_token=a8F3kQ9zL2mX7vB1nC4tY6wR0pE5')).length).toBe(1);
  });
});
