/**
 * A request edited by hand in a tape's JSON form (`tapedeck export`, a prompt changed, the answer
 * too) keeps the stored key of the request it was: replayed as it is, the old request got the
 * edited answer and the edited one missed. `tapedeck import` keys such a record from its request
 * again (rekeyEdited in src/store/export.ts); a page loads the JSON directly, so its replay does
 * the same, under the key options it is given (the ones the tape was recorded with).
 */
import type { NormalizeOptions } from '../providers/types.ts';
import { keyIsCurrent } from '../match/rekey.ts';
import { currentHttpKey, isHttpRecord, type HttpRecord } from '../store/records.ts';

/**
 * The record keyed as its request now reads: a copy with the new key when it is an HTTP exchange
 * (LLM or JSON body, current key version) whose stored key its request no longer gives, else the
 * record itself.
 *
 * @example
 * const v = keyedAsEdited(record, { ignoreArgs: ['user'] })
 * if (v !== record) rekeyed++
 */
export function keyedAsEdited(v: unknown, norm: Omit<NormalizeOptions, 'endpoint'>): unknown {
  if (!isHttpRecord(v) || v.match === 'http' || !keyIsCurrent(v.keyVersion) || v.request === undefined) return v;
  // As a record of an older key version: computed from the stored request, not taken as filed.
  const now = currentHttpKey({ ...v, keyVersion: undefined } as unknown as HttpRecord, { ...norm, endpoint: { method: v.request.method, url: v.request.url } });
  return now.key === v.key && now.match === v.match ? v : { ...v, key: now.key, match: now.match };
}
