/**
 * Tape paths for tests: derived from the test file and the test's name, stable across runs and
 * machines, readable in a diff, and safe on every file system (Windows included); and, for tests
 * on a shared Redis store, the per-test namespace made from that same name.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { basename, dirname, extname, isAbsolute, join, relative, resolve } from 'node:path';
import { TapedeckError } from '../errors.ts';
import { checkOptionsObject, describeArgument } from '../option-names.ts';

/** What a naming function gets to name a tape. */
export interface TapeNameInfo {
  /** Absolute path of the test file. */
  file: string;
  /** The test's suites and its own name, outermost first; empty for a tape per file. */
  names: readonly string[];
  /** The project root (relative paths in messages and the `dir` option are from here). */
  root: string;
}

/** Names a tape: returns its path (absolute, or relative to the project root). */
export type TapeNamer = (info: TapeNameInfo) => string;

// Longest slug kept whole; longer names are cut and get a digest suffix so they stay distinct.
const MAX_SLUG = 80;
// Names Windows reserves for devices, whatever the extension.
const RESERVED = /^(con|prn|aux|nul|com\d|lpt\d)$/i;

/**
 * A file-system-safe, readable form of one name: letters, digits, `.`, `_` and `-` kept, any
 * other run of characters becomes one `-`. Long or unreadable names keep a short digest of the
 * original, so two different names never share a tape by accident of truncation.
 *
 * @example
 * slug('streams a story (gpt-4o)') // 'streams-a-story-gpt-4o'
 * slug('uses this.tape')           // 'uses-this-tape'
 */
export function slug(name: string): string {
  if (typeof name !== 'string') throw new TapedeckError('E_ARG', `slug takes a test's name, a string; got ${describeArgument(name)}.`, { hint: "slug('streams a story (gpt-4o)')" });
  let s = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^[-.]+|[-.]+$/g, '');
  // A name ending in `.tape` ("uses this.tape") would give `uses-this.tape.tape`.
  s = s.replace(/\.(tape)$/i, '-$1');
  const digest = () => createHash('sha256').update(name).digest('hex').slice(0, 8);
  if (s === '' || RESERVED.test(s)) return `${s ? `${s}-` : 'test-'}${digest()}`;
  if (s.length > MAX_SLUG) s = `${s.slice(0, MAX_SLUG - 9).replace(/[-.]+$/, '')}-${digest()}`;
  return s;
}

/**
 * The extensions of the test files that can sit beside one another with one name (`chat.test.ts`
 * and `chat.test.js`), in the order that decides which keeps the plain tape folder: TypeScript
 * before JavaScript (a `.js` beside a `.ts` of the same name is most often its compiled copy, or
 * the file a migration to TypeScript replaces: the TypeScript file keeps the folder, and in a
 * migration replays what the JavaScript file recorded there), then as written here.
 */
export const SCRIPT_EXTS = ['.ts', '.tsx', '.mts', '.cts', '.js', '.jsx', '.mjs', '.cjs'] as const;

/** A file's place in SCRIPT_EXTS (another extension comes after them all). */
const extRank = (ext: string): number => {
  const i = (SCRIPT_EXTS as readonly string[]).indexOf(ext);
  return i < 0 ? SCRIPT_EXTS.length : i;
};

/**
 * The test files beside `file` that have its name with another script extension (`chat.test.js`
 * for `chat.test.ts`), that exist now, in SCRIPT_EXTS order. Read from the directory, never from
 * which files a run selected: every run, of any file, names the tapes alike.
 *
 * @example
 * namesakes('/p/test/chat.test.ts') // ['/p/test/chat.test.js'] when that file exists
 */
export function namesakes(file: string): string[] {
  const ext = extname(file);
  const stem = basename(file, ext);
  const dir = dirname(file);
  return SCRIPT_EXTS.filter((e) => e !== ext).map((e) => join(dir, stem + e)).filter((f) => existsSync(f));
}

/**
 * The name a test file's tapes go by: the file name without its extension (`chat.test` for
 * `chat.test.ts`), unless another test file beside it has that name with another extension
 * that comes first (TypeScript before JavaScript: `.ts`, `.tsx`, `.mts`, `.cts`, `.js`, `.jsx`,
 * `.mjs`, `.cjs`); then the whole file name (`chat.test.js`). So two files that differ only by
 * their extension never share a tape folder (whose tests of the same name would share a tape,
 * and whose prune would take the other's tapes for a deleted test's), and a file alone with its
 * name keeps the folder it always had.
 *
 * @example
 * tapeStem('/p/test/chat.test.ts') // 'chat.test'
 * tapeStem('/p/test/chat.test.js') // 'chat.test.js' when /p/test/chat.test.ts exists, else 'chat.test'
 */
export function tapeStem(file: string): string {
  const ext = extname(file);
  const first = namesakes(file).some((f) => extRank(extname(f)) < extRank(ext));
  return first ? basename(file) : basename(file, ext);
}

