// A Google OAuth client secret (`GOCSPX-…`, what the Cloud console's copy button and a client's
// client_secret.json hold) was masked under its member name only: pasted into a prompt ("my
// client id is …apps.googleusercontent.com and the secret GOCSPX-…"), or repeated by a model, it
// was stored as typed, and `tapedeck scan` did not report it. It is a key format now: masked,
// keyed (two secrets stay two requests), in prompts and answers, and reported by scan.
import { describe, expect, it } from 'vitest';
import { redactor } from '../../src/store/redact.ts';
import { secretsInValue } from '../../src/store/secret-scan.ts';
import { rng } from '../reference.ts';

const r = redactor({ salt: '0123456789abcdef0123456789abcdef' });
const g = rng(6203);
const CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-';
const secret = (): string => `GOCSPX-${Array.from({ length: 28 }, () => CHARS[Math.floor(g() * CHARS.length)]).join('')}`;
const SECRET = secret();
const chat = (content: string) => ({ model: 'gpt-4o', messages: [{ role: 'user', content }] });
const stored = (t: string): string => (r.value(chat(t)) as ReturnType<typeof chat>).messages[0]!.content;

describe('a Google OAuth client secret', () => {
  it('is masked in a prompt and an answer, keyed', () => {
    const t = `client id 1234-abc.apps.googleusercontent.com, secret ${SECRET}, why invalid_client?`;
    expect(stored(t)).toBe(t.replace(SECRET, r.mask(SECRET)));
    expect(stored(`secret ${SECRET}`)).not.toBe(stored(`secret ${secret()}`));
    const answer = new TextDecoder().decode(r.bytes(new TextEncoder().encode(JSON.stringify({ text: `Use\n${SECRET}\nas the secret.` })), 'application/json'));
    expect(answer).not.toContain(SECRET);
  });

  it('is reported by scan in a record written before', () => {
    const found = secretsInValue({ v: 1, kind: 'http', request: { method: 'POST', url: '/v1/chat/completions', headers: {}, body: chat(`secret ${SECRET}`) } });
    expect(found.map((f) => f.excerpt)).toContain(`"GOCS…" (35 chars)`);
  });

  it('leaves a shorter or longer word with the prefix alone', () => {
    for (const t of ['GOCSPX-short', `GOCSPX-${'a'.repeat(29)}`]) expect(stored(t)).toBe(t);
  });
});
