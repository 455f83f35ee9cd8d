/**
 * Which recording format a file is, and its exchanges: `--from` when given, else the file name
 * (`.har`, `.yaml` / `.yml`, `.json5`), else the shape of its JSON (`log.entries`: HAR; an array
 * of `{ scope, method }`: nock; MockServer expectations or `{ fixtures }`: fixtures;
 * `{ interactions }`: VCR.py's JSON serializer; `{ meta, req }`, in JSON5 or JSON: a talkback
 * tape). A directory of talkback tapes is told by its files (talkback.ts).
 */
import { isUtf8 } from 'node:buffer';
import { statSync } from 'node:fs';
import { TapedeckError } from '../../errors.ts';
import { badFile, firstNonUtf8, isObject, notUtf8Byte, type ReadResult } from './exchange.ts';
import { isFixtures, readFixtures } from './fixtures.ts';
import { parseJsonFile, readHar } from './har.ts';
import { parseJson5 } from './json5.ts';
import { isNockCode, isNockDefinitions, nockCodeError, readNock } from './nock.ts';
import { isTalkbackTape, readTalkbackTape } from './talkback.ts';
import { readVcr } from './vcr.ts';
import { TAPE_MAGIC } from '../tape-codec.ts';

/** The formats `tapedeck import --from` names. */
export const IMPORT_FORMATS = ['har', 'vcr', 'nock', 'fixtures', 'talkback'] as const;
/** The formats importRecordings (tapedeck import) reads. */
export type ImportFormat = (typeof IMPORT_FORMATS)[number];

/** What each recording format is called in a message (`found a VCR.py cassette`, `is UTF-16 text, not a HAR`). */
export const FORMAT_NAMES: Readonly<Record<ImportFormat, string>> = { har: 'a HAR', vcr: 'a VCR.py cassette', nock: 'a nock recording', fixtures: 'mock-server fixtures', talkback: 'a talkback tape' };

/** The format a recording file's name says (`.har`, `.yaml` / `.yml`, `.json5`: the only JSON5 files import reads are talkback's), if any. */
export function formatByName(file: string): ImportFormat | undefined {
  const name = file.toLowerCase();
  if (name.endsWith('.har')) return 'har';
  if (name.endsWith('.yaml') || name.endsWith('.yml')) return 'vcr';
  if (name.endsWith('.json5')) return 'talkback';
  return undefined;
}

/**
 * The format of a recording file by its name and text, or undefined when it is none of
 * {@link IMPORT_FORMATS} (the caller may know other formats). `parsed` is the JSON value when
 * the text was parsed on the way. Throws for what no caller reads: an empty file or JSON that
 * does not parse (E_IMPORT_PARSE), a zip archive (E_IMPORT_FORMAT).
 */
export function detectFormat(file: string, text: string): { format: ImportFormat; parsed?: unknown } | undefined {
  const byName = formatByName(file);
  // A gzip file or a tape named .har is what it is, not a JSON error.
  if (byName) {
    refuseBinary(file, text, byName);
    return { format: byName };
  }
  // Told by its bytes, as it is under a known name: a gzip file, a tape, UTF-16 text (a nock
  // chat.json saved by PowerShell) each have their own fix, and other binary data is none of the
  // formats (no JSON error quoting NUL bytes).
  // (A tape given first is left to the caller, which says how to call import and export.)
  if (!text.startsWith(TAPE_TEXT)) refuseBinary(file, text, undefined);
  const start = text.trimStart();
  // Nothing to tell a format by, and nothing any format could import: said as such, not as
  // "none of the formats".
  if (start === '') throw badFile(file, 'recording file', 'the file is empty');
  if (/^(?:---\s*\n)?(?:interactions|version)\s*:/.test(start)) return { format: 'vcr' };
  if (isNockCode(start)) throw nockCodeError(file);
  if (start[0] !== '{' && start[0] !== '[') return undefined;
  // JSON that does not parse (cut short, hand-edited) is no input of any kind import reads
  // (recordings, a tapedeck export, a cache.json): the file, the byte and the fix. Unless it is
  // a talkback tape under another name than .json5: JSON5, which JSON.parse does not read.
  let parsed: unknown;
  try {
    parsed = parseJsonFile(text, file, 'JSON file');
  } catch (e) {
    const tape = start[0] === '{' ? json5Tape(text) : undefined;
    if (tape === undefined) throw e;
    return { format: 'talkback', parsed: tape };
  }
  if (isObject(parsed) && isObject(parsed.log) && 'entries' in parsed.log) return { format: 'har', parsed };
  if (isObject(parsed) && Array.isArray(parsed.interactions)) return { format: 'vcr', parsed };
  // An empty array is what nock.back writes for a test that made no HTTP call (an empty list of
  // MockServer expectations too): a source with no entries, which its import says (E_IMPORT_ENTRY,
  // docs/migrate.md), not a file of none of the formats.
  if (Array.isArray(parsed) && parsed.length === 0) return { format: 'nock', parsed };
  if (isNockDefinitions(parsed)) return { format: 'nock', parsed };
  if (isNockCode(parsed)) throw nockCodeError(file);
  if (isFixtures(parsed)) return { format: 'fixtures', parsed };
  if (isTalkbackTape(parsed)) return { format: 'talkback', parsed };
  return undefined;
}

