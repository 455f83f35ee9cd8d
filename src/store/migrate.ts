/**
 * Migration onto tapes from the two formats tapedeck replaces:
 * - directories of JSON recordings: one `*.json` file per request (`request`, `response`,
 *   optional `recordedAt` and `signature`), used in file-name order;
 * - DSPy-style JSON cache files (cache.json): `{ metadata, entries: { <hash>: { request, response } } }`,
 *   where `response` is `{ type: 'dict' | 'json' | 'pydantic' | 'Prediction', data | store, ... }`.
 *
 * Both become ReplayCache records, keyed by tapedeck's own request key (the old hashes were
 * computed differently and are not reused), redacted like every other write, in the source's
 * order. What the old format knew beyond the value (source file, the cache's type tag, usage)
 * goes into `meta`, so nothing is lost. The result is deterministic: the same input and the
 * same `created` give the same tape bytes.
 */
import { readFile, unlink } from 'node:fs/promises';
import { basename } from 'node:path';
import { TapedeckError } from '../errors.ts';
import { requestKeys } from '../match/matcher.ts';
import { loadRecordingsDir } from '../match/recordings.ts';
import { VERSION } from '../version.ts';
import { sortedKeys } from './record-order.ts';
import { redactor, type RedactOptions } from './redact.ts';
import { newRedactionSalt } from './salt.ts';
import { buildRecord, type ReplayRecord } from './records.ts';
import { appendRecords, createTape } from './tape-file.ts';
import { asTargetError, besideTarget, intoPlace } from './import/target.ts';

/**
 * Options of importCacheJSON and importRecordingsDir: the keys the ReplayCache will read them
 * with, redaction, replacing a tape.
 */
export interface MigrateOptions {
  /** Replace an existing tape (default: refuse with E_TAPE_EXISTS). */
  force?: boolean;
  /** The tape's `created`, and the recordedAt of entries that do not carry their own (default now). */
  created?: string;
  /**
   * The new tape's redaction salt, 32 hex digits (default a random one). Give it, with
   * `created`, for a byte-identical tape from the same input.
   */
  salt?: string;
  /** Arguments left out of the keys, as the ReplayCache that will read the tape is opened with. */
  ignoredArgs?: readonly string[];
  /** What is masked before anything is written, as for recording (docs/proxy.md, "Secrets"). */
  redact?: RedactOptions;
  /** Where skipped inputs are reported (default process.emitWarning). */
  onWarning?: (message: string) => void;
}

