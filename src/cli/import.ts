// `tapedeck import`: a tape from recordings of other tools (HAR, VCR.py, nock, fixtures,
// talkback), a tapedeck JSON export, a DSPy-style cache.json or a directory of JSON recordings.
// Loaded only when import runs: the importers are the heaviest part of the CLI.
import { isUtf8 } from 'node:buffer';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { parseJSON, readInput } from './core.ts';
import { largeExportText } from './large-export.ts';
import { usageError, warn } from '../cli-errors.ts';
import type { TapeCommandOptions } from './tape.ts';
import { TapedeckError, withContext } from '../errors.ts';
import { importRecordings, type ImportReport } from '../proxy/import.ts';
import { importTapeJSON } from '../store/export.ts';
import { recordingFilesMessage, recordingJsonFilesMessage, talkbackBesideJsonMessage } from '../store/import/dir-files.ts';
import { refuseSameFile } from '../store/import/target.ts';
import { refuseNonTapeTarget } from '../store/import/target-recording.ts';
import { detectFormat, formatByName, FORMAT_NAMES, IMPORT_FORMATS, jsonInputKind, READS, refuseBinary, refuseNotUtf8, type ImportFormat } from '../store/import/read.ts';
import { isTalkbackDirectory } from '../store/import/talkback.ts';
import { importCacheJSON, importRecordingsDir } from '../store/migrate.ts';
import { TAPE_MAGIC } from '../store/tape-codec.ts';

/**
 * Runs `tapedeck import <file> <second>` and returns its exit code.
 *
 * @example
 * await importCommand('session.har', 'recordings/app.tape', { force: false, har: false, skipBad: false, review: false })
 */
export async function importCommand(file: string | undefined, second: string | undefined, o: TapeCommandOptions): Promise<number> {
  if (!file || !second) throw usageError('import needs the input and the tape to write.', 'tapedeck import app.tape.json recordings/app.tape');
  // Whatever the input is: with --force the tape would replace it.
  refuseSameFile(file, second);
  const { from, force, skipBad, ignoreKeys, redact } = o;
  if (from !== undefined && !(IMPORT_FORMATS as readonly string[]).includes(from)) throw usageError(`Unknown --from ${JSON.stringify(from)}.`, `--from ${IMPORT_FORMATS.join('|')}`);
  if (from !== undefined || recordingFormat(file) !== undefined) {
    const report = await importRecordings(file, second, { from: from as ImportFormat | undefined, force, skipBad, ...(ignoreKeys ? { ignoreArgs: ignoreKeys } : {}), ...(redact ? { redact } : {}), onWarning: warn });
    process.stdout.write(importSummary(second, report));
    return 0;
  }
  // Nor over another recording given second (`import a.yaml b.yaml`, a glob of two cassettes);
  // an import of recordings says it in importRecordings, after any bad entry.
  refuseNonTapeTarget(file, second);
  if (skipBad) throw usageError('--skip-bad goes with a HAR, VCR.py, nock, fixtures or talkback import.', 'tapedeck import session.har app.tape --skip-bad');
  const { records, skipped, from: what, cache } = await importAny(file, second, force, ignoreKeys, redact);
  process.stdout.write(`wrote ${second}: ${records} record${records === 1 ? '' : 's'} from ${what}${skipped ? ` (${skipped} skipped, see warnings)` : ''}\n`);
  // Records keyed by the request body alone answer no HTTP request: createFetch and serve would
  // say the tape "has no HTTP recordings". Said at once, with what replays them.
  if (cache && records > 0) process.stdout.write(`  ${records === 1 ? 'it is a ReplayCache record' : 'they are ReplayCache records'} (keyed by the request body, no HTTP request): replay with ReplayCache.open(${JSON.stringify(second)}) or withReplayCache from llm-tapedeck/store; createFetch and tapedeck serve do not serve them (docs/migrate.md)\n`);
  return 0;
}

