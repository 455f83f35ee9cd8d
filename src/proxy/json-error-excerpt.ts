/**
 * The strict JSON reader's errors (E_JSON, E_UTF8, E_DUPLICATE_KEY, E_LONE_SURROGATE, ...) quote
 * the body around the fault, 24 bytes either side. A body that holds a key near its fault (a
 * trailing comma after a message that pastes one, a Python dict sent with `str()`: `{'api_key':
 * 'sk-proj-…`) had a piece of the key quoted in the answer, and the client's failing test prints
 * that answer to the CI log. Here the quote is made again with the body's secrets masked, as
 * the tape would mask them. For the proxy's answers and createFetch's (./handler.ts, ./fetch.ts);
 * a page keeps the quote as it is (./json-error-excerpt.browser.ts says why).
 */
import { excerpt } from '../core/status.ts';
import { TapedeckError } from '../errors.ts';
import type { Redactor } from '../store/redact.ts';
import { decodeContentEncoding } from '../store/http-body.ts';

/** How much of the body either side of the fault is masked: a key is whole in it, however long. */
const WIDE = 512;

const utf8 = new TextDecoder('utf-8', { ignoreBOM: true });

/** As the core escapes an excerpt: one line, control characters said, quotes as they are. */
const escaped = (t: string) => JSON.stringify(t).slice(1, -1).replaceAll('\\"', '"');

/**
 * `err` with the excerpt in its message masked, when it is a strict-JSON error about this body
 * (`body` as sent, decoded from its Content-Encoding first, as the reader read it) and the
 * excerpt shows part of a secret; anything else as it is.
 *
 * @example
 * maskJsonErrorExcerpt(e, req.headers, body, 32 << 20, deck.redactor).message
 * // 'Invalid JSON at byte 117 (line 1, column 118): …[REDACTED]"}],⟪here⟫}…: expected …'
 */
export function maskJsonErrorExcerpt(err: unknown, headers: Readonly<Record<string, string | string[] | undefined>>, body: Uint8Array, maxBytes: number, redactor: Redactor): unknown {
  if (!(err instanceof TapedeckError) || typeof err.details.offset !== 'number' || !err.message.includes('⟪here⟫') || redactor.keepSecrets) return err;
  let read = body;
  try {
    read = decodeContentEncoding(headers, body, maxBytes);
  } catch {
    return err; // not the bytes the reader read: nothing to quote again
  }
  const offset = err.details.offset;
  if (offset > read.length) return err;
  const quoted = excerpt(read, offset);
  if (!err.message.includes(quoted)) return err;
  // Each side masked over a wide stretch, so a key that starts (or ends) outside the quote is
  // still recognized; then cut to the quote's length.
  const before = utf8.decode(read.subarray(Math.max(0, offset - WIDE), offset));
  const after = utf8.decode(read.subarray(offset, Math.min(read.length, offset + WIDE)));
  const maskedBefore = redactor.text(before);
  const maskedAfter = redactor.text(after);
  if (maskedBefore === before && maskedAfter === after) return err;
  const near = utf8.decode(read.subarray(Math.max(0, offset - 24), offset)).length;
  const far = utf8.decode(read.subarray(offset, Math.min(read.length, offset + 24))).length;
  const masked = `${escaped(maskedBefore.slice(Math.max(0, maskedBefore.length - near)))}⟪here⟫${escaped(maskedAfter.slice(0, far))}`;
  return new TapedeckError(err.code, err.message.replace(quoted, masked), err.details);
}
