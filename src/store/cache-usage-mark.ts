/**
 * What names one ReplayCache recording in a run summary's list of used recordings. HTTP
 * recordings carry a trace token for this, MCP exchanges a mark of their own
 * (src/mcp/usage-mark.ts); cache records have neither, and their tape format is not changed for
 * it: the stored request key and the time of the put tell two recordings apart (two puts of one
 * request would have to land in the same millisecond for their marks to be the same, and then
 * both are kept when either is used: a prune errs on keeping).
 */
import type { ReplayRecord } from './records.ts';

/**
 * The mark of a ReplayCache recording, as served or as appended; undefined for a record without
 * a stored key or time (written by an old version), which a summary then does not judge.
 *
 * @example
 * cacheUsageMark({ key: 'ab12…', recordedAt: '2026-01-05T10:00:00.000Z' })
 * // 'cache ab12… 2026-01-05T10:00:00.000Z'
 */
export function cacheUsageMark(rec: { key?: unknown; recordedAt?: unknown }): string | undefined {
  return typeof rec.key === 'string' && typeof rec.recordedAt === 'string' ? `cache ${rec.key} ${rec.recordedAt}` : undefined;
}

/** The fields of a record the mark is made of (read without decoding the record). */
export const CACHE_MARK_FIELDS = ['key', 'recordedAt'] as const satisfies readonly (keyof ReplayRecord)[];
