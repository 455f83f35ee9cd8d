/**
 * origins.ts for browser builds: a page compares no hosts, so its recordings are filed under
 * their routes alone and any host's recording answers (docs/browser.md), and the comparison
 * stays out of a bundle with a 100 KB budget (bench/size.mjs).
 */
import { httpRecordKey, type MatchKind, type OriginFiling } from './records.ts';

/** The route alone (see origins.ts). */
export function filedName(route: string, _origin: unknown): string {
  return route;
}

/** The first ten: names are routes in a page (see origins.ts). */
export function recordedRoutes(names: Iterable<string>): string[] {
  return [...names].slice(0, 10);
}

/** The key of the route, match kind and key (see origins.ts). */
export function filedKey(p: { route: string; match: MatchKind; key: string }): string {
  return httpRecordKey(p.route, p.match, p.key);
}

/** None: records are filed under their routes alone (see origins.ts). */
export const ORIGIN_FILING: OriginFiling | undefined = undefined;
