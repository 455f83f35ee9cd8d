/**
 * What keeps a decoded value filed as an HTTP record from being one, said to a call it answers
 * (E_TAPE_CORRUPT, not damage: the record decoded). Node only: a page's error names no field
 * (./record-misfit.browser.ts; the bundle's budget).
 */
import { isBytes } from '../bytes.ts';

/**
 * What keeps a decoded value filed as an HTTP record from being one, for the error of a call it
 * answers: a body that is no bytes (a map of numbers, as bytes of another realm were once
 * written); undefined for other fields.
 *
 * @example
 * httpRecordMisfit({ kind: 'http', response: { body: { 0: 123 } } }) // 'its response.body is object, not bytes'
 */
export function httpRecordMisfit(v: unknown): string | undefined {
  const body = (v as { response?: { body?: unknown } } | null)?.response?.body;
  return isBytes(body) ? undefined : `its response.body is ${typeof body}, not bytes`;
}
