/**
 * cycle.ts for browser builds: a page never stores a value (it replays a loaded tape), so there
 * is no cycle to name; the walk stays out of a bundle with a 100 KB budget (bench/size.mjs).
 */

/** Nothing to check in a page (see cycle.ts). */
export function assertNoCycle(_value: unknown, _root: string): void {}

/** Nothing to check in a page (see cycle.ts). */
export function assertStorable(_value: unknown, _root: string): void {}

/** The same bound as cycle.ts's (a page stores nothing). */
export const MAX_STORED_NESTING = 1000;
