// A request body as canonical JSON, for comparing bodies byte by byte on the miss path (the
// ranking of tied recordings, src/match/diagnose.ts; the texts the matcher keeps for it,
// request-texts.ts).

import { canonicalize, canonicalizeJSON, canonicalJSONView } from '../core/index.ts';
import { isBytes } from '../bytes.ts';

/**
 * A body's canonical JSON (the caller's SDK and the stored record may order members
 * differently), or undefined when it has none (a value canonical JSON cannot hold). With
 * `view`, that of a body given as JSON text may be a view of the core's memory, valid until the
 * next core call (no buffer made for it): for a caller that copies it or reads it at once.
 *
 * @example
 * canonicalBytes({ b: 1, a: 2 }) // the bytes of {"a":2,"b":1}
 */
export function canonicalBytes(body: unknown, view = false): Uint8Array | undefined {
  try {
    if (typeof body === 'string' || isBytes(body)) return view ? canonicalJSONView(body) : canonicalizeJSON(body);
    return canonicalize(body ?? null);
  } catch {
    return undefined;
  }
}
