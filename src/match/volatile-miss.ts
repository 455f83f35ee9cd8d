/**
 * A miss of a matcher with volatileText says which spans of the request were replaced before
 * keying: a pattern that matches too much (or too little) is then visible where the user looks.
 */
import { TapedeckError } from '../errors.ts';
import { normalizeRequest } from '../providers/normalize.ts';
import type { NormalizeOptions } from '../providers/types.ts';
import { replaceVolatileText, volatileLine, volatilePatterns, type VolatileSpan } from '../providers/volatile-text.ts';
import { isBytes } from '../bytes.ts';

const decoder = new TextDecoder();

/**
 * The miss with a line naming the replaced spans (and `details.volatileText`), or the miss as
 * it is when volatileText is unset or replaced nothing. Runs on the miss path only.
 *
 * @example
 * throw withVolatileSpans(request, { volatileText: [/\d{4}-\d{2}-\d{2}/] }, miss)
 */
export function withVolatileSpans(request: unknown, norm: NormalizeOptions, miss: TapedeckError): TapedeckError {
  if (!norm.volatileText || norm.volatileText.length === 0 || miss.code !== 'E_MISS') return miss;
  let spans: VolatileSpan[] = [];
  try {
    const body = isBytes(request) ? JSON.parse(decoder.decode(request)) : typeof request === 'string' ? JSON.parse(request) : request;
    const plain = normalizeRequest(body, { ...norm, volatileText: undefined });
    replaceVolatileText(plain.messages, volatilePatterns(norm.volatileText), spans);
  } catch {
    spans = [];
  }
  const line = volatileLine(spans);
  if (!line) return miss;
  return new TapedeckError('E_MISS', `${miss.message}\n  ${line}`, { ...miss.details, volatileText: spans });
}
