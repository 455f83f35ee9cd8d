/**
 * Which recording format a file is, and its exchanges: `--from` when given, else the file name
 * (`.har`, `.yaml` / `.yml`), else the shape of its JSON (`log.entries`: HAR; an array of
 * `{ scope, method }`: nock; MockServer expectations or `{ fixtures }`: fixtures;
 * `{ interactions }`: VCR.py's JSON serializer).
 */
import { TapedeckError } from '../../errors.ts';
import { isObject, type ReadResult } from './exchange.ts';
import { isFixtures, readFixtures } from './fixtures.ts';
import { readHar } from './har.ts';
import { isNockDefinitions, readNock } from './nock.ts';
import { readVcr } from './vcr.ts';

/** The formats `tapedeck import --from` names. */
export const IMPORT_FORMATS = ['har', 'vcr', 'nock', 'fixtures'] as const;
export type ImportFormat = (typeof IMPORT_FORMATS)[number];

/** The format a recording file's name says (`.har`, `.yaml` / `.yml`), if any. */
export function formatByName(file: string): ImportFormat | undefined {
  const name = file.toLowerCase();
  if (name.endsWith('.har')) return 'har';
  if (name.endsWith('.yaml') || name.endsWith('.yml')) return 'vcr';
  return undefined;
}

/**
 * The format of a recording file by its name and text, or undefined when it is none of
 * {@link IMPORT_FORMATS} (the caller may know other formats). `parsed` is the JSON value when
 * the text was parsed on the way.
 */
export function detectFormat(file: string, text: string): { format: ImportFormat; parsed?: unknown } | undefined {
  const byName = formatByName(file);
  if (byName) return { format: byName };
  const start = text.trimStart();
  if (/^(?:---\s*\n)?(?:interactions|version)\s*:/.test(start)) return { format: 'vcr' };
  if (start[0] !== '{' && start[0] !== '[') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (isObject(parsed) && isObject(parsed.log) && 'entries' in parsed.log) return { format: 'har', parsed };
  if (isObject(parsed) && Array.isArray(parsed.interactions)) return { format: 'vcr', parsed };
  if (isNockDefinitions(parsed)) return { format: 'nock', parsed };
  if (isFixtures(parsed)) return { format: 'fixtures', parsed };
  return undefined;
}

/**
 * Reads a recording file of a given format into exchanges.
 *
 * @example
 * const read = readRecordingFile('network.har', readFileSync('network.har', 'utf8'), 'har')
 */
export function readRecordingFile(file: string, text: string, format: ImportFormat, parsed?: unknown): ReadResult {
  switch (format) {
    case 'har':
      return readHar(text, file, { parsed });
    case 'vcr':
      return readVcr(text, file);
    case 'nock':
      return readNock(text, file, { parsed });
    case 'fixtures':
      return readFixtures(text, file, { parsed });
    default:
      throw new TapedeckError('E_ARG', `Unknown import format ${JSON.stringify(format)}.`, { hint: `Use one of ${IMPORT_FORMATS.join(', ')}.` });
  }
}