/** The talkback tape a text holds as JSON5, or undefined when it holds no such thing (only on the way to an error otherwise). */
function json5Tape(text: string): unknown {
  try {
    const v = parseJson5(text);
    return isTalkbackTape(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

/** A zip archive's first bytes (a local file header), as the text read as UTF-8 begins. */
const ZIP_MAGIC = 'PK\u0003\u0004';

/**
 * Refuses a zip archive: Playwright writes a HAR given a `.zip` path zipped (the HAR and its
 * bodies' files), which must be unzipped first (docs/migrate.md).
 */
function refuseZip(file: string, text: string): void {
  if (!text.startsWith(ZIP_MAGIC)) return;
  throw new TapedeckError('E_IMPORT_FORMAT', `${file} is a zip archive, not a recording (Playwright zips a HAR saved to a .zip path); no tape written.`, {
    file,
    hint: `Unzip it and import the .har inside, beside the files it names (unzip ${file} -d har && tapedeck import har/<name>.har <tape>). ${READS}`,
  });
}

/** The UTF-8 decoding of a tape's first bytes, as a tape read as text begins. */
const TAPE_TEXT = Buffer.from(TAPE_MAGIC).toString('utf8');

/**
 * Refuses a file that is no text a recording is written in, saying what it is: a zip archive, a
 * gzip file (a HAR or cassette saved compressed), a tapedeck tape (the arguments swapped), UTF-16
 * text (Windows tools save so), or other binary data. Every format import reads is UTF-8 text,
 * so such a file is refused whatever format its name or --from gives it (`format`): parsed as
 * JSON or YAML it would be "invalid JSON at byte 0", which sends the user to check that the file
 * is whole. `text` is the file decoded as UTF-8 (bytes that are no UTF-8 are U+FFFD).
 *
 * @example
 * refuseBinary('app.har', '\u001f\ufffd\u0008...', 'har') // throws E_IMPORT_FORMAT: gzip-compressed data
 */
export function refuseBinary(file: string, text: string, format: ImportFormat | undefined): void {
  refuseZip(file, text);
  const head = text.slice(0, 4096);
  const what = format === undefined ? 'a recording' : FORMAT_NAMES[format];
  const refuse = (is: string, hint: string, why = ''): never => {
    throw new TapedeckError('E_IMPORT_FORMAT', `${file} is ${is}, not ${what}${why}; no tape written.`, { file, ...(format !== undefined ? { format } : {}), hint });
  };
  // 1f 8b 08: gzip's magic and its one method, 0x8b no UTF-8.
  if (head.startsWith('\u001f\ufffd\u0008')) {
    const plain = /\.gz$/i.test(file) ? file.slice(0, -3) : `${file.replace(/\.[^./]*$/, '')}.unzipped${/\.[^./]*$/.exec(file)?.[0] ?? ''}`;
    refuse('gzip-compressed data', `Decompress it, then import the file it gives: gzip -dc ${file} > ${plain} && tapedeck import ${plain} <tape>.`);
  }
  if (head.startsWith(TAPE_TEXT)) {
    refuse('a tapedeck tape', `tapedeck import <recording> <out.tape> takes the recording first; to see this tape as JSON: tapedeck export ${file} > tape.json`);
  }
  // A UTF-16 byte order mark (FF FE or FE FF, no UTF-8), or ASCII text spelled in UTF-16 (a NUL
  // beside every character) without one.
  const afterMark = head.startsWith('\ufffd\ufffd') ? head.slice(2) : head;
  if ((afterMark !== head && afterMark.includes('\u0000')) || /^(?:[\t\n\r -~]\u0000){4}|^(?:\u0000[\t\n\r -~]){4}/.test(afterMark)) {
    refuse('UTF-16 text', `Save it as UTF-8 and import that: iconv -f UTF-16 -t UTF-8 ${file} > utf8-${file.replace(/^.*\//, '')}.`, ': import reads UTF-8 text');
  }
  // JSON and YAML are text: a NUL, or a first byte that is no UTF-8, is binary data.
  if (head.includes('\u0000') || head.startsWith('\ufffd')) refuse('binary data', READS);
}

/**
 * Refuses a recording's bytes that are no UTF-8 text, before they are decoded: decoding would
 * turn each byte that is no UTF-8 (a Latin-1 `é` written by an old tool, a cut multi-byte
 * character) into U+FFFD, and the import would write that in place of the text, exit 0. A file
 * {@link refuseBinary} names (gzip, a tape, UTF-16, binary data) is refused as that; other text
 * with a byte that is no UTF-8 names the byte's offset.
 *
 * @example
 * refuseNotUtf8('old.yaml', Buffer.from('caf\xe9', 'latin1'), 'vcr') // throws E_IMPORT_FORMAT: byte 3 (0xe9) is no UTF-8
 */
export function refuseNotUtf8(file: string, bytes: Uint8Array, format: ImportFormat | undefined): void {
  if (isUtf8(bytes)) return;
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  refuseBinary(file, b.toString('utf8', 0, Math.min(b.length, 4096)), format);
  const at = firstNonUtf8(b);
  const what = format === undefined ? 'a recording' : FORMAT_NAMES[format];
  throw new TapedeckError('E_IMPORT_FORMAT', `${file} is not UTF-8 text: ${notUtf8Byte(b, at)}, and ${what} is read as UTF-8 text; no tape written.`, {
    file,
    offset: at,
    ...(format !== undefined ? { format } : {}),
    hint: `Convert it to UTF-8 from the encoding it was written in (Latin-1 for most older tools) and import that: iconv -f LATIN1 -t UTF-8 ${file} > utf8-${file.replace(/^.*\//, '')}.`,
  });
}

/**
 * Refuses a source path that names nothing (E_FILE with the path and the fix), before it is read:
 * Node's own error would be a bare ENOENT naming no command and no fix. `-` (stdin) passes.
 *
 * @example
 * refuseMissingSource('nope.yaml') // throws E_FILE: No such file or directory: nope.yaml
 */
export function refuseMissingSource(src: string): void {
  if (src === '-') return;
  let missing: boolean;
  try {
    missing = statSync(src, { throwIfNoEntry: false }) === undefined;
  } catch {
    return; // another fault of the path (a part of it not a directory, no permission): the read says it
  }
  if (!missing) return;
  throw new TapedeckError('E_FILE', `No such file or directory: ${src}; no tape written.`, {
    file: src,
    errno: 'ENOENT',
    hint: 'Check the path: import reads a recording file (HAR, VCR.py cassette, nock recording, mock-server fixtures, talkback tape) or the directory talkback records to.',
  });
}

/** What `tapedeck import` reads, for hints. */
export const READS = `tapedeck import reads HAR, VCR.py cassettes, nock recordings, mock-server fixtures and talkback tapes (a tape file or the directory talkback records to) (--from ${IMPORT_FORMATS.join('|')} when not detected), a tapedeck JSON export, a DSPy-style cache.json, or a directory of JSON recordings.`;

/**
 * Reads a recording file of a given format into exchanges.
 *
 * @example
 * const read = readRecordingFile('network.har', readFileSync('network.har', 'utf8'), 'har')
 */
export function readRecordingFile(file: string, text: string, format: ImportFormat, parsed?: unknown): ReadResult {
  refuseBinary(file, text, format);
  switch (format) {
    case 'har':
      return readHar(text, file, { parsed });
    case 'vcr':
      return readVcr(text, file);
    case 'nock':
      return readNock(text, file, { parsed });
    case 'fixtures':
      return readFixtures(text, file, { parsed });
    case 'talkback':
      return readTalkbackTape(text, file, { parsed });
    default:
      throw new TapedeckError('E_ARG', `Unknown import format ${JSON.stringify(format)}.`, { hint: `Use one of ${IMPORT_FORMATS.join(', ')}.` });
  }
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * Which of import's JSON inputs that are no recording a parsed document is: a tapedeck JSON
 * export (`header` and `records`) or a DSPy-style cache.json (`entries`, no `records`); undefined
 * for anything else.
 *
 * @example
 * jsonInputKind({ header: {}, records: [] }) // 'export'
 */
export function jsonInputKind(parsed: unknown): 'export' | 'cache' | undefined {
  if (!isPlainObject(parsed)) return undefined;
  if (isPlainObject(parsed.entries) && !('records' in parsed)) return 'cache';
  if (isPlainObject(parsed.header) && Array.isArray(parsed.records)) return 'export';
  return undefined;
}
