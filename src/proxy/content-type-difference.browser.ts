/**
 * content-type-difference.ts for browser builds: a page keeps the route's general miss sentence
 * when only the content type differs (the miss itself is the same), so the comparison stays out
 * of a bundle with a 100 KB budget (bench/size.mjs).
 */

/** Always undefined in a page (see content-type-difference.ts). */
export function contentTypeDifference(_bytes: Uint8Array, _headers: Record<string, string | string[] | undefined>, _askedAsJson: boolean, _recorded: Iterable<unknown>, _r: unknown): string | undefined {
  return undefined;
}

/** The fix as given (see content-type-difference.ts). */
export const contentTypeFix = (fix: string): string => fix;
