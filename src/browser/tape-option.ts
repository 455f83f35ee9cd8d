/**
 * The options of createReplayFetch and replayInServiceWorker, checked where the fetch is made
 * (the worker's: when its script runs). Without the check a missing or wrong tape surfaced as a
 * TypeError from deep inside (`Cannot read properties of undefined (reading 'salt')`); the easy
 * mistake is passing the tape's URL, which only loadTape turns into a tape. Kept short: it ships
 * in the page's bundle.
 */
import { TapedeckError } from '../errors.ts';
// The browser build's deck refuses hooks with it too (for createFetch bundled into a page).
import { refuseHooks } from '../proxy/deck-hooks.browser.ts';
import type { LoadedTape } from './load.ts';
import { isArrayBuffer } from '../bytes.ts';

type Caller = 'createReplayFetch' | 'replayInServiceWorker';

/** The matching modes a page takes (a match function is Node's: refuseHooks). */
const MODES = ['exact', 'signature', 'sequential', 'hybrid'];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

/** E_ARG with the fix: pass a tape loaded from `url`. */
function refuse(caller: Caller, what: string, url = '/tapes/chat.tape'): never {
  const u = `'${url.replace(/'/g, "\\'")}'`;
  throw new TapedeckError('E_ARG', `${caller} ${what}.`, { hint: `Load it first: ${caller === 'createReplayFetch' ? `createReplayFetch({ tape: await loadTape(${u}) })` : `replayInServiceWorker({ tape: ${u} }) (a URL, relative to the worker script, or await loadTape(url))`}.` });
}

/** Throws E_ARG unless `opts` is an options object. */
export function checkOptionsObject(opts: unknown, caller: Caller): asserts opts is Record<string, unknown> {
  if (!isObject(opts) || Array.isArray(opts)) refuse(caller, 'needs an options object naming the tape to replay', typeof opts === 'string' ? opts : undefined);
}

/**
 * The tape option as a loaded tape, or E_ARG saying what it must be. replayInServiceWorker also
 * takes a URL, which it loads itself: it calls this only for other values.
 */
export function loadedTapeOption(tape: unknown, caller: Caller): LoadedTape {
  // The shape loadTape returns (what the replay reads of it).
  if (isObject(tape) && typeof tape.name === 'string' && isObject(tape.header) && Array.isArray(tape.records) && (tape.warnings === undefined || Array.isArray(tape.warnings))) return tape as unknown as LoadedTape;
  if (tape === undefined) refuse(caller, 'needs { tape }: a tape loaded by loadTape, and none was given');
  if (typeof tape === 'string' || tape instanceof URL) refuse(caller, `takes a loaded tape, not its URL ${JSON.stringify(String(tape))}`, String(tape));
  if (isArrayBuffer(tape) || ArrayBuffer.isView(tape)) refuse(caller, 'takes a loaded tape, not its bytes (loadTape(bytes) reads them)');
  return refuse(caller, 'was given a tape that is not a tape loaded by loadTape (an object with name, header and records)');
}

/**
 * Throws E_ARG for an option `caller` does not take: a hook or a match function (refuseHooks), a
 * name not in `names` (a misspelt option used to be dropped without a word: no pacing, no strict
 * order), or a matching mode that does not exist (the deck's own refusal offers a match function,
 * which a page does not take).
 *
 * @example
 * checkOptions({ tape, timming: 30 }, 'createReplayFetch', ['tape', 'timing']) // throws E_ARG: Unknown createReplayFetch option "timming"
 */
export function checkOptions(opts: Record<string, unknown>, caller: Caller, names: readonly string[]): void {
  // Here, not only in the browser build's deck: Node (jsdom component tests) refuses what a page does.
  refuseHooks(opts, caller);
  for (const name of Object.keys(opts)) {
    // The hooks' names pass when they hold nothing (options spread from Node's).
    if (!names.includes(name) && name !== 'beforeRecord' && name !== 'beforeReplay') {
      throw new TapedeckError('E_ARG', `Unknown ${caller} option ${JSON.stringify(name)}.`, { option: name, hint: `The options are ${names.join(', ')} (docs/browser.md).` });
    }
  }
  if (opts.match !== undefined && !MODES.includes(opts.match as string)) {
    throw new TapedeckError('E_ARG', `Unknown matching mode ${JSON.stringify(opts.match)}.`, { hint: "Use match 'exact', 'signature', 'sequential' or 'hybrid' (docs/matching.md)." });
  }
}
