/**
 * http-difference.ts for browser builds: a page replaying a tape keeps the route's general miss
 * sentence ("the one recording for ... has another body") for a request whose body is not
 * JSON, so the comparison (bytes, text, forms, multipart parts) stays out of a bundle with a
 * 100 KB budget (bench/size.mjs).
 */
import type { HttpMiss, HttpMissDetail } from './http-difference.ts';

export type { HttpMissDetail };

/** Always undefined in a page (see http-difference.ts). */
export function httpMissDetail(_asked: HttpMiss, _recorded: Iterable<{ key: string; request: unknown }>): HttpMissDetail | undefined {
  return undefined;
}

/** Always undefined in a page (see http-difference.ts). */
export function usedUpDetail(_key: string, _recorded: Iterable<{ key: string }>, _entry: unknown): HttpMissDetail | undefined {
  return undefined;
}
