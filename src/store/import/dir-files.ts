/**
 * The recording files of other tools inside a directory given to `tapedeck import`, which reads
 * them one file at a time. The recorders' own layouts put them a level or two down: Polly.js's
 * `recordingsDir` holds `<recording name>_<hash>/recording.har`, pytest-recording's
 * `cassettes/<module>/<test>.yaml`. Naming the ones found turns "holds no recordings" (which
 * reads as "the recording is empty") into the command to run.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import { detectFormat, formatByName, type ImportFormat } from './read.ts';
import { tapeFiles } from './talkback.ts';

/** Names of files import reads one at a time. */
const RECORDING_FILE = /\.(?:har|ya?ml)$/i;

/** How deep the search goes: the recorders above nest a file two directories down at most. */
const DEPTH = 3;

/**
 * Up to `limit` recording files (`*.har`, `*.yaml`, `*.yml`) at most three levels below `dir`, in
 * path order, and how many there are in all. Unreadable subdirectories are passed over.
 *
 * @example
 * recordingFilesBelow('recordings')
 * // { files: ['recordings/llm-app_660822298/recording.har'], total: 1 }
 */
export function recordingFilesBelow(dir: string, limit = 3): { files: string[]; total: number } {
  const files: string[] = [];
  let total = 0;
  const walk = (at: string, depth: number): void => {
    let names;
    try {
      names = readdirSync(at, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    } catch {
      return;
    }
    for (const d of names) {
      const path = join(at, d.name);
      if (d.isDirectory() && depth < DEPTH) walk(path, depth + 1);
      else if (d.isFile() && RECORDING_FILE.test(d.name)) {
        total++;
        if (files.length < limit) files.push(path);
      }
    }
  };
  walk(dir, 1);
  return { files, total };
}

/**
 * The sentence and hint of an import given a directory that holds recording files, or undefined
 * when it holds none: the files found and the command for the first.
 *
 * @example
 * recordingFilesMessage('recordings', 'tapes/app.tape')?.what
 * // 'recordings is a directory of 1 recording file (recordings/llm-app_660822298/recording.har), and import reads one file at a time'
 */
export function recordingFilesMessage(dir: string, tape: string): { found: string; what: string; hint: string } | undefined {
  const { files, total } = recordingFilesBelow(dir);
  if (total === 0) return undefined;
  const more = total > files.length ? `, and ${total - files.length} more` : '';
  const found = `${total} recording file${total === 1 ? '' : 's'} (${files.join(', ')}${more})`;
  return {
    found,
    what: `${dir} is a directory of ${found}, and import reads one file at a time`,
    hint: `Import each file into its own tape: tapedeck import ${files[0]} ${tape} (docs/migrate.md has a loop for Polly.js and VCR.py directories); a directory imports as talkback's tape directory (--from talkback) or JSON recordings.`,
  };
}

/** Largest `*.json` file read to tell its format (a recording larger is left to the directory import). */
const PEEK_BYTES = 16 * 1024 * 1024;

/**
 * The sentence and hint of an import given a directory whose own recording files (`*.json`,
 * `*.har`, `*.yaml`, `*.yml`) are all recordings of a format import reads one file at a time
 * (nock.back's fixtures, a JSON array of nock definitions per test, HARs saved as .json, VCR.py
 * cassettes in YAML and JSON side by side), or undefined when a `*.json` file is not (a
 * directory of JSON recordings, which the directory import reads). Only the directory's own
 * files are looked at, as the directory import takes only those. Every file is counted and the
 * loop in the hint takes every extension found: a hint that named only the `*.json` files
 * would leave the others out.
 *
 * @example
 * recordingJsonFilesMessage('fixtures/nock', 'tapes/app.tape')?.what
 * // 'fixtures/nock is a directory of 2 nock recordings (fixtures/nock/chat.json, fixtures/nock/tools.json), and import reads one file at a time'
 */
export function recordingJsonFilesMessage(dir: string, tape: string): { what: string; hint: string } | undefined {
  let names: string[];
  try {
    names = readdirSync(dir, { withFileTypes: true })
      .filter((d) => d.isFile() && (d.name.endsWith('.json') || RECORDING_FILE.test(d.name)))
      .map((d) => d.name)
      .sort();
  } catch {
    return undefined;
  }
  if (!names.some((n) => n.endsWith('.json'))) return undefined;
  const formats = new Set<ImportFormat>();
  const byHand: string[] = [];
  for (const name of names) {
    const file = join(dir, name);
    let format: ImportFormat | undefined = formatByName(name);
    try {
      if (format === undefined && statSync(file).size > PEEK_BYTES) return undefined;
      const detected = format === undefined ? detectFormat(file, readFileSync(file, 'utf8')) : undefined;
      format ??= detected?.format;
      if (format === 'fixtures' && writtenByHand(detected?.parsed)) byHand.push(file);
    } catch {
      return undefined; // unreadable, or no JSON: the directory import names the file and why
    }
    if (format === undefined) return undefined;
    formats.add(format);
  }
  // Hand-written recordings (docs/hand-written.md) look like mock-server fixtures, but their
  // streams are for tapedeck add: named here, so the hint does not send each into an import
  // that refuses it.
  if (byHand.length > 0) {
    const shown = byHand.slice(0, 3).join(', ') + (byHand.length > 3 ? `, and ${byHand.length - 3} more` : '');
    return {
      what: `${dir} holds recordings written by hand (${shown}: streams with "events"), which import does not read`,
      hint: `Add the files written by hand to a tape with tapedeck add ${tape} ${byHand.join(' ')} (docs/hand-written.md); import reads another format one file at a time (docs/migrate.md).`,
    };
  }
  const files = names.slice(0, 3).map((n) => join(dir, n));
  const more = names.length > files.length ? `, and ${names.length - files.length} more` : '';
  const one = formats.size === 1 ? [...formats][0]! : undefined;
  const kind = one === undefined ? 'recordings' : `${FORMAT_NOUNS[one]}${names.length === 1 ? '' : 's'}`;
  const from = one === undefined ? '' : ` --from ${one}`;
  const globs = [...new Set(names.map((n) => `*${extname(n)}`))].map((g) => join(dir, g)).join(' ');
  return {
    what: `${dir} is a directory of ${names.length} ${names.length === 1 ? kind.replace(/s$/, '') : kind} (${files.join(', ')}${more}), and import reads one file at a time`,
    hint: `Import each file into its own tape: tapedeck import ${files[0]} ${tape}${from}, or all of them: for f in ${globs}; do tapedeck import "$f" "tapes/$(basename "\${f%.*}").tape"${from}; done (docs/migrate.md).`,
  };
}

/**
 * The sentence and hint of an import given a directory of talkback tapes (`*.json5`, in it or
 * below) that has `*.json` files of its own too, none of them a JSON recording (a stray
 * package.json): such a directory is read as JSON recordings, whose error would name only the
 * `*.json` files. The caller says when none imported. Undefined when the directory holds no
 * talkback tapes or no `*.json` file.
 *
 * @example
 * talkbackBesideJsonMessage('tapes', 'tapes.tape')?.hint
 * // 'Import the talkback tapes (the *.json files are left out): tapedeck import tapes tapes.tape --from talkback; ...'
 */
export function talkbackBesideJsonMessage(dir: string, tape: string): { what: string; hint: string } | undefined {
  let json: string[];
  let tapes: string[];
  try {
    json = readdirSync(dir, { withFileTypes: true })
      .filter((d) => d.isFile() && d.name.endsWith('.json'))
      .map((d) => d.name)
      .sort();
    tapes = json.length === 0 ? [] : tapeFiles(dir);
  } catch {
    return undefined;
  }
  if (tapes.length === 0) return undefined;
  const list = (xs: string[]) => `${xs.slice(0, 3).join(', ')}${xs.length > 3 ? `, and ${xs.length - 3} more` : ''}`;
  return {
    what: `${dir} holds ${tapes.length} talkback tape${tapes.length === 1 ? '' : 's'} (*.json5: ${list(tapes)}) and ${json.length} *.json file${json.length === 1 ? '' : 's'} (${list(json)}) that ${json.length === 1 ? 'is' : 'are'} no JSON recording${json.length === 1 ? '' : 's'}: a *.json file makes it a directory of JSON recordings, not talkback's tape directory`,
    hint: `Import the talkback tapes (the *.json files are left out): tapedeck import ${dir} ${tape} --from talkback; or, if the *.json files are the JSON recordings to import, move the *.json5 files out of the directory.`,
  };
}

/** Each recording format as a count of its files names it. */
const FORMAT_NOUNS: Record<ImportFormat, string> = { har: 'HAR', vcr: 'VCR.py cassette', nock: 'nock recording', fixtures: 'mock-server fixture file', talkback: 'talkback tape' };

/** Whether a parsed fixtures file holds a stream written by hand (`events`, `gapMs`, `cut` in a response). */
function writtenByHand(doc: unknown): boolean {
  const list = Array.isArray(doc) ? doc : doc !== null && typeof doc === 'object' ? (doc as { fixtures?: unknown }).fixtures : undefined;
  if (!Array.isArray(list)) return false;
  return list.some((x) => {
    const r = x !== null && typeof x === 'object' ? (x as { response?: unknown }).response : undefined;
    return r !== null && typeof r === 'object' && ['events', 'gapMs', 'cut'].some((k) => k in r);
  });
}
