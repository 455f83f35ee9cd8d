// The tape argument of the tape commands (verify, inspect, prune, export), checked before any
// read: missing is a usage error, a directory is named as one (it would fail deep in a read).
import { statSync } from 'node:fs';
import { usageError } from '../cli-errors.ts';
import { TapedeckError } from '../errors.ts';

/**
 * A tape argument: present, and not a directory; `example` is the command line that works.
 *
 * @example
 * tapeArg('verify', undefined, 'tapedeck verify recordings/app.tape') // throws E_USAGE
 */
export function tapeArg(command: string, file: string | undefined, example: string): string {
  if (!file) throw usageError(`${command} needs a tape.`, example);
  if (statSync(file, { throwIfNoEntry: false })?.isDirectory()) {
    throw new TapedeckError('E_FILE', `${file} is a directory; ${command} reads a tape file.`, { file, hint: example });
  }
  return file;
}
