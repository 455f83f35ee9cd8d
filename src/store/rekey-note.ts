// The re-key line (rekeyWarning) is said once per tape in a process, as docs/hash-spec.md says:
// a test run opens one tape again and again (a createFetch per test file, a ReplayCache per
// suite, the proxy of each test tape), and the line came at every open, under the code of
// whichever opened it (TAPEDECK_PROXY, TAPEDECK_REKEY, TAPEDECK_TAPE), burying what else was
// said. Node only: browser builds take rekey-note.browser.ts, which says nothing (the advice,
// recording again, is for Node), keeping the page bundle within its budget.
import { resolve } from 'node:path';
import { rekeyWarning } from '../match/rekey.ts';
import type { StoreWarning } from './backend.ts';

/** The tapes (absolute paths; a store URL as given) whose re-key line this process has said. */
const told = new Set<string>();

/**
 * The re-key warning for `count` recordings of `tape` keyed again at open, as a list of one, the
 * first time it is asked for that tape in this process (by its absolute path, so two spellings
 * of one file are one tape); an empty list after that, and for none keyed again.
 *
 * @example
 * warnings.push(...rekeyNotes('tapes/chat.tape', kind.rekeyed)) // the line once, then nothing
 */
export function rekeyNotes(tape: string | undefined, count: number): StoreWarning[] {
  if (count <= 0) return [];
  if (tape !== undefined) {
    const id = /^[a-z][a-z\d+.-]*:\/\//i.test(tape) ? tape : resolve(tape);
    if (told.has(id)) return [];
    told.add(id);
  }
  return [{ code: 'TAPEDECK_REKEY', offset: 0, message: rekeyWarning(tape, count) }];
}
