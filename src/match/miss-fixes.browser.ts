/**
 * miss-fixes.ts for browser builds: a page's only entry point is createReplayFetch (MissEntry kind
 * `browser`), so its misses are fixed in its words alone, and the words of the Node entry points
 * (their commands, flags and options) stay out of a bundle with a 100 KB budget (bench/size.mjs).
 */
import type * as Full from './miss-fixes.ts';

/** How to record again from a page (see miss-fixes.ts). */
export const recordHow: typeof Full.recordHow = () => "re-record in Node (createFetch or tapedeck serve in mode 'record'), then load the new tape";

/** createReplayFetch's option for volatile names (see miss-fixes.ts). */
export const ignoreOption: typeof Full.ignoreOption = (_entry, v) => `${v.option}: ${JSON.stringify(v.names)}`;

/** createReplayFetch's option that lets a used recording answer again (see miss-fixes.ts). */
export const repeatOption: typeof Full.repeatOption = () => 'drop strictOrder: true';

/** A page has no ReplayCache (see miss-fixes.ts). */
export const memberFix: typeof Full.memberFix = () => undefined;
