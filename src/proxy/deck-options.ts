/**
 * The checks of Deck.check (./deck.ts) that only Node's entry points need: `bodyMatch` and
 * `onRecordFailure`, which a page's replay fetch does not take (its options are checked by name
 * first: ../browser/tape-option.ts), and the tape or store, which in a page is always the tape it
 * loaded. Browser bundles take ./deck-options.browser.ts (package.json "browser"), so these words,
 * which name CLI flags and Node's stores, stay out of a bundle with a 100 KB budget.
 */
import { TapedeckError } from '../errors.ts';
import { checkStore, isBackend } from '../store/backends/open.ts';
import type { TapeMode } from '../store/mode.ts';
import type { DeckOptions } from './deck.ts';

/**
 * Throws E_ARG for a `bodyMatch` or `onRecordFailure` that is not one of their values.
 *
 * @example
 * checkRecordOptions({ onRecordFailure: 'retry' }) // throws E_ARG: Invalid onRecordFailure "retry".
 */
export function checkRecordOptions(opts: DeckOptions): void {
  if (opts.bodyMatch !== undefined && opts.bodyMatch !== 'bytes' && opts.bodyMatch !== 'route') {
    throw new TapedeckError('E_ARG', `Invalid bodyMatch ${JSON.stringify(opts.bodyMatch)}.`, { hint: "Use 'bytes' (the default) or 'route'." });
  }
  if (opts.onRecordFailure !== undefined && opts.onRecordFailure !== 'fail' && opts.onRecordFailure !== 'serve') {
    throw new TapedeckError('E_ARG', `Invalid onRecordFailure ${JSON.stringify(opts.onRecordFailure)}.`, { hint: "Use 'fail' (the default: 503 E_RECORD_FAILED, or a cut stream) or 'serve' (the live answer, marked x-tapedeck-recorded: false)." });
  }
}

/**
 * Throws E_ARG when a mode that reads a tape has no tape path or store, and refuses a mistyped
 * Redis URL where the fetch or proxy is made, not at its first call.
 *
 * @example
 * checkStoreOption({}, 'replay') // throws E_ARG: Mode replay needs a tape path or a store.
 */
export function checkStoreOption(opts: DeckOptions, mode: TapeMode): void {
  const store = opts.store ?? opts.tape;
  if (mode !== 'passthrough' && !isBackend(store) && (typeof store !== 'string' || store === '')) {
    throw new TapedeckError('E_ARG', `Mode ${mode} needs a tape path or a store.`, {
      hint: "Pass { tape: 'recordings/app.tape' } (tapedeck serve --tape FILE), or a shared store { store: 'redis://host:6379/0' } (tapedeck serve --store URL).",
    });
  }
  if (mode !== 'passthrough' && typeof store === 'string') checkStore(store);
}
