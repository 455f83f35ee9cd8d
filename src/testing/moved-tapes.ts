/**
 * Where the recordings of a test whose test file was moved or renamed are. Tapes are named after
 * their test file, so a moved file looks for them at a new place and finds none; telling the
 * user "this test was never recorded" would send them to record it live again (new answers, a
 * key, a cost) while its recordings sit at the old place. Each recording names its test
 * (`<file> > <name>`): a tape of the same name elsewhere in the project whose recordings name
 * this test's name in a test file that no longer exists is where they went.
 */
import { existsSync } from 'node:fs';
import { basename, dirname, extname, join, relative, resolve, sep } from 'node:path';
import { readTape } from '../store/tape-file.ts';
import { shellQuote } from './shell-quote.ts';
import { walkSource } from './source-walk.ts';

/** Where a moved test's recordings are, and the command that moves them where it looks now. */
export interface MovedRecordings {
  /** The tape holding them (absolute). */
  tape: string;
  /** The test file their recordings name, which no longer exists (relative to the root, `/` separators). */
  file: string;
  /** A shell command, run from the root, that moves them (the whole tape folder of the old file when it can). */
  move: string;
}

/** Per project root: its `.tape` files by file name, read once per process. */
const tapesByName = new Map<string, Map<string, string[]>>();

/** The `.tape` files under `root` by file name (dot folders and node_modules passed over). */
function tapeIndex(root: string): Map<string, string[]> {
  let index = tapesByName.get(root);
  if (index) return index;
  const found = new Map<string, string[]>();
  walkSource([root], (dir, entries) => {
    const subs: string[] = [];
    for (const e of entries) {
      if (e.isDirectory()) subs.push(join(dir, e.name));
      else if (e.name.endsWith('.tape')) found.set(e.name, [...(found.get(e.name) ?? []), join(dir, e.name)]);
    }
    return subs;
  });
  index = found;
  tapesByName.set(root, index);
  return index;
}

/** `path` relative to `root` with `/` separators. */
const rel = (root: string, path: string): string => relative(root, path).split(sep).join('/');

/**
 * The command that moves `from` to where the test looks now (`to`): the old file's whole tape
 * folder (`__tapes__/chat.test/`, every test of that file) when `to` has the same place below
 * a folder of that name that does not exist yet, else the tape alone.
 */
function moveCommand(root: string, from: string, to: string, oldFile: string): string {
  const stems = new Set([basename(oldFile), basename(oldFile, extname(oldFile))]);
  for (let dir = dirname(from); dir.startsWith(root) && dir !== root; dir = dirname(dir)) {
    if (!stems.has(basename(dir))) continue;
    const rest = relative(dir, from);
    if (!to.endsWith(`${sep}${rest}`)) break;
    const target = to.slice(0, to.length - rest.length - 1);
    if (existsSync(target)) break;
    return `mkdir -p ${shellQuote(rel(root, dirname(target)))} && mv ${shellQuote(rel(root, dir))} ${shellQuote(rel(root, target))}`;
  }
  return `mkdir -p ${shellQuote(rel(root, dirname(to)))} && mv ${shellQuote(rel(root, from))} ${shellQuote(rel(root, to))}`;
}

/**
 * The recordings of the test `owner` (`<file> > <name>`, as its records name it) left at the
 * old place of its test file, for a tape `tape` that does not exist; undefined when no tape of
 * that file name under `root` has a recording of that test name in a test file that is gone.
 *
 * @example
 * await movedRecordings('/p/test/chat/__tapes__/chat.test/says-hello.tape', 'test/chat/chat.test.ts > says hello', '/p')
 * // { tape: '/p/test/__tapes__/chat.test/says-hello.tape', file: 'test/chat.test.ts',
 * //   move: 'mkdir -p test/chat/__tapes__ && mv test/__tapes__/chat.test test/chat/__tapes__/chat.test' }
 */
export async function movedRecordings(tape: string, owner: string, root: string): Promise<MovedRecordings | undefined> {
  const at = owner.indexOf(' > ');
  if (at < 0) return undefined;
  const [ownFile, name] = [owner.slice(0, at), owner.slice(at + 3)];
  const to = resolve(root, tape);
  for (const candidate of (tapeIndex(resolve(root)).get(basename(to)) ?? []).sort()) {
    if (candidate === to) continue;
    let records;
    try {
      records = (await readTape(candidate)).records;
    } catch {
      continue; // a damaged tape: not one to point at
    }
    for (const r of records) {
      const test = (r.value as { test?: unknown } | null)?.test;
      if (typeof test !== 'string') continue;
      const sepAt = test.indexOf(' > ');
      if (sepAt < 0 || test.slice(sepAt + 3) !== name) continue;
      const file = test.slice(0, sepAt);
      // The same test name in a test file that is still there is another test, not this one.
      if (file === ownFile || existsSync(resolve(root, file))) continue;
      return { tape: candidate, file, move: moveCommand(resolve(root), candidate, to, resolve(root, file)) };
    }
  }
  return undefined;
}
