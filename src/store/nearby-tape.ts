/**
 * A tape whose path is one typo away from a tape that does not exist: `tapes/agent.tape` when
 * `tapes/agents.tape` is there, `tape/agents.tape` when `tapes/agents.tape` is. Replaying a
 * mistyped path misses every request with "no tape at ...; re-record", and following that
 * advice records a second tape beside the one the user meant; naming the near one saves that.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { closestName } from '../edit-distance.ts';

/**
 * At most this many edits apart (a letter left out, doubled or swapped), counted on the names
 * without `.tape`: two for names of five letters or more, one for shorter ones, where two edits
 * reach unrelated names (`cut` and `cc`, `cut` and `dup`).
 */
const mostFor = (name: string): number => (name.replace(/\.tape$/, '').length >= 5 ? 2 : 1);
const stem = (name: string): string => name.replace(/\.tape$/, '');

/** The names in `dir` (none when it cannot be read). */
function namesIn(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

const isFile = (p: string): boolean => {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
};

/**
 * The path of an existing tape at most two edits from `path` in its file name, or in the name
 * of its directory when that directory does not exist; undefined when there is none (or `path`
 * exists). Only `.tape` files count.
 *
 * @example
 * nearbyTape('tapes/agent.tape') // 'tapes/agents.tape'
 */
export function nearbyTape(path: string): string | undefined {
  if (existsSync(path)) return undefined;
  const dir = dirname(path);
  const name = basename(path);
  if (existsSync(dir)) {
    const tapes = namesIn(dir).filter((n) => n.endsWith('.tape') && n !== name && isFile(join(dir, n)));
    const near = closestName(stem(name), tapes.map(stem), mostFor(name));
    return near === undefined ? undefined : join(dir, `${near}.tape`);
  }
  // The directory is mistyped: a sibling directory near its name that holds the tape.
  const parent = dirname(dir);
  const dirs = namesIn(parent).filter((n) => isFile(join(parent, n, name)));
  const near = closestName(basename(dir), dirs, mostFor(basename(dir)));
  return near === undefined ? undefined : join(parent, near, name);
}

/**
 * Where a missing tape was looked for, for "no tape at …": the absolute path, and for a relative
 * one the working directory it was taken from. Run from another directory (a monorepo root, a CI
 * job's working-directory), "no tape at test/__tapes__/app.tape; re-record" read as a tape never
 * recorded, and following it recorded a second tape in the wrong place.
 *
 * @example
 * lookedAt('test/app.tape') // '/repo/test/app.tape (taken from the working directory /repo)'
 */
export function lookedAt(path: string): string {
  return isAbsolute(path) ? path : `${resolve(path)} (taken from the working directory ${process.cwd()})`;
}

/**
 * A miss on a missing tape given as a relative path: the headline's difference (the absolute
 * path looked at) and its fix (the working directory it was taken from, and running from the
 * right one before re-recording). The working directory goes in the fix, which is never
 * clipped: a headline's difference is cut at 140 characters, and in a deep checkout (a CI
 * runner's) the directory was cut off the end of it. Undefined for an absolute path.
 *
 * @example
 * relativeTapeMiss('test/app.tape', "re-record: TAPEDECK_MODE=record")
 * // { difference: 'no tape at /repo/test/app.tape', fix: 'a relative tape path is taken from the working directory (/repo): … else re-record: TAPEDECK_MODE=record' }
 */
export function relativeTapeMiss(path: string, fix: string): { difference: string; fix: string } | undefined {
  if (isAbsolute(path)) return undefined;
  return {
    difference: `no tape at ${resolve(path)}`,
    fix: `a relative tape path is taken from the working directory (${process.cwd()}): if the tape is recorded, run from the directory its path is relative to, or give an absolute path; else ${fix}`,
  };
}
