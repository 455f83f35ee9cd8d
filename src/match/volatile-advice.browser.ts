/**
 * volatile-advice.ts for browser builds: a page's miss says what differs and to re-record in
 * Node, as ./volatile-miss.ts makes it (with the spans volatileText replaced), without naming the
 * built-in pattern or the masked member that would make the closest recording answer. Re-exported
 * as it is (the extra argument unread), so the page bundle, which has a 100 KB budget
 * (bench/size.mjs), gets none of the advice.
 */
export { withVolatileSpans } from './volatile-miss.ts';
