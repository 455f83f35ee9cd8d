// Secrets masked on both sides of a comparison. A value redaction masks with a key
// (`[REDACTED:<16 hex>]`, src/store/redact.ts) is an HMAC under the tape's own salt: two tapes
// recorded separately (two salts) mask one secret differently, and the secret itself is gone, so
// drift cannot tell whether the two secrets were equal. Such masks are compared as equal (the old
// side's read as the new side's) and the report says "masked on both sides" instead of calling
// the new mask a change of text. A tape re-recorded by `tapedeck rerecord` takes the original's
// salt, so there the same secret gives the same mask and nothing needs saying.

import type { Classification } from './classify.ts';

/**
 * A keyed mask as stored: as it is, or percent-encoded where a URL holds it (`%5BREDACTED%3A…%5D`,
 * the escapes in either case). The hex digits are the first or the second group.
 */
const KEYED_MASK = /\[REDACTED:([0-9a-f]{16})\]|%5BREDACTED%3A([0-9a-f]{16})%5D/gi;

/** {@link KEYED_MASK} without the global flag, for a test that keeps no state. */
const ONE_KEYED_MASK = new RegExp(KEYED_MASK.source, 'i');

/**
 * Any mask redaction writes, keyed or not (`[REDACTED]`, a provider credential's or every mask
 * of a tape made before salts), as it is or percent-encoded.
 */
const ANY_MASK = /\[REDACTED(?::[0-9a-f]{16})?\]|%5BREDACTED(?:%3A[0-9a-f]{16})?%5D/i;

/**
 * Whether a text holds a mask of either kind, whole or inside other text.
 *
 * @example
 * holdsMask('Use my token [REDACTED:0123456789abcdef]') // true
 * holdsMask('/v1/x?key=%5BREDACTED%5D') // true
 * holdsMask('nothing secret') // false
 */
export function holdsMask(text: string): boolean {
  return ANY_MASK.test(text);
}

/**
 * Whether a text holds a keyed mask (`[REDACTED:<16 hex>]`, or percent-encoded).
 *
 * @example
 * holdsKeyedMaskText('%5BREDACTED%3A0123456789abcdef%5D') // true
 * holdsKeyedMaskText('[REDACTED]') // false
 */
export function holdsKeyedMaskText(text: string): boolean {
  return ONE_KEYED_MASK.test(text);
}

/**
 * The old text with its keyed masks read as the new text's, when both hold keyed masks at the
 * same places: the k-th mask of one stands for the k-th of the other, one secret for one secret
 * throughout (a mask repeated on one side is repeated at the same places on the other). `masked`
 * counts the secrets whose masks differ. Undefined when nothing differs, or when the masks do not
 * correspond (another number of them, or one secret on one side standing for two on the other):
 * then they are compared as they are, and the change shows.
 *
 * Every mask is the same length in its form, so the text keeps its length (and a stream its
 * chunk offsets).
 *
 * @example
 * unifyMasks('token [REDACTED:aaaaaaaaaaaaaaaa]', 'token [REDACTED:bbbbbbbbbbbbbbbb]')
 * // { text: 'token [REDACTED:bbbbbbbbbbbbbbbb]', masked: 1 }
 */
export function unifyMasks(before: string, after: string): { text: string; masked: number } | undefined {
  const a = [...before.matchAll(KEYED_MASK)];
  if (a.length === 0) return undefined;
  const b = [...after.matchAll(KEYED_MASK)];
  if (a.length !== b.length) return undefined;
  const hex = (m: RegExpMatchArray) => (m[1] ?? m[2]!).toLowerCase();
  const forward = new Map<string, string>();
  const backward = new Map<string, string>();
  for (let i = 0; i < a.length; i++) {
    const x = hex(a[i]!);
    const y = hex(b[i]!);
    if ((forward.get(x) ?? y) !== y || (backward.get(y) ?? x) !== x) return undefined;
    forward.set(x, y);
    backward.set(y, x);
  }
  const masked = [...forward].filter(([x, y]) => x !== y).length;
  if (masked === 0) return undefined;
  let text = '';
  let at = 0;
  for (const m of a) {
    // The hex digits start after `[REDACTED:` (10 characters) or `%5BREDACTED%3A` (14).
    const start = m.index! + (m[1] !== undefined ? 10 : 14);
    text += before.slice(at, start) + forward.get(hex(m))!;
    at = start + 16;
  }
  return { text: text + before.slice(at), masked };
}

/**
 * {@link unifyMasks} over bytes (an answer body as recorded): masks are ASCII, so the bytes are
 * read one character each and every other byte is kept as it is.
 *
 * @example
 * unifyMaskBytes(oldRecord.response.body, newRecord.response.body)?.masked // 1
 */
export function unifyMaskBytes(before: Uint8Array, after: Uint8Array): { bytes: Uint8Array; masked: number } | undefined {
  const latin1 = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('latin1');
  const u = unifyMasks(latin1(before), latin1(after));
  return u && { bytes: new Uint8Array(Buffer.from(u.text, 'latin1')), masked: u.masked };
}

/**
 * A classification with the secrets masked on both sides said as noise: a `benign` phrase, and a
 * pair that is otherwise identical classed `benign` (it is not known to be the same answer);
 * `alongside` adds the class beside others too, as MCP exchanges list theirs.
 *
 * @example
 * withMaskedNote({ classes: ['identical'], primary: 'identical', details: {} }, 1).details.benign
 * // ['a secret masked on both sides (the values cannot be compared)']
 */
export function withMaskedNote(c: Classification, masked: number, alongside = false): Classification {
  if (masked === 0) return c;
  const note = masked === 1 ? 'a secret masked on both sides (the values cannot be compared)' : `${masked} secrets masked on both sides (the values cannot be compared)`;
  const details = { ...c.details, benign: [...(c.details.benign ?? []), note] };
  if (c.primary === 'identical') return { classes: ['benign'], primary: 'benign', details };
  // An HTTP pair is `benign` only when nothing else changed (classifyPair); an MCP exchange lists
  // it beside its other classes (`alongside`, classifyExchanges).
  return { ...c, classes: alongside && !c.classes.includes('benign') ? [...c.classes, 'benign'] : c.classes, details };
}
