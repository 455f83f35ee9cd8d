/**
 * How the run of hand-written recordings is named. `tapedeck add` and addRecordings store them
 * under a run of their own, and a record run never replaces such a recording: the API cannot be
 * asked for it again (a 429, a cut stream). In a file of its own: the collection (also in page
 * bundles) and the tape's writer registrations (Node only) both tell such runs apart.
 */

/** The prefix of a hand-written recordings' run. */
export const HAND_WRITTEN_RUN = 'hand-written ';

/**
 * Whether a record's `run` field names a run of hand-written recordings.
 *
 * @example
 * isHandWrittenRun('hand-written 3f2a…') // true
 * isHandWrittenRun('run-dir:/tmp/x')     // false
 */
export function isHandWrittenRun(run: unknown): boolean {
  return String(run).startsWith(HAND_WRITTEN_RUN);
}
