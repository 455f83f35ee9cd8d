/**
 * Tapes no test opened in a run. With a tape per test (the default naming), a deleted or renamed
 * test leaves its tape behind: no test opens it again, so no summary read it and its recordings
 * were never counted unused, never pruned, and stayed committed for good. A test file every test
 * of which ran tells whose its default tape folder is: a tape there that no test of the run
 * opened is a stale candidate, reported as unused and removed by the documented prune.
 */
import { existsSync, unlinkSync } from 'node:fs';
import { basename, dirname, extname, join, resolve } from 'node:path';
import { readTape, withTapeLock } from '../store/tape-file.ts';
import { tapesUnder } from '../store/tape-files.ts';
import { sessionRemain } from '../realtime/usage-mark.ts';

/** Companion tapes (`tape.cache()`, `tape.mcp()`) belong to the test tape beside them. */
const COMPANION = /\.(cache|mcp)\.tape$/;

/**
 * The tapes in the tape folders of `testFiles` (`folderOf`, default `__tapes__/<file name>/`
 * beside each; undefined for a file with no folder of its own) that no test opened: `opened` holds the tapes the run's tests used. Pass only test files every test
 * of which ran: a test filtered out or skipped leaves its tape unopened too.
 *
 * @example
 * orphanTapes(['/p/test/chat.test.ts'], new Set(['/p/test/__tapes__/chat.test/chat/says-hello.tape']))
 * // ['/p/test/__tapes__/chat.test/chat/a-deleted-test.tape']
 */
export function orphanTapes(testFiles: readonly string[], opened: ReadonlySet<string>, folderOf: (file: string) => string | undefined = defaultTapeFolder): string[] {
  const used = new Set([...opened].map((p) => resolve(p)));
  const out = new Set<string>();
  for (const file of testFiles) {
    const dir = folderOf(resolve(file));
    if (dir === undefined || !existsSync(dir)) continue;
    for (const tape of tapesUnder(dir, 'skip')) {
      if (used.has(tape) || used.has(tape.replace(COMPANION, '.tape'))) continue;
      out.add(tape);
    }
  }
  return [...out].sort();
}

/**
 * A test file's tape folder under the default naming: `__tapes__/<file name>/` beside it.
 *
 * @example
 * defaultTapeFolder('/p/test/chat.test.ts') // '/p/test/__tapes__/chat.test'
 */
export const defaultTapeFolder = (file: string): string => join(dirname(file), '__tapes__', basename(file, extname(file)));

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
