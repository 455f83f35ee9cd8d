/**
 * observability.ts for browser builds: a page replays its own model calls, not a tracing SDK's
 * uploads, so the list stays out of a bundle with a 100 KB budget (bench/size.mjs); such an
 * upload recorded in Node misses in a page.
 */

/** None in a page (see observability.ts). */
export const OBSERVABILITY_UPLOADS: readonly { readonly method: string; readonly path: RegExp }[] = [];
