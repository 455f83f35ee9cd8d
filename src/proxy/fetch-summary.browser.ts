/**
 * Browser bundles' stand-in for ./fetch-summary.ts (package.json "browser"): a page's summary at
 * close is one line of counts (each miss was its call's error already; the bundle's budget).
 */
import type { FetchRun } from './fetch-summary.ts';

/** The line of counts. */
export function formatFetchSummary(r: FetchRun): string {
  return `tapedeck: ${r.tape ?? 'no tape'} (${r.mode}): ${r.replayed} replayed, ${r.misses.length} misses, ${r.unused} unused`;
}
