/**
 * A test recorded again after its test file moved: the recordings on its tape (moved there with
 * the command a miss prints) name the test in the file that is gone (`test/a.test.ts > chat`),
 * and record mode never replaces another test's recordings (docs/modes.md rule 3). They stayed
 * beside the new ones: the tape grew by every re-record, a diff paired the old with the old and
 * called the new answer "added", and the old recordings were "unused" forever after. They are
 * this test's: same name, a file that no longer exists. Before a record run writes, they are
 * renamed to the test where it is now (the tape rewritten whole, atomically, under its lock), so
 * the run replaces them as it replaces the test's own.
 */
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { decodeFrame, peekFrame, recordFrame, rewriteTapeWith, scanTape } from '../store/tape-file.ts';

/** The tests a tape's records name, by tape, with the size and time of the tape they were read from. */
const lookedAt = new Map<string, { size: number; mtimeMs: number; tests: Set<string>; damaged: boolean }>();

/** Whether a record's test (`<file> > <name>`) is `owner`'s name in a test file gone from `root`. */
function formerSelf(test: unknown, owner: string, root: string): test is string {
  if (typeof test !== 'string' || test === owner) return false;
  const [at, own] = [test.indexOf(' > '), owner.indexOf(' > ')];
  if (at < 0 || own < 0 || test.slice(at + 3) !== owner.slice(own + 3)) return false;
  return !existsSync(resolve(root, test.slice(0, at)));
}

/**
 * Renames, on the tape file `tape`, the recordings of `owner` (`<file> > <name>`, as records name
 * a test) made before its test file moved (those naming its name in a test file gone from
 * `root`) to `owner`. Returns how many it renamed; 0, touching nothing, when the tape does not
 * exist, has none, or is damaged (a rewrite would drop the damage; `tapedeck verify` tells it).
 * For record mode only: replay and update serve such recordings as they are.
 *
 * @example
 * await adoptMovedRecordings('/p/test/__tapes__/b.test/chat.tape', 'test/b.test.ts > chat', '/p')
 * // 1 when its one recording names 'test/a.test.ts > chat' and test/a.test.ts is gone
 */
export async function adoptMovedRecordings(tape: string, owner: string, root: string): Promise<number> {
  const st = statSync(tape, { throwIfNoEntry: false });
  if (st === undefined) return 0;
  // A look first (each record's leading test field), once per state of the tape for all the
  // tests that share it: most record runs find nothing, and a shared tape was read per test.
  let named = lookedAt.get(tape);
  if (named === undefined || named.size !== st.size || named.mtimeMs !== st.mtimeMs) {
    const seen = await scanTape(tape);
    const tests = new Set<string>();
    if (seen.warnings.length === 0) for (const f of seen.frames) {
      const test = peekFrame(seen.bytes, f, ['test'], true).test;
      if (typeof test === 'string') tests.add(test);
    }
    named = { size: st.size, mtimeMs: st.mtimeMs, tests, damaged: seen.warnings.length > 0 };
    lookedAt.set(tape, named);
  }
  if (named.damaged || ![...named.tests].some((t) => formerSelf(t, owner, root))) return 0;
  let renamed = 0;
  await rewriteTapeWith(tape, (scan) => {
    if (scan.warnings.length > 0) return undefined;
    renamed = 0;
    const parts: Uint8Array[] = [scan.bytes.subarray(0, scan.headerEnd)];
    scan.frames.forEach((f, i) => {
      const bytes = scan.bytes.subarray(f.offset, f.offset + f.length);
      if (!formerSelf(peekFrame(scan.bytes, f, ['test'], true).test, owner, root)) return void parts.push(bytes);
      const value = decodeFrame(scan.bytes, f, tape) as Record<string, unknown>;
      parts.push(recordFrame({ ...value, test: owner }, i, tape));
      renamed++;
    });
    return renamed > 0 ? parts : undefined;
  });
  return renamed;
}
