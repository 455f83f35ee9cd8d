/**
 * member-difference.ts for browser builds: a page's misses name the option or tool definition
 * that differs, and a tool result's numbered ids, without the member inside or the calls, and
 * rank closest recordings by words alone, so the comparisons stay out of a bundle with a 100 KB
 * budget (bench/size.mjs).
 */
import type * as Full from './member-difference.ts';

/** Leaves the differences as they are in a page (see member-difference.ts). */
export const closerLook: typeof Full.closerLook = () => {};

/** No tie-break by characters in a page (see member-difference.ts). */
export const sharedChars: typeof Full.sharedChars = () => 0;
