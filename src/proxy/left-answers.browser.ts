/** Browser bundles' stand-in for ./left-answers.ts (package.json "browser"): a page records nothing. */

/** Nothing to watch: returns the function that stops watching. */
export function cutLeftWhenQuiet(_open: unknown, _link: unknown): () => void {
  return () => {};
}
