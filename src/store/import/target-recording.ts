/**
 * An import's tape path that holds another tool's recording: refused, with --force or without.
 * Kept apart from ./target.ts, which the commands that write tapes without importing (export's
 * JSON import, migrate, pull) load: telling a recording's format loads every importer.
 */
import { closeSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { TapedeckError } from '../../errors.ts';
import { TAPE_MAGIC } from '../tape-codec.ts';
import { detectFormat, formatByName, FORMAT_NAMES, jsonInputKind, type ImportFormat } from './read.ts';
import { tapeBeside } from './target.ts';

/** Largest file at the tape's path read whole to say which recording it is (a larger one is named by its file name alone). */
const NAME_WHAT_BYTES = 16 * 1024 * 1024;

/**
 * Refuses (E_ARG) an import whose tape path holds a recording in a format import reads (a HAR,
 * a VCR.py cassette, a nock recording, mock-server fixtures, a talkback tape, a tapedeck JSON
 * export, a DSPy-style cache.json): `tapedeck import a.yaml b.yaml`, or a glob that matched two
 * cassettes, takes the second for the tape to write. With --force it would be replaced by the
 * tape and lost, and recordings being migrated away from were made against the live API and
 * are often irreplaceable, so --force does not replace it either. A tape (its magic bytes), a
 * path with nothing there, and a file that is none of those (--force replaces it) pass; so does
 * one that cannot be read (the write says why). `src` is the recording to import, for the
 * commands of the hint.
 *
 * @example
 * refuseNonTapeTarget('cassettes/a.yaml', 'cassettes/b.yaml') // throws E_ARG: cassettes/b.yaml is no tape (it holds a VCR.py cassette) ...
 */
export function refuseNonTapeTarget(src: string, out: string): void {
  let head: Buffer;
  let size: number;
  try {
    const st = statSync(out, { throwIfNoEntry: false });
    if (st === undefined || !st.isFile() || st.size === 0) return;
    size = st.size;
    head = Buffer.alloc(TAPE_MAGIC.length);
    const fd = openSync(out, 'r');
    try {
      readSync(fd, head, 0, head.length, 0);
    } finally {
      closeSync(fd);
    }
  } catch {
    return;
  }
  if (TAPE_MAGIC.every((b, i) => head[i] === b)) return;
  const what = recordingAt(out, size);
  if (what === undefined) return;
  const first = src === '-' ? 'tapes/app.tape' : tapeBeside(src);
  throw new TapedeckError('E_ARG', `${out} is no tape (it holds ${what}): the second argument is the tape to write, and an import never writes over a recording, with --force or without; no tape written.`, {
    file: out,
    source: src,
    hint: `An import reads one recording and writes one tape: give the tape a path of its own (tapedeck import ${src} ${first} && tapedeck import ${out} ${tapeBeside(out)}). To import several recordings, import each into its own tape (docs/migrate.md has a loop for a directory of them).`,
  });
}

/**
 * What recording the file at a tape's path holds, for messages, or undefined for none import
 * reads: by its name and text, or by its name alone when it is too large to read here.
 */
function recordingAt(out: string, size: number): string | undefined {
  const byName = formatByName(out);
  if (size > NAME_WHAT_BYTES) return byName === undefined ? undefined : FORMAT_NAMES[byName];
  let text: string;
  try {
    text = readFileSync(out, 'utf8');
  } catch {
    return undefined;
  }
  try {
    const found = detectFormat(out, text)?.format;
    if (found !== undefined) return FORMAT_NAMES[found];
  } catch {
    // Not readable as a recording (an empty, binary or broken file): maybe an export, below.
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  const kind = jsonInputKind(parsed);
  return kind === 'export' ? 'a tapedeck JSON export' : kind === 'cache' ? 'a DSPy-style cache.json' : undefined;
}
