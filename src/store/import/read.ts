/**
 * Which recording format a file is, and its exchanges: `--from` when given, else the file name
 * (`.har`, `.yaml` / `.yml`, `.json5`), else the shape of its JSON (`log.entries`: HAR; an array
 * of `{ scope, method }`: nock; MockServer expectations or `{ fixtures }`: fixtures;
 * `{ interactions }`: VCR.py's JSON serializer; `{ meta, req }`, in JSON5 or JSON: a talkback
 * tape). A directory of talkback tapes is told by its files (talkback.ts).
 */
import { TapedeckError } from '../../errors.ts';
import { badFile, isObject, type ReadResult } from './exchange.ts';
import { isFixtures, readFixtures } from './fixtures.ts';
import { parseJsonFile, readHar } from './har.ts';
import { parseJson5 } from './json5.ts';
import { isNockCode, isNockDefinitions, nockCodeError, readNock } from './nock.ts';
import { isTalkbackTape, readTalkbackTape } from './talkback.ts';
import { readVcr } from './vcr.ts';

/** The formats `tapedeck import --from` names. */
export const IMPORT_FORMATS = ['har', 'vcr', 'nock', 'fixtures', 'talkback'] as const;
export type ImportFormat = (typeof IMPORT_FORMATS)[number];

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
  if (byName) return { format: byName };
  refuseZip(file, text);
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

/** What `tapedeck import` reads, for hints. */
export const READS = `tapedeck import reads HAR, VCR.py cassettes, nock recordings, mock-server fixtures and talkback tapes (a tape file or the directory talkback records to) (--from ${IMPORT_FORMATS.join('|')} when not detected), a tapedeck JSON export, a DSPy-style cache.json, or a directory of JSON recordings.`;

/**
 * Reads a recording file of a given format into exchanges.
 *
 * @example
 * const read = readRecordingFile('network.har', readFileSync('network.har', 'utf8'), 'har')
 */
export function readRecordingFile(file: string, text: string, format: ImportFormat, parsed?: unknown): ReadResult {
  refuseZip(file, text);
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
