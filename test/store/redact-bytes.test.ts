// A JSON answer's secret members are masked by name whatever way the name is spelled: the
// redactor's bytes() against the reference, its value() of the parsed body (names folded as
// the redactor folds them: lowercase, `-` and `_` dropped). For random JSON bodies holding
// members named by secret and ordinary names spelled with doubled separators, JSON escapes,
// other case, non-ASCII letters that lowercase to ASCII, at any depth: a value the reference
// masks never reaches the stored bytes, a body the reference leaves alone is stored byte for
// byte (credential-looking text masked in place), and a body with a masked member is the
// reference's redaction, re-serialized; the same when the caller gives the body's text and parse.
import { describe, expect, it } from 'vitest';
import { redactor } from '../../src/store/redact.ts';
import { rng } from '../reference.ts';

const r = redactor({ salt: '0123456789abcdef0123456789abcdef' });

/** Spellings of a name in JSON text: as is, escaped, separators doubled, other case. */
function spellings(name: string): string[] {
  const esc = name.replace(/[a-z_]/, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return [
    JSON.stringify(name),
    `"${esc}"`,
    JSON.stringify(name.replace(/[-_]/g, '__')),
    JSON.stringify(name.replace(/[-_]/g, '-_')),
    JSON.stringify(name.toUpperCase()),
    // KELVIN SIGN lowercases to k.
    JSON.stringify(name.replace(/k/, '\u212a')),
  ];
}

const SECRET = ['api_key', 'password', 'client_secret', 'x-api-key', 'openaiApiKey', 'access_token'];
const PLAIN = ['model', 'content', 'token', 'id', 'next_page_token', 'keys'];

/**
 * Random JSON texts of members named by secret and ordinary names in those spellings, at any
 * depth, and the values each holds (`v<i>-<n>-value`).
 */
function* bodies(seed: number, count: number): Generator<{ text: string; values: string[]; i: number }> {
  const g = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(g() * xs.length)]!;
  for (let i = 0; i < count; i++) {
    const values: string[] = [];
    let n = 0;
    // One member per name in an object (JSON.parse keeps the last of duplicates).
    const member = (depth: number, taken: Set<string>): string => {
      let name = pick(spellings(pick(g() < 0.3 ? SECRET : PLAIN)));
      while (taken.has(JSON.parse(name) as string)) name = `"x${taken.size}${name.slice(1)}`;
      taken.add(JSON.parse(name) as string);
      const v = `v${i}-${n++}-value`;
      const inner = depth < 3 && g() < 0.3 ? `{${member(depth + 1, new Set(['n']))},"n":1}` : g() < 0.1 ? `[${JSON.stringify(v)},{${member(depth + 1, new Set())}}]` : JSON.stringify(v);
      if (inner.includes(v)) values.push(v);
      return `${name}:${inner}`;
    };
    const top = new Set(['note']);
    const text = `{${Array.from({ length: 1 + Math.floor(g() * 4) }, () => member(0, top)).join(',')}${g() < 0.2 ? ',"note":"Bearer sk-proj-abcdefghijklmnopqrstuvwxyz0123"' : ''}}`;
    yield { text, values, i };
  }
}

describe('redactor bytes() of JSON answers', () => {
  it('masks every member its value() masks, however the name is spelled, and nothing else', () => {
    let leaked = 0;
    for (const { text, values } of bodies(8080, 400)) {
      const body = Buffer.from(text);
      const out = Buffer.from(r.bytes(body, 'application/json')).toString();
      const reference = JSON.stringify(r.value(JSON.parse(text)));
      // What a caller already has (the text, the parse) changes nothing.
      expect(Buffer.from(r.bytes(body, 'application/json', { ascii: text, parsed: { value: JSON.parse(text) } })).toString()).toBe(out);
      for (const v of values) {
        // The reference keeps the value: stored; the reference masks it: not stored.
        const kept = reference.includes(`"${v}"`);
        if (out.includes(v) !== kept) leaked++;
        expect(out.includes(v), `${v} in ${text} -> ${out}`).toBe(kept);
      }
      if (values.some((v) => !reference.includes(`"${v}"`))) expect(out, text).toBe(reference);
      else expect(out).toBe(r.text(text));
    }
    expect(leaked).toBe(0);
  });
});

describe('redactor mayHaveSecrets() of request bodies', () => {
  // The proxy keys a request body from its raw bytes when this says no secret can be in it, and
  // recordings were keyed from the redacted body: a secret member it missed (a name spelled with
  // an escape, doubled separators or a Kelvin sign) made the recorded request miss on replay.
  it('says yes for every body whose parse value() would change, however the names are spelled', () => {
    let missed = 0;
    let changed = 0;
    for (const { text } of bodies(9090, 600)) {
      const parsed: unknown = JSON.parse(text);
      if (r.value(parsed) === parsed) continue;
      changed++;
      // As a string, and as the proxy reads a body: its UTF-8 bytes one character a byte.
      const asBytes = Buffer.from(text).toString('latin1');
      if (!r.mayHaveSecrets(text) || !r.mayHaveSecrets(asBytes)) missed++;
      expect(r.mayHaveSecrets(text), text).toBe(true);
      expect(r.mayHaveSecrets(asBytes), asBytes).toBe(true);
    }
    expect(changed).toBeGreaterThan(100);
    expect(missed).toBe(0);
  });

  it("says yes for a user's secret field named with non-ASCII letters, in any case, as the proxy reads the body", () => {
    for (const [field, name] of [['contraseña', 'CONTRASEÑA'], ['contraseña', 'contraseña'], ['clé', 'Clé'], ['пароль', 'Пароль'], ['密码', '密码']] as const) {
      const mine = redactor({ fields: [field], salt: '0123456789abcdef0123456789abcdef' });
      const text = JSON.stringify({ model: 'm', [name]: 'hunter2-secret' });
      const parsed: unknown = JSON.parse(text);
      expect(mine.value(parsed), text).not.toBe(parsed);
      expect(mine.mayHaveSecrets(text), text).toBe(true);
      expect(mine.mayHaveSecrets(Buffer.from(text).toString('latin1')), `${text} read a byte a character`).toBe(true);
    }
  });

  it('still says no for bodies of ordinary names and text', () => {
    for (const text of ['{"model":"gpt-4o","messages":[{"role":"user","content":"caf\\u00e9 \\"api_key\\": no"}]}', '{"next_page_token":"abc","keys":["a"],"token":1,"passage":"apikey"}']) {
      const parsed: unknown = JSON.parse(text);
      expect(r.value(parsed)).toBe(parsed);
      expect(r.mayHaveSecrets(text), text).toBe(false);
    }
  });
});

