/**
 * json-error-excerpt.ts for browser bundles (package.json "browser"): a page's strict-JSON error
 * keeps its quote of the body as it is. In a page, tapedeck writes the error nowhere: no tape,
 * no log, no summary line (a page's summary is counts: ./fetch-summary.browser.ts); it is only
 * the answer to the page's own call, about the body that page sent, so it shows what the page
 * had in hand already, and goes no further than the page's code takes it (its console). The
 * masking that Node's answers need (they reach a test's CI log) stays out of a bundle with a
 * 100 KB budget (bench/size.mjs).
 */
import type * as Full from './json-error-excerpt.ts';

/** The error as it is, in a page (see above and json-error-excerpt.ts). */
export const maskJsonErrorExcerpt: typeof Full.maskJsonErrorExcerpt = (err) => err;