/** The recording format of an import source (HAR, VCR.py, nock, fixtures, talkback), or undefined for the others. */
function recordingFormat(src: string): ImportFormat | undefined {
  if (src === '-') return undefined;
  const st = statSync(src, { throwIfNoEntry: false });
  // A directory of *.json5 tapes is talkback's; one of *.json files is JSON recordings (importAny).
  if (st?.isDirectory()) return isTalkbackDirectory(src) ? 'talkback' : undefined;
  // By name without reading the file (a large HAR is not read here as a whole string first).
  const byName = formatByName(src);
  // A pipe or a device (`<(gzip -dc cassette.yaml.gz)`, a FIFO) is read once: by its name, or
  // else not here (importAny reads it, and asks for --from when it holds a recording).
  if (st?.isFile() !== true) return byName;
  return byName ?? detectFormat(src, readFileSync(src, 'utf8'))?.format;
}

/** What an import of recordings made, as the lines the command prints. */
function importSummary(out: string, r: ImportReport): string {
  const n = (k: number, one: string, many = `${one}s`) => `${k} ${k === 1 ? one : many}`;
  const lines = [`wrote ${out}: ${n(r.records, 'record')} from a ${r.format} (${n(r.streams, 'stream')}; ${n(r.masked, 'value')} masked)`];
  for (const x of routeRows(r.routes)) lines.push(`  ${String(x.records).padStart(5)}  ${x.provider}  ${x.route}`);
  if (r.skipped.length) {
    lines.push(`skipped ${n(r.skipped.length, 'entry', 'entries')}:`);
    for (const s of r.skipped) lines.push(`  ${s.where}: ${s.reason.replace(/\s+/g, ' ')}`);
  }
  return `${lines.join('\n')}\n`;
}

/**
 * The report's routes as the summary lists them: one row per provider, method and path. A HAR of
 * a search page has a route per query (`GET /search?q=...`, hundreds of them); the summary says
 * how many queries a path was called with instead of a row for each.
 *
 * @example
 * routeRows([{ provider: 'http', route: 'GET /s?q=a', records: 1 }, { provider: 'http', route: 'GET /s?q=b', records: 2 }])
 * // [{ provider: 'http', route: 'GET /s (2 queries)', records: 3 }]
 */
function routeRows(routes: ImportReport['routes']): ImportReport['routes'] {
  const rows = new Map<string, { provider: string; path: string; records: number; queries: Set<string> }>();
  for (const { provider, route, records } of routes) {
    const q = route.indexOf('?');
    const path = q < 0 ? route : route.slice(0, q);
    let row = rows.get(`${provider} ${path}`);
    if (row === undefined) rows.set(`${provider} ${path}`, (row = { provider, path, records: 0, queries: new Set() }));
    row.records += records;
    row.queries.add(q < 0 ? '' : route.slice(q));
  }
  return [...rows.values()].map((x) => ({
    provider: x.provider,
    route: x.queries.size === 1 ? `${x.path}${[...x.queries][0]}` : `${x.path} (${x.queries.size} queries)`,
    records: x.records,
  }));
}

/**
 * `tapedeck import` takes three inputs and tells them apart by shape: a directory of JSON
 * recordings (one request/response per file), a DSPy-style cache.json (an object with an
 * `entries` object), or a tapedeck JSON export (an object with `header` and `records`). Anything
 * else is refused before a tape is written.
 */
