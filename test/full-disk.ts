// A real full disk for the tests of what a failed write leaves: a small tmpfs, which mounting
// needs root for (CI runs as root; elsewhere the cases that need one skip).
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Whether a tmpfs can be mounted here, tried once in `dir` (a probe folder is made there).
 *
 * @example
 * const canMount = canMountTmpfs(dir); it.runIf(canMount)('...', ...)
 */
export function canMountTmpfs(dir: string): boolean {
  if (process.getuid?.() !== 0) return false;
  const probe = join(dir, 'probe');
  mkdirSync(probe, { recursive: true });
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4k', 'tmpfs', probe], { stdio: 'ignore' });
    execFileSync('umount', [probe], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * Takes every free block of the file system at `mnt` (files named `fill-N`).
 *
 * @example
 * fillDisk(mnt); // the next write there fails with ENOSPC
 */
export function fillDisk(mnt: string): void {
  for (let i = 0; ; i++) {
    try {
      writeFileSync(join(mnt, `fill-${i}`), Buffer.alloc(4096));
    } catch {
      return;
    }
  }
}