/**
 * The default naming: `<dir>/<test file name>/<suite>/<test>.tape`, where `dir` is `__tapes__`
 * beside the test file unless given (then it is relative to the project root, and the test
 * file's path under the root is kept so same-named files in two folders do not collide). The
 * test file's name is its {@link tapeStem}: without its extension, unless a test file beside it
 * differs from it only by an extension that comes first.
 *
 * @example
 * defaultTapePath({ file: '/p/test/chat.test.ts', names: ['chat', 'says hello'], root: '/p' })
 * // '/p/test/__tapes__/chat.test/chat/says-hello.tape'
 */
export function defaultTapePath(info: TapeNameInfo, dir?: string): string {
  checkOptionsObject(info, 'defaultTapePath', "defaultTapePath({ file: '/p/test/chat.test.ts', names: ['chat', 'says hello'], root: '/p' })", 'the test to name, { file, names, root }');
  const stem = tapeStem(info.file);
  const base = dir === undefined ? join(dirname(info.file), '__tapes__', stem) : join(resolve(info.root, dir), dirname(relativeOrBase(info.root, info.file)), stem);
  if (info.names.length === 0) return `${base}.tape`;
  const parts = info.names.map(slug);
  const path = join(base, ...parts.slice(0, -1), `${parts[parts.length - 1]}.tape`);
  tellSharedTape(path, info.names);
  return path;
}

/** The test (its names joined) each tape named in this process was first named for. */
const namedFor = new Map<string, string>();
/** The tapes whose sharing was told. */
const told = new Set<string>();

/**
 * Warns when two different tests get one tape (their names differ only by characters a tape
 * name cannot hold: `says hello!` and `says hello?`): the second would be served the first
 * one's recordings, and on a Redis store share its namespace. Told, not renamed: tapes already
 * recorded under the shared name would be lost to their tests.
 */
function tellSharedTape(path: string, names: readonly string[]): void {
  const test = names.join(' > ');
  const first = namedFor.get(path);
  if (first === undefined) {
    namedFor.set(path, test);
    return;
  }
  // Once per tape: the same tests asked again (retries) are no news.
  if (first === test || told.has(path) || typeof process === 'undefined' || !process.emitWarning) return;
  told.add(path);
  process.emitWarning(
    `Tests "${first}" and "${test}" share one tape, ${path} (their names differ only by characters a tape name cannot hold), and on a Redis store one namespace: each is served the other's recordings. Rename one of them so their names differ in letters or digits, then record it again.`,
    { code: 'TAPEDECK_TAPE_NAME' },
  );
}

function relativeOrBase(root: string, file: string): string {
  const r = relative(root, file);
  // A test file outside the root (a linked package): keep its name only.
  return r.startsWith('..') || isAbsolute(r) ? basename(file) : r;
}

// Longest namespace a Redis store takes (src/store/backends/redis.ts).
const MAX_NAMESPACE = 200;

/**
 * The Redis namespace of a test: the base namespace, `/`, and the test's tape path relative to
 * the project root without `.tape`. The same per-test name as the tape, so two tests never
 * share recordings by accident, and `tapedeck pull` of a test's namespace into that path gives
 * the tape the test would have written. Characters a namespace cannot hold become `-`; a name
 * too long for a namespace is cut and gets a digest of the whole, so it stays distinct.
 *
 * @example
 * testNamespace('my-app', '/p/test/__tapes__/chat.test/chat/says-hello.tape', '/p')
 * // 'my-app/test/__tapes__/chat.test/chat/says-hello'
 */
export function testNamespace(base: string, tape: string, root: string): string {
  const rel = relative(root, tape);
  // A tape outside the root keeps its name and a digest of where it is.
  const inside = !(rel.startsWith('..') || isAbsolute(rel));
  let name = (inside ? rel : `${createHash('sha256').update(resolve(tape)).digest('hex').slice(0, 8)}/${basename(tape)}`)
    .replace(/\\/g, '/')
    .replace(/\.tape$/, '')
    .replace(/[^A-Za-z0-9._/-]+/g, '-')
    .split('/')
    .filter((part) => part !== '' && part !== '.' && part !== '..')
    .join('/');
  if (name === '') name = 'test';
  const full = `${base}/${name}`;
  if (full.length <= MAX_NAMESPACE) return full;
  const digest = createHash('sha256').update(full).digest('hex').slice(0, 8);
  // Keep the end (the test's own name is the most telling part) after the base.
  const room = MAX_NAMESPACE - base.length - 1 - 9;
  if (room < 8) throw new TapedeckError('E_ARG', `The base Redis namespace ${JSON.stringify(base)} is too long to name tests under it.`, { hint: `Use a base namespace of at most ${MAX_NAMESPACE - 20} characters.` });
  return `${base}/${digest}-${name.slice(name.length - room).replace(/^[-./]+/, '')}`;
}
