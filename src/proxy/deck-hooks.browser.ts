/**
 * deck-hooks.ts for browser builds. A page replays a tape as it was recorded: the hooks
 * (`beforeRecord`, `beforeReplay`) and a `match` function run in Node (createFetch, tapedeck
 * serve, the test tapes). They are refused at creation (refuseHooks) instead of carrying the hook
 * machinery in a bundle with a 100 KB budget (bench/size.mjs); the other functions are then never
 * called. createReplayFetch and replayInServiceWorker call refuseHooks themselves, in Node as in a
 * page (src/browser/tape-option.ts): `llm-tapedeck/browser` imported in Node (component tests
 * under jsdom or happy-dom) gets no browser map, and took them.
 */
import { TapedeckError } from '../errors.ts';

export type { HookedExchange, MatchFunction } from './deck-hooks.ts';

/**
 * Refuses the hooks and a match function (E_ARG), naming the function `caller` that was given
 * one: a page has none.
 *
 * @example
 * refuseHooks({ match: 'exact' }, 'createReplayFetch') // fine
 * refuseHooks({ beforeReplay: (r) => r }, 'replayInServiceWorker') // throws E_ARG
 */
export function refuseHooks(opts: { beforeRecord?: unknown; beforeReplay?: unknown; match?: unknown }, caller: string): void {
  const name = opts.beforeRecord !== undefined ? 'beforeRecord' : opts.beforeReplay !== undefined ? 'beforeReplay' : typeof opts.match === 'function' ? 'a match function' : undefined;
  if (name === undefined) return;
  throw new TapedeckError('E_ARG', `${caller} does not take ${name}: hooks and custom matchers run in Node, where the tape is recorded and served (createFetch, tapedeck serve).`, {
    hint: "In a page, replay the tape as recorded (match 'exact', 'signature', 'sequential' or 'hybrid'); apply the hook when recording in Node.",
  });
}

/**
 * The deck's check of its hooks, in a browser build: refuses them all (refuseHooks).
 *
 * @example
 * checkHooks({ match: 'exact' }) // fine
 * checkHooks({ beforeReplay: (r) => r }) // throws E_ARG
 */
export function checkHooks(opts: { beforeRecord?: unknown; beforeReplay?: unknown; match?: unknown }): void {
  refuseHooks(opts, 'createReplayFetch');
}

/** Never called in a page (checkHooks refused every hook). */
function none(): never {
  throw new TapedeckError('E_INTERNAL', 'a hook ran in a browser build, which refuses hooks at creation.');
}

export const beforeRecord: typeof import('./deck-hooks.ts').beforeRecord = none;
export const beforeReplay: typeof import('./deck-hooks.ts').beforeReplay = none;
export const pickByMatch: typeof import('./deck-hooks.ts').pickByMatch = none;
