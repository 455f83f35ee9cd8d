/**
 * The credential patterns redaction masks in any text, and where in a text a search for them has
 * to begin.
 *
 * Every pattern ends in a long token (16 characters and more of letters, digits and `._~+/=-`),
 * so a text without such a run holds no credential, and the first run bounds where a match can
 * start. Prose has short words: most strings are passed over by a stride-16 test of single
 * characters, where the regular expression tried every word boundary (on the benchmarks'
 * 36 KB chat body, the credential search was ~60% of redacting a parsed body).
 */

import { CREDENTIAL } from './credential-pattern.ts';

export { CREDENTIAL };

/** The shortest token any CREDENTIAL alternative ends in. */
const TOKEN_RUN = 16;

/** The union of the characters of CREDENTIAL's tokens, by ASCII code (1: one of them). */
export const TOKEN_CHARS: Readonly<Uint8Array> = (() => {
  const t = new Uint8Array(128);
  for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._~+/=-') t[c.charCodeAt(0)] = 1;
  return t;
})();

/** The longest word that stands before a token's whitespace (`Bearer`). */
const WORD_BEFORE = 6;

const tokenAt = (s: string, i: number): boolean => {
  const c = s.charCodeAt(i);
  return c < 128 && TOKEN_CHARS[c] === 1;
};

/** JavaScript's `\s` (what the `\s+` after `Bearer` takes). */
const JS_SPACE = /\s/;

/**
 * The next run of at least TOKEN_RUN token characters at or after `from`: [start, end), or
 * undefined. Looks at every 16th character while it is no token character, since a run that long
 * must hold one of them.
 */
function nextRun(s: string, from: number): [number, number] | undefined {
  let i = from + TOKEN_RUN - 1;
  while (i < s.length) {
    if (!tokenAt(s, i)) {
      i += TOKEN_RUN;
      continue;
    }
    // The position looked at before was no token character (or before `from`): the walk back is short.
    let start = i;
    while (start > from && tokenAt(s, start - 1)) start--;
    let end = i + 1;
    while (end < s.length && tokenAt(s, end)) end++;
    if (end - start >= TOKEN_RUN) return [start, end];
    i = end + TOKEN_RUN;
  }
  return undefined;
}

/** The earliest index a CREDENTIAL match holding the run that starts at `start` can begin at. */
function matchFloor(s: string, start: number): number {
  // Within the run for every alternative but the bearer words, which stand before whitespace.
  let b = start;
  while (b > 0 && JS_SPACE.test(s[b - 1]!)) b--;
  return b === start ? start : Math.max(0, b - WORD_BEFORE);
}

/**
 * Where a search for CREDENTIAL in `s` can begin (no match starts before it), or -1 when `s` holds
 * no credential. Exact: CREDENTIAL from here finds what it finds from 0.
 *
 * @example
 * credentialFrom('a short sentence') // -1
 * credentialFrom('key:sk-abcdefghijklmnopqrstuvwx') // 4 (the run's start)
 * credentialFrom('key: Bearer abcdefghijklmnop0123') // 5 (six before the space that ends the word)
 */
export function credentialFrom(s: string): number {
  const run = nextRun(s, 0);
  return run === undefined ? -1 : matchFloor(s, run[0]);
}

/**
 * Whether `s` holds a credential, looking only around its long token runs: a body whose early
 * run (a model name, a call id) is followed by kilobytes of text is not searched to its end from
 * there. May say yes for a text without one (where a window's start cuts a word); never no for a
 * text with one.
 *
 * @example
 * mayHoldCredential('{"model":"gpt-4o-2024-08-06","input":"hello"}') // false
 */
export function mayHoldCredential(s: string): boolean {
  // A window like the one before holds what it held (a stream's events repeat their model name).
  let last = '';
  for (let run = nextRun(s, 0); run !== undefined; run = nextRun(s, run[1])) {
    const window = s.slice(matchFloor(s, run[0]), run[1]);
    if (window === last) continue;
    last = window;
    CREDENTIAL.lastIndex = 0;
    if (CREDENTIAL.test(window)) {
      CREDENTIAL.lastIndex = 0;
      return true;
    }
  }
  CREDENTIAL.lastIndex = 0;
  return false;
}
