/**
 * Two excerpts of a miss made tellable apart. A prompt pasted from a document or a web page may
 * differ from its recording only by a character that prints as nothing or as another: a
 * no-break or zero-width space, a soft hyphen, a decomposed accent (`e` and U+0301 against `é`).
 * The miss then showed two identical lines and the user saw no change. When the two excerpts
 * look alike (the same once compatibility-normalized, format characters dropped and every space
 * made U+0020), every character outside printable ASCII is written as its JSON escape in both.
 * Node only: a page's miss shows the excerpts as they are (./visible-excerpts.browser.ts; the
 * page bundle's budget).
 */

/** Format characters (zero-width, bidi controls, soft hyphen). */
const FORMAT = /\p{Cf}/gu;
/** Spaces other than U+0020. */
const SPACE = /\p{Zs}/gu;
/** What is written as an escape once two excerpts look alike. */
const UNPRINTABLE_ASCII = /[^\x20-\x7e]/g;

const looks = (s: string): string => s.normalize('NFKC').replace(FORMAT, '').replace(SPACE, ' ');
const escape = (s: string): string => s.replace(UNPRINTABLE_ASCII, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/**
 * The excerpts as shown: escaped when they differ but look alike, else as they are.
 *
 * @example
 * visibleExcerpts('"Say hello\u00a0to José"', '"Say hello to José"') // ['"Say hello\\u00a0to Jos\\u00e9"', '"Say hello to Jos\\u00e9"']
 */
export function visibleExcerpts(a: string, b: string): [string, string] {
  return a !== b && looks(a) === looks(b) ? [escape(a), escape(b)] : [a, b];
}
