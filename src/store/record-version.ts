/**
 * Record versions: which `v` of each of tapedeck's record layouts this release reads, and the
 * E_TAPE_VERSION a record of a newer one gets (as a whole tape of a newer format does), rather
 * than being called damaged. Browser builds take record-version.browser.ts: a page replays what
 * it reads and keeps the bundle budget.
 */
import { TapedeckError } from '../errors.ts';

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object';

/**
 * The record versions this tapedeck reads, per record kind (`cache`: ReplayCache records, which
 * have no `kind`). A newer tapedeck that changes a layout writes a higher `v`; this one must say
 * so rather than call the record damaged or malformed (E_TAPE_VERSION, as for a whole tape of
 * a newer format: src/store/tape-codec.ts).
 */
const RECORD_VERSIONS: Readonly<Record<string, { name: string; reads: readonly number[] }>> = {
  http: { name: 'an HTTP exchange record', reads: [1] },
  cache: { name: 'a ReplayCache record', reads: [1] },
  'tapedeck.replay': { name: 'a replay record', reads: [1] },
  mcp: { name: 'an MCP exchange record', reads: [1, 2] },
  realtime: { name: 'a realtime session record', reads: [1] },
};

/** A tapedeck record of a version newer than this tapedeck reads (see {@link newerRecordVersion}). */
export interface NewerRecord {
  /** Its kind (`cache` for a ReplayCache record) and that kind's name in messages, with its article. */
  kind: string;
  name: string;
  /** The record's `v`. */
  version: number;
  /** The versions of that kind this tapedeck reads. */
  reads: readonly number[];
}

/**
 * The record's kind and version when it is one of tapedeck's own layouts with a record version
 * (`v`) newer than any this tapedeck reads, as a newer tapedeck writes it; undefined for any
 * other value (a record this tapedeck reads, another tool's record, a malformed one: `v` that
 * is no whole number above the versions read is damage, not a newer writer).
 *
 * @example
 * newerRecordVersion({ v: 9, kind: 'http', key: '…' }) // { kind: 'http', name: 'an HTTP exchange record', version: 9, reads: [1] }
 * newerRecordVersion({ v: 1, kind: 'http' }) // undefined
 */
export function newerRecordVersion(value: unknown): NewerRecord | undefined {
  if (!isObject(value) || Array.isArray(value) || value instanceof Map) return undefined;
  const v = value.v;
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) return undefined;
  // A ReplayCache record has no kind: told by its request and value (isCacheRecord).
  const kind = value.kind === undefined ? ('request' in value && 'value' in value ? 'cache' : undefined) : typeof value.kind === 'string' && Object.hasOwn(RECORD_VERSIONS, value.kind) ? value.kind : undefined;
  if (kind === undefined) return undefined;
  const known = RECORD_VERSIONS[kind]!;
  if (v <= Math.max(...known.reads)) return undefined;
  return { kind, name: known.name, version: v, reads: known.reads };
}

/** The versions a kind reads, as a message says them: `version 1`, `versions 1 and 2`. */
const versionsRead = (reads: readonly number[]): string => (reads.length === 1 ? `version ${reads[0]}` : `versions ${reads.slice(0, -1).join(', ')} and ${reads[reads.length - 1]}`);

/**
 * What is wrong with a record of a newer record version, after its name in a sentence.
 *
 * @example
 * newerRecordText(newerRecordVersion({ v: 9, kind: 'http' })!) // 'is an HTTP exchange record of record version 9; this tapedeck reads version 1 of it'
 */
export function newerRecordText(newer: NewerRecord): string {
  return `is ${newer.name} of record version ${newer.version}; this tapedeck reads ${versionsRead(newer.reads)} of it`;
}

/** What to run to read newer records: the package's latest release. */
export const UPGRADE_COMMAND = 'npm install -D llm-tapedeck@latest';

/**
 * E_TAPE_VERSION for a record of a newer record version: `what` names the record and where it
 * is (`app.tape: the record at byte 113`), in the words a whole tape of a newer format gets
 * ("has tape format version 2; this tapedeck reads up to 1", "upgrade tapedeck to read ...").
 *
 * @example
 * recordVersionError('app.tape: the record at byte 113', newerRecordVersion(value)!, { file: 'app.tape', offset: 113 })
 * // app.tape: the record at byte 113 is an HTTP exchange record of record version 9; this tapedeck reads version 1 of it. It was written by a newer tapedeck; upgrade tapedeck to read it (npm install -D llm-tapedeck@latest).
 */
export function recordVersionError(what: string, newer: NewerRecord, details: Record<string, unknown> = {}): TapedeckError {
  return new TapedeckError('E_TAPE_VERSION', `${what} ${newerRecordText(newer)}.`, {
    ...details,
    kind: newer.kind,
    version: newer.version,
    hint: `It was written by a newer tapedeck; upgrade tapedeck to read it (${UPGRADE_COMMAND}).`,
  });
}

/**
 * RecordKind.newer for one record kind: a value of that kind in a newer record version gets its
 * E_TAPE_VERSION (see src/store/collection.ts), any other value undefined.
 *
 * @example
 * const kind = { ..., newer: newerRecordOf('http') } // kind.newer({ v: 9, kind: 'http' }, 'app.tape: the record at byte 113', {}) is E_TAPE_VERSION
 */
export const newerRecordOf =
  (kind: string) =>
  (value: unknown, where: string, details: Record<string, unknown>): TapedeckError | undefined => {
    const newer = newerRecordVersion(value);
    return newer?.kind === kind ? recordVersionError(where, newer, details) : undefined;
  };
