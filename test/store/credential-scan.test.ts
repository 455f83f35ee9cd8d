// Where the credential search begins is only a shortcut: for random texts of prose, JSON
// punctuation, every kind of whitespace `\s` takes, non-ASCII letters and credentials of every
// format (at, just under and over their token lengths, with `_` and the other token characters
// around them), the search from credentialFrom() finds exactly what the same patterns find from
// the text's start, credentialMatches() lists the same, and mayHoldCredential() never says no
// where the patterns match.
import { describe, expect, it } from 'vitest';
import { CREDENTIAL, credentialFrom, mayHoldCredential } from '../../src/store/credential.ts';
import { credentialMatches } from '../../src/store/redact.ts';
import { rng } from '../reference.ts';

/** The patterns searched from the start of the text: the reference. */
function reference(s: string): { index: number; text: string }[] {
  const re = new RegExp(CREDENTIAL.source, 'g');
  return [...s.matchAll(re)].map((m) => ({ index: m.index, text: m[0] }));
}

const WORDS = ['the', 'model', 'said', 'tokenizer', 'Bearer', 'Basic', 'Token', 'of', 'bad', 'news', 'sk-learn', 'Credential', 'Signature', 'über', '𝟘𝟙', 'naïve', 'x', 'auth_tokens', '{"a":1}', '\\"q\\"'];
const SPACES = [' ', '  ', '\t', '\n', '\r\n', '\u00a0', '\u2003', '\u3000', '\ufeff', '\u2028', '', ',', ':', '"', '=', '_', '/', '-'];
const PREFIXES = ['Bearer ', 'Bearer\u00a0\u00a0', 'Basic\t', 'Token \n ', 'Credential=', 'Signature=', 'auth_tokens/', 'sk-', 'sk-ant-', 'sk-proj-', 'sk-or-', 'ek_', 'AIza', 'gsk_', 'hf_', 'r8_', 'pplx-', 'xai-', 'ghp_', 'xoxb-', 'AKIA', 'ASIA', 'call_', 'gpt-4o-'];

function token(g: () => number): string {
  const len = [8, 15, 16, 17, 19, 20, 29, 30, 31, 64, 70][Math.floor(g() * 11)]!;
  const chars = g() < 0.3 ? '0123456789abcdef' : g() < 0.5 ? 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789' : 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._~+/=-_';
  return Array.from({ length: len }, () => chars[Math.floor(g() * chars.length)]).join('');
}

function* texts(seed: number, count: number): Generator<string> {
  const g = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(g() * xs.length)]!;
  for (let i = 0; i < count; i++) {
    const parts: string[] = [];
    const n = 1 + Math.floor(g() * 40);
    for (let k = 0; k < n; k++) {
      const r = g();
      parts.push(r < 0.12 ? pick(PREFIXES) + token(g) : r < 0.18 ? token(g) : pick(WORDS));
      parts.push(pick(SPACES));
    }
    yield parts.join('');
  }
}

describe('credential search shortcuts', () => {
  it('find what the patterns find from the text start', () => {
    let withCredential = 0;
    let passedOver = 0;
    for (const s of texts(37, 4000)) {
      const want = reference(s);
      const from = credentialFrom(s);
      if (from < 0) passedOver++;
      if (want.length > 0) withCredential++;
      // Nothing the reference finds lies before where the search begins.
      expect(want.filter((m) => from < 0 || m.index < from), s).toEqual([]);
      expect(credentialMatches(s), s).toEqual(want);
      if (want.length > 0) expect(mayHoldCredential(s), s).toBe(true);
    }
    // The generator reaches both sides.
    expect(withCredential).toBeGreaterThan(1000);
    expect(passedOver).toBeGreaterThan(300);
  });

  it('begins a bearer token search before its word, however much whitespace stands between', () => {
    for (const gap of [' ', '   ', '\u00a0', '\t\n', '\u2003 \u3000']) {
      const s = `prose before Bearer${gap}abcdefghijklmnop0123 and after`;
      expect(s.slice(credentialFrom(s)).startsWith('Bearer'), JSON.stringify(gap)).toBe(true);
      expect(mayHoldCredential(s)).toBe(true);
    }
  });

  it('passes over prose and a body whose long runs hold no credential', () => {
    expect(credentialFrom('a sentence of short words, as prose has, with no long run in it')).toBe(-1);
    expect(mayHoldCredential('{"model":"gpt-4o-2024-08-06","id":"call_ADW9fwNwL8f8E2uT38lUEpXF","input":"hello there"}')).toBe(false);
  });
});

// Prose after Bearer/Basic/Token (a capitalized word starts a sentence) was masked in answers,
// and replay served `[REDACTED:…]` instead of what the model said.
describe('Bearer, Basic and Token before words', () => {
  it('leave prose alone and still find tokens', () => {
    for (const prose of ['Basic internationalization is step one.', 'Token classification-and-tagging comes next.', 'Bearer bonds/securities-instruments are old.', 'Basic responsibilities include hiring.']) {
      expect(credentialMatches(prose), prose).toEqual([]);
    }
    for (const tok of ['Bearer ya29.a0AfB_byC-example-token', 'Basic dXNlcjpwYXNzd29yZA==', 'Token abcdefghijklmnop1', 'Bearer abcdefghijklmnopQrst', 'Bearer 0123456789abcdef0123', 'Bearer abcdefghijklmnopqrstuvwx']) {
      expect(credentialMatches(`Authorization: ${tok} ok`).map((m) => m.text), tok).toEqual([tok]);
    }
  });
});
