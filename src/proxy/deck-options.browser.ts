/**
 * deck-options.ts for browser bundles (package.json "browser"): a page's replay fetch takes
 * neither `bodyMatch` nor `onRecordFailure` (an unknown option is refused by name before the
 * deck sees it: ../browser/tape-option.ts), and its store is always the tape it loaded. What is
 * left is the store check, for createFetch bundled into a page, in shorter words.
 */
import { TapedeckError } from '../errors.ts';
import { isBackend } from '../store/backends/open.ts';
import type * as Full from './deck-options.ts';

/** Nothing to check in a page (see deck-options.ts). */
export const checkRecordOptions: typeof Full.checkRecordOptions = () => {};

/** A page's store is a loaded tape: E_ARG without a store (see deck-options.ts). */
export const checkStoreOption: typeof Full.checkStoreOption = (opts, mode) => {
  const store = opts.store ?? opts.tape;
  // A path or a URL is refused when it is opened, as no tape a page can open (../store/backends/open.browser.ts).
  if (mode !== 'passthrough' && !isBackend(store) && (typeof store !== 'string' || store === '')) throw new TapedeckError('E_ARG', `Mode ${mode} needs a store.`, { hint: 'Pass a tape loaded by loadTape.' });
};