async function importAny(src: string, out: string, force: boolean, ignoredArgs: string[] | undefined, redact: TapeCommandOptions['redact']): Promise<{ records: number; skipped: number; from: string; cache?: boolean }> {
  const formats = READS;
  if (src !== '-' && statSync(src, { throwIfNoEntry: false })?.isDirectory()) {
    if (!readdirSync(src).some((n) => n.endsWith('.json'))) {
      const found = recordingFilesMessage(src, out);
      if (found !== undefined) throw new TapedeckError('E_IMPORT_FORMAT', `${found.what}; no tape written.`, { file: src, hint: found.hint });
      throw new TapedeckError('E_IMPORT_FORMAT', `${src} holds no *.json recordings; no tape written.`, { file: src, hint: formats });
    }
    // nock.back's fixtures directory (a nock recording per *.json file) is no directory of JSON
    // recordings: named as what it is, with the command that imports each, not as seven files
    // each lacking "request" and "response".
    const json = recordingJsonFilesMessage(src, out);
    if (json !== undefined) throw new TapedeckError('E_IMPORT_FORMAT', `${json.what}; no tape written.`, { file: src, hint: json.hint });
    try {
      return { ...(await importRecordingsDir(src, out, { force, ignoredArgs, ...(redact ? { redact } : {}), onWarning: warn })), from: 'a directory of JSON recordings', cache: true };
    } catch (e) {
      // talkback's tape directory with a stray package.json (a *.json file that is no recording,
      // so none imports): named as that, with --from talkback, not as "none of the 1 *.json file
      // is a recording". (*.json recordings beside the tapes are imported, as the *.json decide.)
      const talkback = e instanceof TapedeckError && e.code === 'E_IMPORT_FORMAT' ? talkbackBesideJsonMessage(src, out) : undefined;
      if (talkback !== undefined) throw new TapedeckError('E_IMPORT_FORMAT', `${talkback.what}; no tape written.`, { file: src, hint: talkback.hint });
      throw e;
    }
  }
  // A tapedeck export over the 64 MiB of one JSON document is read whole (./large-export.ts).
  const large = largeExportText(src);
  if (large !== undefined) return importExport(large, src, out, force, ignoredArgs, redact);
  const bytes = readInput(src);
  // The arguments swapped (a tape first), or another binary file: say so, not a JSON error
  // that quotes binary bytes.
  const name = src === '-' ? 'stdin' : src;
  if (bytes.length >= TAPE_MAGIC.length && TAPE_MAGIC.every((b, i) => bytes[i] === b)) {
    throw new TapedeckError('E_IMPORT_FORMAT', `${name} is a tape, not JSON: import reads JSON and writes the tape given second; no tape written.`, {
      file: src,
      hint: `tapedeck import <input.json> <out.tape> (input first); to turn this tape into JSON: tapedeck export ${src === '-' ? '<tape>' : src} > tape.json`,
    });
  }
  if (bytes.subarray(0, 4096).includes(0) || !isUtf8(bytes)) {
    // What it is, where that can be told, whatever its name (session.har.gz, a nock chat.json
    // saved as UTF-16): gzip-compressed, UTF-16 or Latin-1 text each have their own fix.
    refuseBinary(name, bytes.toString('utf8', 0, Math.min(bytes.length, 4096)), undefined);
    refuseNotUtf8(name, bytes, undefined);
    throw new TapedeckError('E_IMPORT_FORMAT', `${name} is binary data, not JSON text; no tape written.`, { file: src, hint: formats });
  }
  // A recording piped in (stdin, or a pipe given as a path: `<(gzip -dc raw.yaml.gz)`) has no
  // file name to tell its format by, and, read once, it is gone when its format is known: import
  // reads one only when told which (--from). Name the flag instead of "none of the formats".
  const pipe = src !== '-' && statSync(src, { throwIfNoEntry: false })?.isFile() === false;
  const piped = src === '-' || pipe ? pipedRecording(bytes.toString('utf8')) : undefined;
  if (piped !== undefined) {
    const from = src === '-' ? 'stdin' : 'a pipe';
    throw new TapedeckError('E_IMPORT_FORMAT', `${src === '-' ? 'stdin' : `${src} (a pipe)`} holds ${piped.what}, and a recording read from ${from} needs its format named; no tape written.`, {
      file: src,
      // A process substitution's path is gone once read: the command it came from, again.
      hint: `tapedeck import ${src === '-' ? '-' : /^\/(?:dev|proc\/self)\/fd\//.test(src) ? '<(...)' : src} ${out} --from ${piped.format} (or save it to a file and give the file's path)`,
    });
  }
  const parsed = parsedInput(bytes, src, name);
  const kind = jsonInputKind(parsed);
  if (kind === 'cache') {
    return { ...(await importCacheJSON(src, out, { force, ignoredArgs, ...(redact ? { redact } : {}), onWarning: warn })), from: 'a DSPy-style cache.json', cache: true };
  }
  if (kind === 'export') return importExport(bytes.toString('utf8'), src, out, force, ignoredArgs, redact);
  const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
  const found = Array.isArray(parsed) ? 'an array' : isObject(parsed) ? `an object with ${Object.keys(parsed).length ? `keys ${Object.keys(parsed).slice(0, 5).join(', ')}` : 'no keys'}` : parsed === null ? 'null' : `a ${typeof parsed}`;
  throw new TapedeckError('E_IMPORT_FORMAT', `${src === '-' ? 'stdin' : src} is none of the formats import reads: found ${found}; no tape written.`, { file: src, hint: formats });
}

