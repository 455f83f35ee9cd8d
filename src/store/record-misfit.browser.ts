/** Browser bundles' stand-in for ./record-misfit.ts (package.json "browser"): a page's error names no field. */

/** None in a page. */
export function httpRecordMisfit(_v: unknown): undefined {
  return undefined;
}
