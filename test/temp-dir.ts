// The suite's temp directory: every test (and every process a test starts) makes its temp files
// in one fresh directory, TMPDIR for the whole run, so a test that leaves its `tapedeck-*`
// folder behind is found here at the end instead of piling up in the system's temp directory,
// and helpers running other suites on the same machine are not mistaken for it. The run fails
// and names what was left; the directory is removed either way.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** What a finished run left in the temp directory that a test should have removed. */
export function leftBehind(dir: string): string[] {
  return readdirSync(dir)
    .filter((n) => n.startsWith('tapedeck-'))
    .sort();
}

export default function setup(): () => void {
  const outer = tmpdir();
  const dir = mkdtempSync(join(outer, 'tapedeck-suite-'));
  const before = process.env.TMPDIR;
  process.env.TMPDIR = dir;
  return () => {
    const left = leftBehind(dir);
    if (before === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = before;
    rmSync(dir, { recursive: true, force: true });
    if (left.length > 0) {
      // vitest reports a throw from here but keeps its exit code: set a failing one as well.
      process.exitCode = 1;
      throw new Error(`Tests left ${left.length} folder(s) in the temp directory: ${left.join(', ')}. Remove each in the test that makes it (afterAll / finally).`);
    }
  };
}
