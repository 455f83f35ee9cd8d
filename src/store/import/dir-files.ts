/**
 * The recording files of other tools inside a directory given to `tapedeck import`, which reads
 * them one file at a time. The recorders' own layouts put them a level or two down: Polly.js's
 * `recordingsDir` holds `<recording name>_<hash>/recording.har`, pytest-recording's
 * `cassettes/<module>/<test>.yaml`. Naming the ones found turns "holds no recordings" (which
 * reads as "the recording is empty") into the command to run.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

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
