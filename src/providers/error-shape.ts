/**
 * What every provider's error answer carries, whatever its shape: tapedeck's one-line message
 * (a miss says it is tapedeck's, among the SDK's API errors) and the details (code, hint, miss
 * diagnosis with its full report), so `message` stays short and the rest is still there.
 */
import type { TapedeckError } from '../errors.ts';
import { isBytes } from '../bytes.ts';

/** JSON.stringify that survives bigint and byte arrays in error details. */
export function safeJSON(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) =>
    typeof x === 'bigint' ? x.toString() : isBytes(x) ? `<${x.length} bytes>` : x instanceof Map ? Object.fromEntries(x) : x,
  );
}

/** How an error answer is written. */
export interface ErrorStyle {
  /**
   * For clients that show the whole body rather than its message (Python SDKs, the AI SDK): the
   * message on one line, and of the details only `code`, `difference`, `kind` and `route`.
   */
  short?: boolean;
  /**
   * For clients that read OpenAI's nested `error` alone and show the whole body (the Python
   * SDKs, whose `str(e)` is the body's repr): the message once, not also at the top level.
   */
  nested?: boolean;
}

/**
 * The message an SDK shows: a miss says what differs, and that it is tapedeck speaking.
 *
 * @example
 * errorMessage(new TapedeckError('E_MISS', 'model differs')) // 'tapedeck miss: model differs'
 */
export function errorMessage(e: TapedeckError, style: ErrorStyle = {}): string {
  let message = e.code === 'E_MISS' ? `tapedeck miss: ${e.message}` : e.message;
  if (style.short) {
    message = message.split('\n').map((l) => l.trim().replace(/^(request|recording): +/, '$1: ')).filter(Boolean).join('; ');
    // The hint once: a TapedeckError's message ends with it already.
    if (e.details.hint !== undefined && e.code !== 'E_MISS' && !e.message.includes(String(e.details.hint))) message += ` (${String(e.details.hint)})`;
  }
  return message;
}

/**
 * The `tapedeck` member of an error body: the stable code, the hint and every detail (short
 * style: code, difference, kind and route only; the key is in the `x-tapedeck-key` header).
 *
 * @example
 * errorDetails(new TapedeckError('E_MISS', 'x', { key: 'ab' })) // { code: 'E_MISS', hint: undefined, key: 'ab' }
 */
export function errorDetails(e: TapedeckError, style: ErrorStyle = {}): Record<string, unknown> {
  const { hint, ...rest } = e.details;
  const all: Record<string, unknown> = { code: e.code, hint, ...rest };
  if (!style.short) return all;
  return Object.fromEntries(['code', 'difference', 'kind', 'route'].filter((k) => all[k] !== undefined).map((k) => [k, all[k]]));
}
