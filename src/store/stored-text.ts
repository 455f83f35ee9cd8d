/**
 * How a non-JSON request body of a text content type is stored: as text when it is UTF-8, else
 * as its bytes. Decoded leniently, every byte that is not UTF-8 (a latin-1 upload labelled
 * `text/plain; charset=iso-8859-1`) became U+FFFD on the tape, so two different requests were
 * stored as one body: what `tapedeck rerecord` sends, and what keying the stored request again
 * would key alike. Browser bundles swap this file for stored-text.browser.ts: a page never
 * records.
 */
const strict = new TextDecoder('utf-8', { fatal: true });

/**
 * The stored form of a text body: its text, or a copy of its bytes when they are not UTF-8.
 *
 * @example
 * storedText(new Uint8Array([0x63, 0x61, 0x66, 0xe9])) // Uint8Array [0x63, 0x61, 0x66, 0xe9]
 * storedText(new TextEncoder().encode('café')) // 'café'
 */
export function storedText(bytes: Uint8Array): string | Uint8Array {
  try {
    return strict.decode(bytes);
  } catch {
    return new Uint8Array(bytes);
  }
}
