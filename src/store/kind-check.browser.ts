/**
 * kind-check.ts for browser bundles (package.json "browser"): a page's bundle has no room for the
 * check, and the page's own code opens its collections with the kinds it was built with.
 */

/** Nothing to check in a page (see kind-check.ts). */
export function checkRecordKind(_kind: unknown): void {}
