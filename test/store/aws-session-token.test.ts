// Temporary AWS credentials pasted whole (a `~/.aws/credentials` profile, `export AWS_…=` lines,
// what `aws sts assume-role` prints): the `ASIA…` id and its secret were masked, and the session
// token beside them stored as typed, hundreds of characters of it. Beside a temporary id, a run of
// base64 that starts as STS writes its tokens is masked too, keyed, in a prompt, an answer, and
// across two strings of one body, and `tapedeck scan` reports it in a record written before.
import { describe, expect, it } from 'vitest';
import { redactor } from '../../src/store/redact.ts';
import { secretsInValue } from '../../src/store/secret-scan.ts';
import { rng } from '../reference.ts';

const r = redactor({ salt: '0123456789abcdef0123456789abcdef' });
const g = rng(9127);
const bytes = (n: number): Buffer => Buffer.from(Array.from({ length: n }, () => Math.floor(g() * 256)));
const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const ID = `ASIA${Array.from({ length: 16 }, () => `${UPPER}234567`[Math.floor(g() * 32)]).join('')}`;
const SECRET = (() => {
  for (;;) {
    const s = bytes(30).toString('base64');
    if (/[a-z]/.test(s) && /[A-Z]/.test(s)) return s;
  }
})();
/** A session token as STS writes them: its fixed first bytes, then random ones, in base64. */
const token = (): string => Buffer.concat([Buffer.from('\x21\x0a\x09origin_ec', 'latin1'), bytes(420)]).toString('base64');
const TOKEN = token();
const run = TOKEN.replace(/=+$/, '');
const chat = (...contents: string[]) => ({ model: 'gpt-4o', messages: contents.map((content) => ({ role: 'user', content })) });
const storedText = (v: unknown): string => JSON.stringify(r.value(v));

describe('an AWS session token beside its temporary id', () => {
  it('is masked in a prompt, however the three are written', () => {
    expect(TOKEN.startsWith('IQoJb3JpZ2lu')).toBe(true);
    for (const t of [
      `[default]\naws_access_key_id = ${ID}\naws_secret_access_key = ${SECRET}\naws_session_token = ${TOKEN}\n`,
      `export AWS_ACCESS_KEY_ID=${ID} AWS_SECRET_ACCESS_KEY=${SECRET} AWS_SESSION_TOKEN=${TOKEN}`,
      `{"Credentials": {"AccessKeyId": "${ID}", "SecretAccessKey": "${SECRET}", "SessionToken": "${TOKEN}"}}`,
    ]) {
      const out = storedText(chat(t));
      expect(out, t).not.toContain(run.slice(20, 60));
      expect(out).toContain(r.mask(run));
      expect(out).not.toContain(SECRET);
    }
    // Two tokens, two requests.
    expect(storedText(chat(`${ID} ${SECRET} ${TOKEN}`))).not.toBe(storedText(chat(`${ID} ${SECRET} ${token()}`)));
  });

  it('is masked in another message than its id', () => {
    const out = storedText(chat(`id ${ID}`, `secret ${SECRET}`, `token ${TOKEN}`));
    expect(out).not.toContain(run.slice(20, 60));
  });

  it('leaves a base64 image beside the id alone, and a token beside a long-term id', () => {
    const image = `data:image/png;base64,${bytes(300).toString('base64')}`;
    const body = { model: 'gpt-4o', messages: [{ role: 'user', content: [{ type: 'text', text: `creds ${ID}` }, { type: 'image_url', image_url: { url: image } }] }] };
    expect(storedText(body)).toContain(image);
    const longTerm = `AKIA${ID.slice(4)}`;
    expect(storedText(chat(`${longTerm} then ${TOKEN}`))).toContain(TOKEN);
  });

  it('is reported by scan in a record written before', () => {
    const found = secretsInValue({ v: 1, kind: 'http', request: { method: 'POST', url: '/v1/chat/completions', headers: {}, body: chat(`export AWS_ACCESS_KEY_ID=${ID} AWS_SECRET_ACCESS_KEY=${SECRET} AWS_SESSION_TOKEN=${TOKEN}`) } });
    expect(found.map((f) => f.excerpt)).toContain(`"IQoJ…" (${run.length} chars)`);
  });
});
