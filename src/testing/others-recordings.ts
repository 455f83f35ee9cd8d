/**
 * A miss on a tape the tests of a file share (`per: 'file'`), of a test that has no recording
 * there: the closest recording is another test's, and "text differs from the closest recording"
 * sends the reader after a prompt change that never happened. Looked at only on a miss.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { readTape } from '../store/tape-file.ts';
import { isHttpRecord } from '../store/records.ts';
import { tapeWritersOpen } from '../store/tape-writers.ts';

/**
 * Whether `tape` holds HTTP recordings, each naming its test, and none names `test`; then also
 * whether a recording run of the tape did not end (its writer note, `<tape>.writers/`, is still
 * beside it: Ctrl-C, a killed worker). Undefined when the tape cannot be read, or a recording
 * names no test (recorded before recordings named theirs) or a test of a file gone from `root`
 * (this test's, before its file moved): it may be this test's.
 *
 * @example
 * await othersRecordingsOnly('/p/test/__tapes__/steps.test.tape', 'test/steps.test.ts > step 5', '/p')
 * // { stopped: true } when only step 1 to 4 were recorded before the run was stopped
 */
export async function othersRecordingsOnly(tape: string, test: string, root: string): Promise<{ stopped: boolean } | undefined> {
  let named = false;
  for (const { value } of (await readTape(tape)).records) {
    if (!isHttpRecord(value)) continue;
    const owner = (value as { test?: unknown }).test;
    if (typeof owner !== 'string' || owner === test) return undefined;
    const sep = owner.indexOf(' > ');
    if (sep < 0 || !existsSync(join(root, owner.slice(0, sep)))) return undefined;
    named = true;
  }
  return named ? { stopped: await tapeWritersOpen(tape) } : undefined;
}
