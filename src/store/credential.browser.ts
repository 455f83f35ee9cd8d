/**
 * Browser bundles' stand-in for ./credential.ts (package.json "browser"): the same answers, found
 * by searching the whole text, which keeps page playback within its 100 KB budget. A page only
 * replays, and redacts a request to key it, not whole tapes.
 */
import { CREDENTIAL } from './credential-pattern.ts';

export { CREDENTIAL };

/** Where a search for CREDENTIAL may begin: the start, in a page. */
export function credentialFrom(_s: string): number {
  return 0;
}

/** A match's mask: no pattern of a page's keeps part of its match in view (see credential.ts). */
export function maskCredential(mask: (v: string) => string): (found: string) => string {
  return mask;
}

/** Whether `s` holds a credential (a search from the start, which leaves CREDENTIAL's lastIndex as it was). */
export function mayHoldCredential(s: string): boolean {
  return s.search(CREDENTIAL) >= 0;
}

/**
 * PEM private key bodies and URL userinfo passwords are not looked for in a page (the budget): a
 * request holding one keys apart from its recording there.
 */
export function maskShapes(s: string, _mask: (v: string) => string): string {
  return s;
}

/** None in a page (see maskShapes). */
export function shapesIn(_s: string): { index: number; text: string }[] {
  return [];
}

/** None in a page (see maskShapes). */
export function privateKeysIn(_s: string): { index: number; text: string }[] {
  return [];
}

/**
 * The text itself: a key after a percent-encoded separator (`api_key%3Dsk-…`) is not looked for
 * in a page (the budget), as maskShapes.
 */
export function searchedText(s: string, _from: number): string {
  return s;
}

/** searchedText for a body's JSON as sent: `s` too (a page records nothing). */
export { searchedText as searchedJsonText };

/**
 * `s` with CREDENTIAL's matches replaced by `fn` of each (searchedText gives `s` in a page). An
 * AWS secret access key beside its id is not looked for in a page (the budget), as maskShapes.
 */
export function replaceCredentials(s: string, _view: string, fn: (found: string) => string): string {
  return s.replace(CREDENTIAL, fn);
}
