// Records keyed under a newer request key spec than this tapedeck knows: a newer tapedeck bumped
// the spec (docs/hash-spec.md, "Versioning of the key") and wrote them. They are intact and of a
// record version this tapedeck reads, but it cannot compute their keys: it cannot check them,
// and a request it keys under its own spec may not find them. `tapedeck verify` counts them as
// problems, with the upgrade, as it does records of a newer record version.
import { KEY_SPEC_VERSION } from '../providers/normalize.ts';
import { isCacheRecord, isHttpRecord } from './records.ts';
import { UPGRADE_COMMAND } from './record-version.ts';

/**
 * The request key spec version a record's key was computed under, when it is newer than this
 * tapedeck knows: an HTTP exchange keyed as an LLM or JSON request (one matched by its bytes,
 * `match: 'http'`, is keyed by no spec), or a ReplayCache record. Undefined for any other record,
 * and at once for one whose `keyVersion` is this tapedeck's (the test verify makes per record).
 *
 * @example
 * newerKeySpec({ v: 1, kind: 'http', match: 'llm', keyVersion: 3, key: '…', route: 'POST /v1/chat/completions', ... }) // 3
 * newerKeySpec({ v: 1, kind: 'http', match: 'llm', keyVersion: 2, ... }) // undefined
 */
export function newerKeySpec(value: unknown): number | undefined {
  const version = value !== null && typeof value === 'object' ? (value as { keyVersion?: unknown }).keyVersion : undefined;
  if (typeof version !== 'number' || !Number.isSafeInteger(version) || version <= KEY_SPEC_VERSION) return undefined;
  if (isHttpRecord(value)) return value.match === 'http' ? undefined : version;
  // A ReplayCache record has no kind; one with a kind is another writer's.
  return isCacheRecord(value) && (value as { kind?: unknown }).kind === undefined ? version : undefined;
}

/**
 * What a record of a newer key spec is, for a message: its route, or that it is a ReplayCache
 * record.
 *
 * @example
 * newerKeyWhat(httpRecord) // 'POST /v1/chat/completions'
 */
export function newerKeyWhat(value: unknown): string {
  return isHttpRecord(value) ? value.route : 'a ReplayCache record';
}

/**
 * verify's line for the records keyed under a newer request key spec: how many, the first by
 * `name` (its place: `record 3`) and `what` it is, and the upgrade that checks them.
 *
 * @example
 * newerKeyText(2, { name: 'record 0', version: 3, what: 'POST /v1/chat/completions' })
 * // '2 records keyed under a newer request key spec than this tapedeck knows (...), the first record 0 (POST /v1/chat/completions, key spec version 3): ...'
 */
export function newerKeyText(count: number, first: { name: string; version: number; what: string }): string {
  const one = count === 1;
  return (
    `${count} record${one ? '' : 's'} keyed under a newer request key spec than this tapedeck knows (it knows versions 1 to ${KEY_SPEC_VERSION}), ${one ? '' : 'the first '}${first.name} (${first.what}, key spec version ${first.version}): ` +
    `this tapedeck cannot verify ${one ? 'its key' : 'their keys'}, and a replay may not find ${one ? 'it' : 'them'}; upgrade tapedeck to check ${one ? 'it' : 'them'} (${UPGRADE_COMMAND})`
  );
}
