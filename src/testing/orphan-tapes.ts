/**
 * Tapes no test opened in a run. With a tape per test (the default naming), a deleted or renamed
 * test leaves its tape behind: no test opens it again, so no summary read it and its recordings
 * were never counted unused, never pruned, and stayed committed for good. A test file every test
 * of which ran tells whose its default tape folder is: a tape there that no test of the run
 * opened is a stale candidate, reported as unused and removed by the documented prune.
 */
import { existsSync, readdirSync, unlinkSync } from 'node:fs';
import { basename, dirname, extname, join, resolve } from 'node:path';
import { readTape, withTapeLock } from '../store/tape-file.ts';
import { namesakes, SCRIPT_EXTS, tapeStem } from './names.ts';
import { tapesUnder } from '../store/tape-files.ts';
import { sessionRemain } from '../realtime/usage-mark.ts';
import { walkSource } from './source-walk.ts';

/** A tape no test of the run opened, in the tape folder of a test file that ran whole. */
export interface OrphanCandidate {
  tape: string;
  /**
   * The test files named like that folder that exist and did not run whole (`chat.test.js`,
   * for `__tapes__/chat.test/` of `chat.test.ts`): such files shared that folder before each got
   * one of its own (see tapeStem in ./names.ts), so the tape may be theirs. Empty when none.
   */
  unrun: string[];
}

/**
 * The tapes in the tape folders of `testFiles` (`folderOf`, default `__tapes__/<file name>/`
 * beside each; undefined for a file with no folder of its own) that no test opened: `opened`
 * holds the tapes the run's tests used. Pass only test files every test of which ran: a test
 * filtered out or skipped leaves its tape unopened too. Each says which other test files of its
 * folder's name did not run whole ({@link OrphanCandidate}); {@link orphanRecordCount} says
 * whether it is stale.
 *
 * @example
 * orphanTapes(['/p/test/chat.test.ts'], new Set(['/p/test/__tapes__/chat.test/chat/says-hello.tape']))
 * // [{ tape: '/p/test/__tapes__/chat.test/chat/a-deleted-test.tape', unrun: [] }]
 */
export function orphanTapes(testFiles: readonly string[], opened: ReadonlySet<string>, folderOf: (file: string) => string | undefined = defaultTapeFolder): OrphanCandidate[] {
  const used = new Set([...opened].map((p) => resolve(p)));
  const complete = new Set(testFiles.map((f) => resolve(f)));
  const out = new Map<string, OrphanCandidate>();
  for (const file of complete) {
    const dir = folderOf(file);
    if (dir === undefined || !existsSync(dir)) continue;
    // The folder named after the file without its extension is also that of its namesakes'
    // tapes recorded before they got folders of their own (`chat.test.js/`).
    const unrun = basename(dir) === basename(file, extname(file)) ? namesakes(file).filter((other) => !complete.has(other)) : [];
    for (const tape of tapesUnder(dir, 'skip')) {
      // A companion tape (`<tape>.cache.tape`, `<tape>.mcp.tape`) is opened by its own report:
      // a test that stopped calling tape.cache() or tape.mcp() opens its test tape alone.
      if (used.has(tape)) continue;
      const seen = out.get(tape);
      out.set(tape, { tape, unrun: [...new Set([...(seen?.unrun ?? []), ...unrun])] });
    }
  }
  return [...out.values()].sort((a, b) => (a.tape < b.tape ? -1 : a.tape > b.tape ? 1 : 0));
}

/** A tape per test file (`per: 'file'`) and its companions: `<file name>(.cache|.mcp)?.tape`. */
const PER_FILE_TAPE = /^(.+?)(?:\.cache|\.mcp)?\.tape$/;

/**
 * The tapes no test opened in the default tape folders (`__tapes__/<file name>/`) under `roots`,
 * and the default tapes per file (`__tapes__/<file name>.tape`, with its `.cache.tape` and
 * `.mcp.tape`), whose test file no longer exists (no `<file name>` nor `<file name>.<ext>` beside
 * the `__tapes__` folder): a moved, renamed or deleted test file's, which no test can open again.
 * Only for a run of every test file of the project (a run of some files says nothing of the
 * others'); {@link goneRecordCount} says whether each is stale (a tape a `name` function put in
 * `__tapes__/` is named like no test file either: its recordings tell whose it is). Dot names and
 * node_modules are passed over.
 *
 * @example
 * goneFileTapes(['/p'], new Set()) // [{ tape: '/p/test/__tapes__/chat.test/says-hello.tape', unrun: [] }] once test/chat.test.ts moved
 * goneFileTapes(['/p'], new Set()) // [{ tape: '/p/test/__tapes__/chat.test.tape', unrun: [] }] for a tape per file, once it moved
 */
export function goneFileTapes(roots: readonly string[], opened: ReadonlySet<string>): OrphanCandidate[] {
  const used = new Set([...opened].map((p) => resolve(p)));
  const out = new Set<string>();
  walkSource([...new Set(roots.map((r) => resolve(r)))], (dir, entries) => {
    const subs: string[] = [];
    for (const e of entries) {
      if (!e.isDirectory()) continue;
      const sub = join(dir, e.name);
      if (e.name !== '__tapes__') {
        subs.push(sub);
        continue;
      }
      let folders;
      try {
        folders = readdirSync(sub, { withFileTypes: true });
      } catch {
        continue;
      }
      for (const f of folders) {
        if (f.name.startsWith('.')) continue;
        // A folder of tapes per test (`chat.test/`), or a tape per file (`chat.test.tape`, with
        // its `chat.test.cache.tape` and `chat.test.mcp.tape`): both are named after their file.
        const stem = f.isDirectory() ? f.name : f.isFile() ? PER_FILE_TAPE.exec(f.name)?.[1] : undefined;
        if (stem === undefined) continue;
        const owner = join(dir, stem);
        if (existsSync(owner) || SCRIPT_EXTS.some((ext) => existsSync(owner + ext))) continue;
        for (const tape of f.isDirectory() ? tapesUnder(join(sub, f.name), 'skip') : [join(sub, f.name)]) {
          if (!used.has(tape)) out.add(tape);
        }
      }
    }
    return subs;
  });
  return [...out].sort().map((tape) => ({ tape, unrun: [] }));
}

