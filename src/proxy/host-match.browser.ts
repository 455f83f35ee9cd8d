/**
 * host-match.ts for browser builds: a page compares no hosts (docs/browser.md): its recordings
 * are filed under their routes alone (origins.browser.ts) and any host's recording answers, so
 * the comparison and its miss stay out of a bundle with a 100 KB budget (bench/size.mjs).
 */
import type { FindIn, HostLookup } from './host-match.ts';

export type { Found, FindIn, HostLookup, HostMatchMode } from './host-match.ts';

/** A request looked up by its route alone (see host-match.ts). */
export function openHostMatch(findIn: FindIn, _routes: unknown, _col: unknown, _opts: unknown, _entry: unknown): HostLookup {
  return { find: (req, route) => findIn(req, route, route) };
}

/** Nothing to check in a page: its replay fetch takes no hostMatch option. */
export function checkHostMatch(_value: unknown): void {}