/** A tapedeck JSON export's text (of the file `src`) imported to the tape `out`. */
async function importExport(text: string, src: string, out: string, force: boolean, ignoredArgs: string[] | undefined, redact: TapeCommandOptions['redact']): Promise<{ records: number; skipped: number; from: string }> {
  // An export is turned back into its tape byte for byte, its records as they were redacted
  // when recorded: extra rules would be dropped without a word.
  if (redact) throw usageError('--redact-header, --redact-field and --redact-query go with an import of recordings, a directory of JSON recordings or a cache.json; a tapedeck JSON export is imported as it is.', `tapedeck import ${src} ${out} (without them); to find secrets left in a tape: tapedeck scan ${out}`);
  const name = src === '-' ? 'stdin' : src;
  const { records, rekeyed, masked } = await importTapeJSON(text, out, { force, ...(ignoredArgs ? { ignoreArgs: ignoredArgs } : {}) }).catch((e: unknown) => {
    // A newer tapedeck's export (a record or the whole format): the file it is in, first.
    throw e instanceof TapedeckError && e.code === 'E_TAPE_VERSION' ? withContext(e, `${name}: `, { file: src }) : e;
  });
  // A key pasted into a credential header while editing: masked as on record, and said.
  if (masked) warn(`${masked} credential header value(s) (authorization, x-api-key, ...) held a key in clear, edited into the export; they are masked to [REDACTED] on the tape, as recording masks them.`);
  // An edited request keyed as it now reads: said, with what to do when it was no edit.
  if (rekeyed > 0) warn(`${rekeyed} record(s) had a stored key their request no longer gives (the request was edited after export); they are keyed from their requests now, so the old request no longer finds them. Recorded with ignoreArgs? Import with --ignore <args> to key them the same way.`);
  return { records, skipped: 0, from: 'a tapedeck JSON export' };
}

/**
 * The input's JSON, or E_IMPORT_PARSE naming the file, the byte and what import reads: text that
 * is no JSON is none of its inputs (a bare E_JSON would name no file).
 */
function parsedInput(bytes: Buffer, src: string, name: string): unknown {
  try {
    return parseJSON(bytes);
  } catch (e) {
    if (!(e instanceof TapedeckError) || !['E_JSON', 'E_UTF8', 'E_DUPLICATE_KEY'].includes(e.code)) throw e;
    const offset = typeof e.details.offset === 'number' ? e.details.offset : undefined;
    throw new TapedeckError('E_IMPORT_PARSE', `${name} is not JSON import reads: ${e.message.replace(/\.\s*$/, '')}; no tape written.`, {
      file: src,
      ...(offset !== undefined ? { offset } : {}),
      hint: `${e.hint ? `${e.hint} ` : ''}${READS}`,
    });
  }
}

/**
 * The recording format of text piped to `tapedeck import -`, or undefined for anything else (a
 * tapedeck JSON export or a cache.json, which stdin imports, or text no format reads).
 *
 * @example
 * pipedRecording('{"log":{"version":"1.2","entries":[]}}') // { format: 'har', what: 'a HAR' }
 */
function pipedRecording(text: string): { format: ImportFormat; what: string } | undefined {
  let found: ImportFormat | undefined;
  try {
    found = detectFormat('stdin', text)?.format;
  } catch {
    return undefined; // not readable as any recording: the JSON reading below names the fault
  }
  return found === undefined ? undefined : { format: found, what: FORMAT_NAMES[found] };
}