/** What an import of JSON recordings did: the records written and the files skipped. */
export interface MigrateResult {
  records: number;
  skipped: number;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** An ISO 8601 timestamp from a seed's date string, or undefined if there is none. */
function isoOf(v: unknown): string | undefined {
  if (typeof v !== 'string') return undefined;
  const t = Date.parse(v);
  return Number.isNaN(t) ? undefined : new Date(t).toISOString();
}

function toRecord(request: unknown, value: unknown, recordedAt: string, meta: Record<string, unknown>, opts: MigrateOptions & { salt: string }): ReplayRecord {
  const r = redactor({ ...opts.redact, salt: opts.salt });
  const keys = requestKeys(request, { ignoreArgs: opts.ignoredArgs });
  return buildRecord(keys, request, sortedKeys(r.value(value)), { ignoredArgs: opts.ignoredArgs, meta }, r, recordedAt);
}

/** Writes records to a new tape beside `out` and moves it into place (never a half-written tape). */
async function writeTape(out: string, records: ReplayRecord[], opts: MigrateOptions & { salt: string }): Promise<void> {
  const { tmp, removeDirs } = await besideTarget(out, 'migrate');
  let written = false;
  try {
    await createTape(tmp, { created: opts.created, tapedeckVersion: VERSION, salt: opts.salt });
    if (records.length > 0) await appendRecords(tmp, records);
    const exists = () =>
      new TapedeckError('E_TAPE_EXISTS', `Tape ${out} already exists; the import does not overwrite it.`, {
        file: out,
        hint: 'Pass --force ({ force: true }) to replace it, or import to another path.',
      });
    await intoPlace(tmp, out, opts.force === true, exists);
    written = true;
  } catch (e) {
    if (e instanceof TapedeckError) throw asTargetError(e, tmp, out);
    throw new TapedeckError('E_TAPE_IO', `Tape ${out}: writing the imported tape failed: ${(e as Error).message}`, { file: out, hint: 'Check permissions and free disk space.' });
  } finally {
    await unlink(tmp).catch(() => {});
    if (!written) await removeDirs();
  }
}

/** How loadRecordingsDir begins the warning for a file it skipped. */
const SKIPPED = 'Skipped recording ';

/**
 * The error of a directory import where no file imports: each file and why it was skipped,
 * and what a file of such a directory holds (hand-written recordings go in with tapedeck add).
 */
function noRecordingImports(dir: string, skips: string[]): TapedeckError {
  const what =
    skips.length === 0
      ? `${dir} holds no *.json recordings`
      : `none of the ${skips.length} *.json file${skips.length === 1 ? '' : 's'} in ${dir} is a recording import reads: ${skips.map((m, i) => `(${i + 1}) ${m.slice(SKIPPED.length).replace(/\.$/, '')}`).join('; ')}`;
  return new TapedeckError('E_IMPORT_FORMAT', `${what}; no tape written.`, {
    file: dir,
    skipped: skips.length,
    hint: 'A directory import takes one recording per *.json file, { "request": <the request body: { "model", "messages", ... }>, "response": <the answer> } (docs/migrate.md); hand-written recordings ({ "request": { "url", "body" }, "response" }) go on a tape with tapedeck add <tape> <file.json>...',
  });
}

/**
 * Imports a directory of JSON recordings into a new tape: one record per `*.json` file, in
 * file-name order; bad files are skipped with a warning naming the file (and byte offset). A
 * directory none of whose files imports is E_IMPORT_FORMAT, each file named with why, and no
 * tape is written.
 *
 * @example
 * await importRecordingsDir('test/recordings', 'test/recordings.tape')
 */
export async function importRecordingsDir(dir: string, out: string, given: MigrateOptions = {}): Promise<MigrateResult> {
  const opts = { ...given, salt: given.salt ?? newRedactionSalt() };
  const created = opts.created ?? new Date().toISOString();
  const warn = opts.onWarning ?? ((m: string) => process.emitWarning(m, 'TapedeckWarning'));
  // Held until the whole directory is read: when no file imports, they are the error's reasons.
  const said: string[] = [];
  const recordings = loadRecordingsDir(dir, { ignoreArgs: opts.ignoredArgs, onWarning: (m) => said.push(m) });
  const skips = said.filter((m) => m.startsWith(SKIPPED));
  // An empty tape would replay nothing, and exit 0 would hide why (as an empty HAR is refused).
  if (recordings.length === 0) throw noRecordingImports(dir, skips);
  for (const m of said) warn(m);
  const skipped = skips.length;
  const records = recordings.map((rec) => {
    const raw = rec as unknown as Record<string, unknown>;
    const at = typeof raw.recordedAt === 'string' ? raw.recordedAt : created;
    return toRecord(rec.request, rec.response, at, { source: rec.source, format: rec.signature ? 'recordings-dir-v2' : 'recordings-dir-v1' }, opts);
  });
  await writeTape(out, records, { ...opts, created });
  return { records: records.length, skipped };
}

/** A DSPy-style cache's serialized response -> the value a TypeScript caller gets, and what else it said. */
function fromDspyCache(response: unknown, at: string): { value: unknown; meta: Record<string, unknown> } {
  if (!isObject(response) || typeof response.type !== 'string') {
    throw new TapedeckError('E_RECORDING', `${at}: "response" must be an object with a string "type".`, { path: at });
  }
  const { type } = response;
  switch (type) {
    case 'dict':
    case 'json':
      return { value: response.data, meta: { type } };
    case 'pydantic':
      return { value: response.data, meta: { type, class: response.class } };
    case 'Prediction': {
      const meta: Record<string, unknown> = { type };
      if (response.usage !== undefined) meta.usage = response.usage;
      if (response.cache_hit !== undefined) meta.cacheHit = response.cache_hit;
      // The cache's documented schema writes `data`, its serializer `store`: accept either.
      return { value: response.store ?? response.data, meta };
    }
    default:
      throw new TapedeckError('E_RECORDING', `${at}: unknown response type ${JSON.stringify(type)}.`, {
        path: at,
        hint: 'A DSPy-style cache writes dict, json, pydantic or Prediction.',
      });
  }
}

/**
 * Imports a DSPy-style JSON cache file (cache.json) into a new tape, entries in file order. An entry without a
 * usable request or response is skipped with a warning naming its hash; a file that is not a
 * DSPy-style cache is an error.
 *
 * @example
 * await importCacheJSON('tests/fixtures/my_test.json', 'tests/fixtures/my_test.tape')
 */
export async function importCacheJSON(file: string, out: string, given: MigrateOptions = {}): Promise<MigrateResult> {
  const opts = { ...given, salt: given.salt ?? newRedactionSalt() };
  let data: unknown;
  try {
    data = JSON.parse(await readFile(file, 'utf8'));
  } catch (e) {
    throw new TapedeckError('E_RECORDING', `${file} is not a readable JSON cache file: ${(e as Error).message}.`, { file, hint: 'Check the path and that the file is valid JSON.' });
  }
  if (!isObject(data) || !isObject(data.entries)) {
    throw new TapedeckError('E_RECORDING', `${file} is not a DSPy-style cache file: expected { "metadata", "entries": { ... } }.`, {
      file,
      hint: 'For a tapedeck JSON export use importTapeJSON (tapedeck import detects the format).',
    });
  }
  const metadata = isObject(data.metadata) ? data.metadata : {};
  const created = opts.created ?? isoOf(metadata.created_at) ?? new Date().toISOString();
  const recordedAt = isoOf(metadata.last_updated) ?? created;
  const warn = opts.onWarning ?? ((m: string) => process.emitWarning(m, 'TapedeckWarning'));
  const records: ReplayRecord[] = [];
  let skipped = 0;
  for (const [hash, entry] of Object.entries(data.entries)) {
    const at = `entries[${JSON.stringify(hash)}]`;
    try {
      if (!isObject(entry) || !('request' in entry)) throw new TapedeckError('E_RECORDING', `${at}: expected { "request", "response" }.`, { path: at });
      const { value, meta } = fromDspyCache(entry.response, `${at}.response`);
      records.push(toRecord(entry.request, value, recordedAt, { ...meta, source: basename(file), sourceKey: hash }, opts));
    } catch (e) {
      if (!(e instanceof TapedeckError)) throw e;
      skipped++;
      // The entry named, whichever check refused it (the request's shape check names no place).
      warn(`${file}: skipped entry ${JSON.stringify(hash)}: ${e.message.startsWith(`${at}: `) ? e.message.slice(at.length + 2) : e.message}`);
    }
  }
  await writeTape(out, records, { ...opts, created });
  return { records: records.length, skipped };
}
