/**
 * Which injected faults went out with a recorded answer and which answered in its place. A
 * recording a fault replaced was never taken, so a run with such faults cannot call a recording
 * nobody used stale: the run summary and `pruneUnused` leave them alone (docs/chaos.md). Free
 * of imports: the browser bundle's deck loads it too.
 */

/**
 * Faults that damage a recorded answer on its way out (they need the recording): counted and
 * announced only once injected. A realtime `close` cuts a recorded session, so it is one too (a
 * session recorded now is cut once its first response is stored: src/realtime/live-cut.ts).
 */
export const BODY_FAULTS: ReadonlySet<string> = new Set(['cut', 'stall', 'malformed', 'close']);

/**
 * The calls, out of fault counts (`stats().faults`, a run report's `faults`), that a fault
 * answered in place of a recording: a rate limit, a 5xx, a reset, a timeout, an MCP error.
 * Damaged answers (BODY_FAULTS) went out from their recording, and `latency` only delays one.
 * `text` says so, for the messages that give it as the reason not to judge unused recordings.
 *
 * @example
 * faultsInPlaceOfRecordings({ '429': 2, cut: 1, latency: 5 })
 * // { calls: 2, text: '2 calls were answered by injected faults (429 2)' }
 */
export function faultsInPlaceOfRecordings(faults: Readonly<Record<string, number>> | undefined): { calls: number; text: string } {
  const by = Object.entries(faults ?? {}).filter(([f, n]) => n > 0 && f !== 'latency' && !BODY_FAULTS.has(f));
  const calls = by.reduce((a, [, n]) => a + n, 0);
  const names = by.map(([f, n]) => `${f} ${n}`).join(', ');
  return { calls, text: `${calls === 1 ? '1 call was' : `${calls} calls were`} answered by injected faults (${names})` };
}
