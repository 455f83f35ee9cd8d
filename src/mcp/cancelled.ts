/**
 * A request the client cancelled (`notifications/cancelled`), on the tape and on replay
 * (docs/mcp.md, "Requests the client cancels").
 *
 * Live, the client gave up on the request and never saw an answer (an SDK server sends none once
 * a request is cancelled). The exchange is recorded as what it was: an MCP record with the
 * request, what the server sent before the cancellation, no answer, and `cancelled: { ms }`, the
 * time from the request to its cancellation. Earlier releases recorded nothing, so the replay of
 * a session that cancelled a call missed on it, and re-recording, which recorded nothing again,
 * could never fix that.
 *
 * On replay the recorded events go out and no answer: the client cancels the request itself, as
 * it did live, and its SDK raises its own cancellation. A client that does not cancel it (its code
 * changed) is not left waiting forever: past the recorded time plus a grace, the request is
 * answered with a miss that says so.
 *
 * The record stays version 2: a release that does not know `cancelled` finds it, sends its
 * events and no answer, which is what a client that cancels expects.
 */
import type { McpRecord } from '../store/records.ts';

/** An MCP record of a request the client cancelled: no answer among its events. */
export interface McpCancelledRecord extends McpRecord {
  /** `ms`: from the client's request to its `notifications/cancelled`. */
  cancelled: { ms: number };
}

/**
 * How much longer than recorded a replaying client may take to cancel: the client cancels on
 * its own clock (a timer, a user, another answer), which a loaded CI machine runs late.
 */
export const MCP_CANCEL_GRACE_MS = 2000;

/**
 * After how many ms the client cancelled a recorded request, or undefined for a request that
 * was answered (or a record that is not an MCP record of this release's making).
 *
 * @example
 * cancelledAfter({ ...rec, cancelled: { ms: 401 } }) // 401
 * cancelledAfter(answeredRecord) // undefined
 */
export function cancelledAfter(rec: McpRecord): number | undefined {
  const c = (rec as Partial<McpCancelledRecord>).cancelled;
  if (c === null || typeof c !== 'object') return undefined;
  return typeof c.ms === 'number' && Number.isFinite(c.ms) && c.ms >= 0 ? c.ms : 0;
}

/**
 * How long a replayed request recorded as cancelled waits for the client to cancel it, counted
 * from the request: the recorded time plus the grace.
 *
 * @example
 * cancelWaitMs(401) // 2401
 * cancelWaitMs(401, 500) // 901
 */
export function cancelWaitMs(afterMs: number, graceMs = MCP_CANCEL_GRACE_MS): number {
  return Math.ceil(afterMs) + graceMs;
}

/**
 * What a miss says of a request recorded as cancelled that this run did not cancel.
 *
 * @example
 * notCancelled('tools/call slow', 401, 2401)
 * // 'tools/call slow: recorded as cancelled by the client after 401 ms; this run did not cancel it (waited 2401 ms)'
 */
export function notCancelled(label: string, afterMs: number, waitedMs: number): string {
  return `${label}: recorded as cancelled by the client after ${Math.round(afterMs)} ms; this run did not cancel it (waited ${waitedMs} ms)`;
}