/**
 * The recordings of a tape of a gone test file's folder (see {@link goneFileTapes}) that a prune
 * may remove: all of them when each names its test and every test file they name is gone from
 * every root, else none (a recording that names no test, or a test of a file that exists, may
 * still be asked for: a `name` function can put any test's tape in such a folder).
 *
 * @example
 * await goneRecordCount('/p/test/__tapes__/chat.test/says-hello.tape', ['/p']) // 1 when its one recording names 'test/chat.test.ts > says hello', gone
 */
export async function goneRecordCount(tape: string, roots: readonly string[]): Promise<number> {
  let values: unknown[];
  try {
    values = (await readTape(tape)).records.map((r) => r.value).filter((v) => !sessionRemain(v));
  } catch {
    return 0; // not ours to judge
  }
  for (const v of values) {
    const owner = typeof v === 'object' && v !== null ? (v as { test?: unknown }).test : undefined;
    const sep = typeof owner === 'string' ? owner.indexOf(' > ') : -1;
    if (sep < 0) return 0;
    if (roots.some((root) => existsSync(resolve(root, (owner as string).slice(0, sep))))) return 0;
  }
  return values.length;
}

/**
 * A test file's tape folder under the default naming: `__tapes__/<file name>/` beside it, the
 * file name without its extension unless a test file beside it differs from it only by an
 * extension that comes first (then the whole name: see tapeStem in ./names.ts).
 *
 * @example
 * defaultTapeFolder('/p/test/chat.test.ts') // '/p/test/__tapes__/chat.test'
 */
export const defaultTapeFolder = (file: string): string => join(dirname(file), '__tapes__', tapeStem(file));

/**
 * The recordings of a tape no test opened that a prune may remove: all of them (as
 * {@link recordCount} counts them), or none when the tape may belong to a test file that exists
 * and did not run whole (`testFiles` are those that did; `roots`: the project roots the records'
 * test names are relative to):
 *
 * - a recording names a test of such a file (wherever the tape is);
 * - the tape is in a folder such a file shared (`unrun`, see {@link OrphanCandidate}) and a
 *   recording names no test of a file that ran whole or is gone (a tape recorded before
 *   recordings named their test, or by a namesake): it may be that file's.
 *
 * @example
 * await orphanRecordCount({ tape: '/p/test/__tapes__/chat.test/old.tape', unrun: [] }, ['/p/test/chat.test.ts'], ['/p'])
 * // 0 when a recording names 'test/chat.test.js > old' and /p/test/chat.test.js exists
 */
export async function orphanRecordCount(candidate: OrphanCandidate, testFiles: readonly string[], roots: readonly string[]): Promise<number> {
  let values: unknown[];
  try {
    values = (await readTape(candidate.tape)).records.map((r) => r.value).filter((v) => !sessionRemain(v));
  } catch {
    return 0; // not ours to judge
  }
  const complete = new Set(testFiles.map((f) => resolve(f)));
  for (const v of values) {
    const owner = typeof v === 'object' && v !== null ? (v as { test?: unknown }).test : undefined;
    const sep = typeof owner === 'string' ? owner.indexOf(' > ') : -1;
    if (sep < 0) {
      if (candidate.unrun.length > 0) return 0;
      continue;
    }
    const places = roots.map((root) => resolve(root, (owner as string).slice(0, sep)));
    if (places.some((f) => !complete.has(f) && existsSync(f))) return 0;
    if (candidate.unrun.length > 0 && !places.some((f) => complete.has(f) || !existsSync(f))) return 0;
  }
  return values.length;
}

/**
 * How many recordings a tape holds (0 when it cannot be read: such a tape is not ours to judge).
 * A realtime session is one recording, as the run summary counts it elsewhere
 * (./run-report.ts): its head, not also its parts and audio (src/realtime/usage-mark.ts).
 *
 * @example
 * await recordCount('/p/test/__tapes__/voice.test/a-deleted-test.tape') // 1 for one session of 3 parts and its audio
 */
export async function recordCount(tape: string): Promise<number> {
  try {
    return (await readTape(tape)).records.filter((r) => !sessionRemain(r.value)).length;
  } catch {
    return 0;
  }
}

/**
 * Removes a tape no test opened, under its lock, unless a writer added to it since it was
 * counted by {@link recordCount} (then it is left as it is). Returns how many recordings went
 * with it.
 *
 * @example
 * await removeOrphanTape('/p/test/__tapes__/chat.test/chat/a-deleted-test.tape', 2) // 2
 */
export async function removeOrphanTape(tape: string, counted: number): Promise<number> {
  return withTapeLock(tape, async () => {
    const n = await recordCount(tape);
    if (n !== counted) return 0;
    unlinkSync(tape);
    return n;
  });
}
