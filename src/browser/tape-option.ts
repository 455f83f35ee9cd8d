/**
 * The `tape` option of createReplayFetch and replayInServiceWorker, checked where the fetch is
 * made. Without the check a missing or wrong tape surfaced as a TypeError from deep inside
 * (`Cannot read properties of undefined (reading 'salt')`); the easy mistake is passing the
 * tape's URL, which only loadTape turns into a tape.
 */
import { TapedeckError } from '../errors.ts';
import type { LoadedTape } from './load.ts';

type Caller = 'createReplayFetch' | 'replayInServiceWorker';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

/** What a value is, for messages: `a string "…"`, `undefined`, `an array`, `a Uint8Array`. */
function kindOf(v: unknown): string {
  if (v === undefined || v === null) return String(v);
  if (typeof v === 'string') return `a string ${JSON.stringify(v.length > 60 ? `${v.slice(0, 60)}…` : v)}`;
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') {
    const name = (v as object).constructor?.name;
    return name && name !== 'Object' ? `a ${name}` : 'an object';
  }
  return `${typeof v} ${String(v)}`;
}

/** How to pass a tape, for hints: the caller's own URL when it gave one. */
function fix(caller: Caller, url = '/tapes/chat.tape'): string {
  const u = `'${url.replace(/'/g, "\\'")}'`;
  return caller === 'createReplayFetch' ? `createReplayFetch({ tape: await loadTape(${u}) })` : `replayInServiceWorker({ tape: ${u} }) (a URL, relative to the worker script, or await loadTape(url))`;
}

/** Whether a value has the shape loadTape returns (what the replay reads of it). */
function isLoadedTape(v: unknown): v is LoadedTape {
  return isObject(v) && typeof v.name === 'string' && isObject(v.header) && Array.isArray(v.records) && (v.warnings === undefined || Array.isArray(v.warnings));
}

/** Throws E_ARG unless `opts` is an options object. */
export function checkOptionsObject(opts: unknown, caller: Caller): asserts opts is Record<string, unknown> {
  if (isObject(opts) && !Array.isArray(opts)) return;
  throw new TapedeckError('E_ARG', `${caller} needs an options object naming the tape to replay; it was given ${kindOf(opts)}.`, { hint: `Pass ${fix(caller, typeof opts === 'string' ? opts : undefined)}.` });
}

/**
 * The tape option as a loaded tape, or E_ARG saying what it must be. replayInServiceWorker also
 * takes a URL, which it loads itself: it calls this only for other values.
 */
export function loadedTapeOption(tape: unknown, caller: Caller): LoadedTape {
  if (isLoadedTape(tape)) return tape;
  if (tape === undefined) {
    throw new TapedeckError('E_ARG', `${caller} needs { tape }: a tape loaded by loadTape, and none was given.`, { hint: `Pass ${fix(caller)}.` });
  }
  if (caller === 'createReplayFetch' && (typeof tape === 'string' || tape instanceof URL)) {
    throw new TapedeckError('E_ARG', `createReplayFetch takes a loaded tape, not its URL ${JSON.stringify(String(tape))}.`, { hint: `Load it first: ${fix(caller, String(tape))}.` });
  }
  if (tape instanceof ArrayBuffer || ArrayBuffer.isView(tape) || (typeof Response !== 'undefined' && tape instanceof Response)) {
    const fixed = caller === 'createReplayFetch' ? 'createReplayFetch({ tape: await loadTape(bytes) })' : 'replayInServiceWorker({ tape: await loadTape(bytes) })';
    throw new TapedeckError('E_ARG', `${caller} takes a loaded tape, not its bytes (${kindOf(tape)}).`, { hint: `Load it first: ${fixed}, or pass ${fix(caller)}.` });
  }
  throw new TapedeckError('E_ARG', `${caller}'s tape is ${kindOf(tape)}, not a tape loaded by loadTape (an object with name, header and records).`, { hint: `Pass ${fix(caller)}.` });
}
