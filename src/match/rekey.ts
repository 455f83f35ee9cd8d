// Keys written under an older request key spec version. A tape stores the request with every
// key, so a key from an older version is recomputed from it when the tape is opened: the tape
// replays without re-recording. The store asks `keyIsCurrent` per record and calls `rekey` for
// the others (docs/hash-spec.md, "Versioning").

import { TapedeckError } from '../errors.ts';
import { requestKeys, type RequestKeys } from './matcher.ts';
import { KEY_SPEC_VERSION, type NormalizeOptions } from '../providers/normalize.ts';

/**
 * Whether a stored key was computed under the current spec version. Records written before
 * version 2 carry no version: `undefined` is version 1.
 *
 * @example
 * keyIsCurrent(undefined) // false: a version-1 record
 * keyIsCurrent(2)         // true
 */
export function keyIsCurrent(keyVersion: unknown): boolean {
  return keyVersion === KEY_SPEC_VERSION;
}

/**
 * The current-version keys of a request stored under key version `keyVersion` (undefined for a
 * version-1 record), or undefined when the current spec does not key it as an LLM request (its
 * shape is none of the documented ones: the caller keys it as plain JSON, as it would a new
 * request). Other errors (a body with no canonical form) are thrown as TapedeckError.
 *
 * @example
 * const keys = rekey(record.request, record.keyVersion, { ignoreArgs })
 * if (keys) index.add(keys.key, record)
 */
export function rekey(request: unknown, keyVersion: unknown, opts: NormalizeOptions = {}): RequestKeys | undefined {
  if (keyVersion !== undefined && (typeof keyVersion !== 'number' || !Number.isInteger(keyVersion) || keyVersion < 1 || keyVersion > KEY_SPEC_VERSION)) {
    throw new TapedeckError('E_TAPE_VERSION', `A record says its key has spec version ${JSON.stringify(keyVersion)}; this tapedeck knows versions 1 to ${KEY_SPEC_VERSION}.`, {
      hint: 'Upgrade tapedeck to read this tape, or re-record it.',
    });
  }
  // Every version so far is recomputed the same way: normalize the stored request anew.
  try {
    return requestKeys(request, opts);
  } catch (e) {
    if (e instanceof TapedeckError && e.code === 'E_REQUEST') return undefined;
    throw e;
  }
}

/**
 * The one warning line per tape that had keys from an older spec version. Only recording a call
 * again stores its new key: a compaction (`tapedeck prune`) copies records as they are, and the
 * key cannot be recomputed there, as it depends on the options replay keys with (ignoreArgs).
 *
 * @example
 * rekeyWarning('tapes/chat.tape', 2) // 'tapes/chat.tape: 2 recording(s) keyed under request key spec version 1 ...'
 */
export function rekeyWarning(tape: string | undefined, count: number): string {
  return `${tape ?? 'tape'}: ${count} recording(s) keyed under request key spec version 1 are keyed under version ${KEY_SPEC_VERSION} from their stored requests at each open; replay is unaffected. Recording them again stores the new keys.`;
}
