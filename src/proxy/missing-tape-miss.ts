/**
 * The miss of a request to a tape file that does not exist, given as a relative path: most often
 * a tape recorded from another working directory (a monorepo root, a CI job's
 * working-directory). The headline names the absolute path looked at, and its fix the working
 * directory the path was taken from and running from the right one before re-recording (a
 * second tape in the wrong place). Node only: a page's tapes are URLs
 * (./missing-tape-miss.browser.ts).
 */
import { recordHow, type MissEntry } from '../match/diagnose.ts';
import { TapeBackend } from '../store/backends/tape.ts';
import type { RecordCollection } from '../store/collection.ts';
import { relativeTapeMiss } from '../store/nearby-tape.ts';

/**
 * The difference and fix of a miss on a missing tape file given as a relative path; undefined
 * for any other store (an existing tape, an absolute path, Redis).
 *
 * @example
 * missingTapeMiss(col, 'test/app.tape', { kind: 'fetch' })
 * // { difference: 'no tape at /repo/test/app.tape', fix: 'a relative tape path is taken from the working directory (/repo): …' }
 */
export function missingTapeMiss(col: RecordCollection<unknown> | undefined, tape: string | undefined, entry: MissEntry): { difference: string; fix: string } | undefined {
  if (col === undefined || col.exists || tape === undefined || !(col.backend instanceof TapeBackend)) return undefined;
  return relativeTapeMiss(tape, recordHow(entry));
}
