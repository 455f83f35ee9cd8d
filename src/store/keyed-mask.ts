/**
 * Whether stored bytes hold a keyed mask (`[REDACTED:<hex>]`, src/store/redact.ts): a value masked
 * under the tape's redaction salt, which matches a live request only under that same salt. A
 * merge of tapes with two salts and a tape whose header (and so its salt) was lost are judged by it.
 */

/** A keyed mask's opening as stored: as it is, and as a URL holds it (percent-encoded, either case). */
const KEYED_MASKS = ['[REDACTED:', 'REDACTED%3A', 'REDACTED%3a'].map((m) => Buffer.from(m));

/**
 * True when `bytes` (a record's payload) hold a keyed mask.
 *
 * @example
 * holdsKeyedMask(Buffer.from('"url":"/x?token=%5BREDACTED%3A0123456789abcdef%5D"')) // true
 */
export function holdsKeyedMask(bytes: Uint8Array): boolean {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return KEYED_MASKS.some((m) => b.indexOf(m) >= 0);
}
