/**
 * createReplayFetch: a loaded tape as a standard `fetch`, for SDKs that take one in the browser.
 * It is createFetch itself (src/proxy/fetch.ts), the one the Node tests use, given the loaded
 * records instead of a tape path: the same request keys, matcher, matching modes, ordered
 * repeats, stream replay and provider-shaped miss answers.
 */
import { chaosUnavailable } from '../chaos/refused.ts';
import { TapedeckError } from '../errors.ts';
import type { MatchMode } from '../match/matcher.ts';
import type { Timing } from '../proxy/deck.ts';
import { createFetchFor, type TapedeckFetch } from '../proxy/fetch.ts';
import type { RedactOptions } from '../store/redact.ts';
import { LoadedTapeBackend } from './backend.ts';
import type { LoadedTape } from './load.ts';
import { checkOptions, checkOptionsObject, loadedTapeOption } from './tape-option.ts';
import { optionNames } from '../option-names.ts';

/** Options of createReplayFetch: the loaded tape and how its answers are matched and paced. */
export interface ReplayFetchOptions {
  /** A tape from loadTape(). */
  tape: LoadedTape;
  /**
   * `replay` (default): answer from the tape; a request it has no recording for gets the
   * provider-shaped 400 with the miss diagnostics (`E_MISS`). `passthrough`: every request goes
   * to `fetch` (the live API), the tape is not used.
   */
  mode?: 'replay' | 'passthrough';
  /** How LLM requests are matched (docs/matching.md); default 'exact'. */
  match?: MatchMode;
  /** Past the last recording of a request, miss instead of serving the last one again. */
  strictOrder?: boolean;
  /**
   * Pacing of recorded streams: 'none' (default, all at once), 'recorded' (the gaps as they were
   * recorded), or a fixed number of milliseconds between chunks, so a UI shows tokens arriving.
   */
  timing?: Timing;
  /** Request arguments left out of LLM request keys: must be what the tape was recorded with. */
  ignoreArgs?: readonly string[];
  /** Member names dropped at any depth before keying: must be what the tape was recorded with. */
  volatileKeys?: readonly string[];
  /** Patterns of text replaced by `<volatile>` before keying (dates, ids): must be what the tape was recorded with. */
  volatileText?: readonly (RegExp | string)[];
  /** Header names that take part in matching non-JSON requests. */
  matchHeaders?: readonly string[];
  /** Secret fields masked in requests before matching: must be what the tape was recorded with. */
  redact?: RedactOptions;
  /** HTTP status of a replay miss (default 400). */
  missStatus?: number;
  /** The live fetch in passthrough mode (default globalThis.fetch). */
  fetch?: typeof fetch;
  /** Tape damage and other problems that cannot reach a caller (default console.warn). */
  onWarning?: (message: string) => void;
}

/** createReplayFetch's option names (replayInServiceWorker takes these and `urls`). */
// Without the nearest-name guess of the Node entries (src/option-names.ts): the page's bundle has a 100 KB budget.
export const REPLAY_FETCH_OPTIONS = optionNames<ReplayFetchOptions>()(['tape', 'mode', 'match', 'strictOrder', 'timing', 'ignoreArgs', 'volatileKeys', 'volatileText', 'matchHeaders', 'redact', 'missStatus', 'fetch', 'onWarning']);

/**
 * A `fetch` that answers from a loaded tape. Give it to an SDK; answers carry
 * `x-tapedeck-match` (exact, signature, sequential) and `x-tapedeck-key` headers.
 *
 * @example
 * import OpenAI from 'openai'
 * import { loadTape, createReplayFetch } from 'llm-tapedeck/browser'
 * const fetch = createReplayFetch({ tape: await loadTape('/tapes/chat.tape'), timing: 40 })
 * const client = new OpenAI({ apiKey: 'replay', dangerouslyAllowBrowser: true, fetch })
 */
export function createReplayFetch(opts: ReplayFetchOptions): TapedeckFetch {
  checkOptionsObject(opts, 'createReplayFetch');
  // Node's createFetch takes `chaos`; a page gets what a fault asked for there gets, not "unknown option".
  if ((opts as { chaos?: unknown }).chaos !== undefined) throw chaosUnavailable();
  checkOptions(opts, 'createReplayFetch', REPLAY_FETCH_OPTIONS);
  const tape = loadedTapeOption(opts.tape, 'createReplayFetch');
  return replayFetch(opts, tape, tape.name);
}

/**
 * The replay fetch of options already checked (checkOptions), over a tape that may still be
 * loading (a service worker's): a tape that fails to load is every call's error answer. Option
 * values are checked here, synchronously. Internal.
 *
 * @example
 * const f = replayFetch({ timing: 30 }, loadTape(url), url.href)
 */
export function replayFetch(opts: Omit<ReplayFetchOptions, 'tape'>, tape: LoadedTape | Promise<LoadedTape>, name: string): TapedeckFetch {
  const mode = opts.mode ?? 'replay';
  if (mode !== 'replay' && mode !== 'passthrough') {
    throw new TapedeckError('E_MODE', `Mode ${JSON.stringify(mode)} records, and a tape loaded in a page is read-only: only replay and passthrough can serve it.`, {
      hint: "Use mode 'replay' or 'passthrough'; record tapes in Node (createFetch or tapedeck serve).",
    });
  }
  // A page cannot record: its misses say to record in Node. The tape is the store: `tape` is
  // Node's path option, which a loaded tape is not.
  return createFetchFor({ ...opts, tape: undefined, mode, onWarning: opts.onWarning ?? ((m: string) => console.warn(m)), store: new LoadedTapeBackend(tape, name, { ignoreArgs: opts.ignoreArgs, volatileKeys: opts.volatileKeys, volatileText: opts.volatileText }) }, { kind: 'browser' });
}
