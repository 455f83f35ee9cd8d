/**
 * Why two tool results may be swapped: an agent loop of one's own that adds each parallel tool
 * call's result as its tool finishes orders them by latency, so replay misses on some runs only.
 * The fix is in that loop, which a miss saying only "swapped" does not tell. Node only (called
 * from ./message-runs.ts, which a page's bundle leaves out).
 */

/** The note a miss adds to "messages d and d+1 (tool) are swapped". */
export const TOOL_ORDER_HINT = ' (results of parallel tool calls: add them in the order of the calls, not as each one finishes)';
