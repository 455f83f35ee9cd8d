/**
 * Where the recordings of a test whose test file was moved or renamed are. Tapes are named after
 * their test file, so a moved file looks for them at a new place and finds none; telling the
 * user "this test was never recorded" would send them to record it live again (new answers, a
 * key, a cost) while its recordings sit at the old place. Each recording names its test
 * (`<file> > <name>`): a tape of the same name elsewhere in the project whose recordings name
 * this test's name in a test file that no longer exists is where they went.
 */
import { existsSync, readdirSync } from 'node:fs';
import { basename, dirname, extname, join, relative, resolve, sep } from 'node:path';
import { readTape } from '../store/tape-file.ts';
import { shellQuote } from './shell-quote.ts';
import { walkSource } from './source-walk.ts';

/** A tape's records, or undefined for one that cannot be read whole (a damaged tape: not one to point at). */
async function intactRecords(file: string): Promise<{ value: unknown }[] | undefined> {
  try {
    return (await readTape(file)).records;
  } catch {
    return undefined;
  }
}

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

/** The command, run from `root`, that moves `from` (a file or a folder) to `to`, making `to`'s folder first. */
const moveTo = (root: string, from: string, to: string): string => `mkdir -p ${shellQuote(rel(root, dirname(to)))} && mv ${shellQuote(rel(root, from))} ${shellQuote(rel(root, to))}`;

/** The files under `dir`, each relative to it (`/` separators), folders walked. */
function filesUnder(dir: string, below = ''): string[] {
  const out: string[] = [];
  for (const e of readdirSync(join(dir, below), { withFileTypes: true })) {
    const name = below === '' ? e.name : `${below}/${e.name}`;
    if (e.isDirectory()) out.push(...filesUnder(dir, name));
    else out.push(name);
  }
  return out;
}

/**
 * The command that moves the files of the folder `from` into the folder `to`, which exists: a
 * `mv` of the folder would put it inside (`to/<name of from>/`). One `mkdir -p && mv` per
 * folder of files; a file that is at both places is not moved (mv would overwrite the one
 * there), and a comment at the end of the command names it.
 */
function mergeCommand(root: string, from: string, to: string): string {
  const byFolder = new Map<string, string[]>();
  const kept: string[] = [];
  for (const f of filesUnder(from).sort()) {
    if (existsSync(join(to, f))) {
      kept.push(f);
      continue;
    }
    const folder = dirname(f) === '.' ? '' : dirname(f);
    byFolder.set(folder, [...(byFolder.get(folder) ?? []), f]);
  }
  const moves = [...byFolder].map(([folder, files]) => {
    const into = rel(root, join(to, folder));
    return `mkdir -p ${shellQuote(into)} && mv ${files.map((f) => shellQuote(rel(root, join(from, f)))).join(' ')} ${shellQuote(`${into}/`)}`;
  });
  const note = kept.length > 0 ? ` # not moved, ${rel(root, to)} has a file of that name already (compare them; mv would overwrite it): ${kept.join(', ')}` : '';
  return `${moves.join(' && ')}${note}`;
}

/**
 * The command that moves `from` to where the test looks now (`to`): the old file's whole tape
 * folder (`__tapes__/chat.test/`, every test of that file) when `to` has the same place below
 * a folder of that name (moved as a folder when that does not exist yet, file by file into it
 * when it does), else the tape alone.
 */
function moveCommand(root: string, from: string, to: string, oldFile: string): string {
  const stems = new Set([basename(oldFile), basename(oldFile, extname(oldFile))]);
  for (let dir = dirname(from); dir.startsWith(root) && dir !== root; dir = dirname(dir)) {
    if (!stems.has(basename(dir))) continue;
    const rest = relative(dir, from);
    if (!to.endsWith(`${sep}${rest}`)) break;
    const target = to.slice(0, to.length - rest.length - 1);
    if (existsSync(target)) return mergeCommand(root, dir, target);
    return moveTo(root, dir, target);
  }
  return moveTo(root, from, to);
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
    const records = await intactRecords(candidate);
    if (records === undefined) continue;
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

/** A tape no longer named after the test that holds the request a test missed (see {@link tapeWithRequest}). */
export interface SameRequestTape {
  /** The tape (absolute). */
  tape: string;
  /** The test its recording of the request names, if it names one. */
  test?: string;
  /** A shell command, run from the root, that moves it where the test looks now. */
  move: string;
}

/** At most this many tapes are read for a miss: a folder of a thousand tests must not stall it. */
const MAX_LOOKED_AT = 64;

/**
 * For a test whose tape `tape` does not exist, a tape that holds a recording of the request it
 * missed (`key`, as the miss names it): one beside it (the tape of a test since renamed), or
 * one of the same file name in another folder (a test moved to another test file, or suite).
 * It may as well be another test's that makes the same request: the miss says "if". Companion
 * tapes (`.mcp.tape`, `.cache.tape`) hold no HTTP recordings and are passed over. Undefined
 * when none of the tapes looked at holds it.
 *
 * @example
 * await tapeWithRequest('/p/test/__tapes__/chat.test/greets-the-user.tape', 'a1b2…', '/p')
 * // { tape: '/p/test/__tapes__/chat.test/says-hello.tape', test: 'test/chat.test.ts > says hello',
 * //   move: 'mkdir -p test/__tapes__/chat.test && mv test/__tapes__/chat.test/says-hello.tape test/__tapes__/chat.test/greets-the-user.tape' }
 */
export async function tapeWithRequest(tape: string, key: string, root: string): Promise<SameRequestTape | undefined> {
  const to = resolve(root, tape);
  let beside: string[] = [];
  try {
    beside = readdirSync(dirname(to)).filter((n) => n.endsWith('.tape') && !/\.(mcp|cache)\.tape$/.test(n)).map((n) => join(dirname(to), n));
  } catch {
    // no folder yet: only tapes elsewhere
  }
  const elsewhere = tapeIndex(resolve(root)).get(basename(to)) ?? [];
  const candidates = [...new Set([...beside.sort(), ...[...elsewhere].sort()])].filter((c) => c !== to && existsSync(c)).slice(0, MAX_LOOKED_AT);
  for (const candidate of candidates) {
    const records = await intactRecords(candidate);
    if (records === undefined) continue;
    for (const r of records) {
      const v = r.value as { kind?: unknown; key?: unknown; test?: unknown } | null;
      if (v?.kind !== 'http' || v.key !== key) continue;
      return { tape: candidate, ...(typeof v.test === 'string' ? { test: v.test } : {}), move: moveTo(root, candidate, to) };
    }
  }
  return undefined;
}
