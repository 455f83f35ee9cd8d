// A tape's redaction salt, in a module of its own: every tape or namespace created makes one, and
// the tape reader and writers must not load the redactor (its providers' credential lists and
// the hashing core) just for 16 random bytes.

/**
 * A fresh redaction salt: 16 random bytes as 32 hex digits. Written once into a new tape header
 * (or Redis namespace header) and never changed.
 *
 * @example
 * createTape('app.tape', { salt: newRedactionSalt() })
 */
export function newRedactionSalt(): string {
  let s = '';
  for (const x of globalThis.crypto.getRandomValues(new Uint8Array(16))) s += x.toString(16).padStart(2, '0');
  return s;
}
