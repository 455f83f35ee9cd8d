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

describe('redactor bytes() of JSON answers', () => {
  it('masks every member its value() masks, however the name is spelled, and nothing else', () => {
    const g = rng(8080);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(g() * xs.length)]!;
    let leaked = 0;
    for (let i = 0; i < 400; i++) {
      const values: string[] = [];
      let count = 0;
      // One member per name in an object (JSON.parse keeps the last of duplicates).
      const member = (depth: number, taken: Set<string>): string => {
        let name = pick(spellings(pick(g() < 0.3 ? SECRET : PLAIN)));
        while (taken.has(JSON.parse(name) as string)) name = `"x${taken.size}${name.slice(1)}`;
        taken.add(JSON.parse(name) as string);
        const v = `v${i}-${count++}-value`;
        const inner = depth < 3 && g() < 0.3 ? `{${member(depth + 1, new Set(['n']))},"n":1}` : g() < 0.1 ? `[${JSON.stringify(v)},{${member(depth + 1, new Set())}}]` : JSON.stringify(v);
        if (inner.includes(v)) values.push(v);
        return `${name}:${inner}`;
      };
      const top = new Set(['note']);
      const text = `{${Array.from({ length: 1 + Math.floor(g() * 4) }, () => member(0, top)).join(',')}${g() < 0.2 ? ',"note":"Bearer sk-proj-abcdefghijklmnopqrstuvwxyz0123"' : ''}}`;
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
