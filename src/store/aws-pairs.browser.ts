/**
 * Browser bundles' stand-in for ./aws-pairs.ts (package.json "browser"): a page does not look for
 * an AWS secret beside its id (credential.browser.ts), in one string or across a document's,
 * a form's fields or an upload's parts. Each returns its first argument, what redaction made, as
 * it is: the function that answers a page's searchedText (its first argument too), so the page's bundle, which
 * has a size budget, gains no code for them.
 */
export { searchedText as pairsMasked, searchedText as formPairsMasked, searchedText as textPairsMasked, searchedText as headerPairsMasked } from './credential.browser.ts';
