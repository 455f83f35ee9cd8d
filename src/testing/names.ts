/**
 * Tape paths for tests: derived from the test file and the test's name, stable across runs and
 * machines, readable in a diff, and safe on every file system (Windows included).
 */
import { createHash } from 'node:crypto';
import { basename, dirname, extname, isAbsolute, join, relative, resolve } from 'node:path';

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
 */
export function slug(name: string): string {
  let s = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^[-.]+|[-.]+$/g, '');
  const digest = () => createHash('sha256').update(name).digest('hex').slice(0, 8);
  if (s === '' || RESERVED.test(s)) return `${s ? `${s}-` : 'test-'}${digest()}`;
  if (s.length > MAX_SLUG) s = `${s.slice(0, MAX_SLUG - 9).replace(/[-.]+$/, '')}-${digest()}`;
  return s;
}

/**
 * The default naming: `<dir>/<test file name>/<suite>/<test>.tape`, where `dir` is `__tapes__`
 * beside the test file unless given (then it is relative to the project root, and the test
 * file's path under the root is kept so same-named files in two folders do not collide).
 *
 * @example
 * defaultTapePath({ file: '/p/test/chat.test.ts', names: ['chat', 'says hello'], root: '/p' })
 * // '/p/test/__tapes__/chat.test/chat/says-hello.tape'
 */
export function defaultTapePath(info: TapeNameInfo, dir?: string): string {
  const file = basename(info.file, extname(info.file));
  const base = dir === undefined ? join(dirname(info.file), '__tapes__', file) : join(resolve(info.root, dir), withoutExt(relativeOrBase(info.root, info.file)));
  if (info.names.length === 0) return `${base}.tape`;
  const parts = info.names.map(slug);
  return join(base, ...parts.slice(0, -1), `${parts[parts.length - 1]}.tape`);
}

function withoutExt(p: string): string {
  return p.slice(0, p.length - extname(p).length);
}

function relativeOrBase(root: string, file: string): string {
  const r = relative(root, file);
  // A test file outside the root (a linked package): keep its name only.
  return r.startsWith('..') || isAbsolute(r) ? basename(file) : r;
}
