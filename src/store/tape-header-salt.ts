/**
 * The redaction salt a damaged tape header still holds whole. A flipped bit in the header's
 * `created` time fails the metadata CRC-32, and the whole metadata was then lost, salt and all:
 * every recording holding a keyed mask (`[REDACTED:…]`, made under that salt) stopped matching,
 * and the fresh header `prune` wrote (a new salt) made that final. A page (the browser build,
 * tape-header-salt.browser.ts) reads such a header without its salt, as before.
 */

/** Why parseHeader (tape-codec.ts) refuses metadata that fails its CRC-32: the same words. */
const META_CRC_MISMATCH = 'metadata CRC-32 mismatch';

/**
 * The salt in the bytes of a header refused for `what`, with the words its warning adds, or
 * undefined. Only metadata that fails its CRC (a header refused for its magic or version is read
 * by the format's rule, without a salt), and only the `salt` key followed by a 32-byte string of
 * 32 lowercase hex digits, found exactly once: damage inside the salt leaves no such string (or a
 * wrong one, which matches nothing: no worse than a lost salt).
 *
 * @example
 * keptSalt(headerBytes, 'metadata CRC-32 mismatch') // { salt: '0011…eeff', note: '; its redaction salt …' }
 * keptSalt(headerBytes, 'wrong magic bytes') // undefined
 */
export function keptSalt(head: Uint8Array, what: unknown): { salt: string; note: string } | undefined {
  if (what !== META_CRC_MISMATCH) return undefined;
  // msgpack: fixstr "salt" (0xa4), then str8 (0xd9) of length 32 (0x20). Metadata is at most
  // 1 MiB; a tape's is ~100 bytes, so the first 64 KiB are searched.
  const text = new TextDecoder('latin1').decode(head.subarray(0, 1 << 16));
  const found = [...text.matchAll(/\xa4salt\xd9 ([0-9a-f]{32})/g)];
  if (found.length !== 1) return undefined;
  return { salt: found[0]![1]!, note: '; its redaction salt still reads whole and is kept (a fresh header carries it), so keyed masks made under it keep matching' };
}
