/**
 * What every provider's error answer carries, whatever its shape: tapedeck's one-line message
 * (a miss says it is tapedeck's, among the SDK's API errors) and the details (code, hint, miss
 * diagnosis with its full report), so `message` stays short and the rest is still there.
 */
import type { TapedeckError } from '../errors.ts';

/** JSON.stringify that survives bigint and byte arrays in error details. */
export function safeJSON(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) =>
    typeof x === 'bigint' ? x.toString() : x instanceof Uint8Array ? `<${x.length} bytes>` : x instanceof Map ? Object.fromEntries(x) : x,
  );
}

/**
 * The message an SDK shows: a miss says what differs, and that it is tapedeck speaking.
 *
 * @example
 * errorMessage(new TapedeckError('E_MISS', 'model differs')) // 'tapedeck miss: model differs'
 */
export function errorMessage(e: TapedeckError): string {
  return e.code === 'E_MISS' ? `tapedeck miss: ${e.message}` : e.message;
}

/**
 * The `tapedeck` member of an error body: the stable code, the hint and every detail.
 *
 * @example
 * errorDetails(new TapedeckError('E_MISS', 'x', { key: 'ab' })) // { code: 'E_MISS', hint: undefined, key: 'ab' }
 */
export function errorDetails(e: TapedeckError): Record<string, unknown> {
  const { hint, ...rest } = e.details;
  return { code: e.code, hint, ...rest };
}
