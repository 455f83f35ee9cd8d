/**
 * What names one MCP recording in a run summary's list of used recordings. HTTP recordings carry
 * a trace token for this; MCP exchange records have none, and their tape format is not changed
 * for it: the stored key, the time it was recorded and how long it took tell two recordings
 * apart (two exchanges of one call would have to be recorded in the same millisecond, taking as
 * long, for their marks to be the same).
 */
import type { McpRecord } from '../store/records.ts';

/**
 * The mark of an MCP recording, as served (decoded from the store) or as appended.
 *
 * @example
 * mcpUsageMark({ key: 'ab12…', recordedAt: '2026-01-05T10:00:00.000Z', durationMs: 12, ... })
 * // 'mcp ab12… 2026-01-05T10:00:00.000Z 12'
 */
export function mcpUsageMark(rec: Pick<McpRecord, 'key' | 'recordedAt' | 'durationMs'>): string {
  return `mcp ${rec.key} ${rec.recordedAt} ${rec.durationMs}`;
}
