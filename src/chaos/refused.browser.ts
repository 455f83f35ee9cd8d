/**
 * refused.ts for browser bundles (package.json "browser"): a page injects no faults, so a chaos
 * header in its requests is refused by the fetch that reads it, whatever the mode (E_CHAOS_MODE
 * there, ../proxy/fetch.ts), and the mode rule below, worded for Node's `--chaos-live`, never
 * has a fault to refuse. Kept out of a bundle with a 100 KB budget (bench/size.mjs).
 */
import type * as Full from './refused.ts';

export { chaosUnavailable } from './unavailable.ts';

/** Nothing to refuse by mode in a page: every fault is refused (see refused.ts). */
export const refuseChaos: typeof Full.refuseChaos = () => {};
