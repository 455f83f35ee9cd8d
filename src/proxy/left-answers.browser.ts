/** Browser bundles' stand-in for ./left-answers.ts (package.json "browser"): a page records nothing. */

/** None in a page. */
export function leftAnswersCut(_open: unknown, _boundMs: number): undefined {
  return undefined;
}
