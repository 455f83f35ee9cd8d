/**
 * stored-text.ts for browser bundles: a page never records (record and update are refused
 * there, and its recorder stores nothing: deck-record.browser.ts), so no stored form of a body
 * is ever read, and its making stays out of a bundle with a 100 KB budget (bench/size.mjs).
 *
 * @example
 * storedText(new Uint8Array([0x68, 0x69])) // the same bytes
 */
export const storedText = (bytes: Uint8Array): string | Uint8Array => bytes;
