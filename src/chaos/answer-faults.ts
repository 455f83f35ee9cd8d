/**
 * Which injected faults went out with a recorded answer and which answered in its place, or
 * moved a later call off its recording. After such faults a recording nobody used may be one a
 * run without them needs, so the run summary and `pruneUnused` leave them alone
 * (docs/chaos.md). Free of imports: the browser bundle's deck loads it too.
 */

/**
 * Faults that damage a recorded answer on its way out (they need the recording): counted and
 * announced only once injected. A realtime `close` cuts a recorded session, so it is one too (a
 * session recorded now is cut once its first response is stored: src/realtime/live-cut.ts).
 */
export const BODY_FAULTS: ReadonlySet<string> = new Set(['cut', 'stall', 'malformed', 'close']);

/**
 * Faults after which every call still got the recording it would have got without them: a
 * `stall` is whole (only slow), `latency` only delays, and a realtime `close` goes back to the
 * session its reconnect's frames choose. A `cut` or `malformed` answer does not: the next
 * identical request is taken for the app's retry of that call and gets the same recording, so
 * when it was the app's next call instead, the recordings after it are not reached this run.
 */
const FAULTS_THAT_KEEP_PLACES: ReadonlySet<string> = new Set(['latency', 'stall', 'close']);

/**
 * The calls, out of fault counts (`stats().faults`, a run report's `faults`), after which a
 * recording this run did not serve may still be one a run without the faults needs: a rate
 * limit, a 5xx, a reset, a timeout, an MCP error (answered in place of a recording), and a `cut`
 * or `malformed` answer (whose recording the next identical request takes again). `text` says
 * so, for the messages that give it as the reason not to judge unused recordings.
 *
 * @example
 * faultsInPlaceOfRecordings({ '429': 2, stall: 1, latency: 5 })
 * // { calls: 2, text: '2 calls were answered by injected faults (429 2)' }
 */
export function faultsInPlaceOfRecordings(faults: Readonly<Record<string, number>> | undefined): { calls: number; text: string } {
  const by = Object.entries(faults ?? {}).filter(([f, n]) => n > 0 && !FAULTS_THAT_KEEP_PLACES.has(f));
  const calls = by.reduce((a, [, n]) => a + n, 0);
  const names = by.map(([f, n]) => `${f} ${n}`).join(', ');
  return { calls, text: `${calls === 1 ? '1 call was' : `${calls} calls were`} answered by injected faults (${names})` };
}
