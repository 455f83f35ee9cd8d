/** Browser bundles' stand-in for ./stale-recordings.ts (package.json "browser"): a page never records. */

/** Nothing to say. */
export function staleLine(_recorded: boolean, _unused: number): undefined {
  return undefined;
}
