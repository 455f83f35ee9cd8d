// A read-only file system for tests of what a tape there says: a tmpfs mounted and remounted
// read-only. Root in a container that allows mounts only; elsewhere the tests that need one skip
// (chmod does not stop root's writes, so it cannot stand in).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

let can: boolean | undefined;

/** Whether this process can mount a tmpfs and remount it read-only. */
export function canMountReadOnly(): boolean {
  if (can !== undefined) return can;
  can = false;
  if (process.getuid?.() !== 0) return can;
  const probe = mkdtempSync(join(tmpdir(), 'tapedeck-ro-probe-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', 'tmpfs', probe], { stdio: 'ignore' });
    try {
      execFileSync('mount', ['-o', 'remount,ro', probe], { stdio: 'ignore' });
      can = true;
    } finally {
      execFileSync('umount', [probe], { stdio: 'ignore' });
    }
  } catch {
    // No mount here: the caller skips.
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
  return can;
}

/**
 * Mounts a writable tmpfs at `dir` (an empty directory), runs `fill` to put files there, remounts
 * it read-only and runs `fn`; unmounts after, whatever happens.
 *
 * @example
 * await onReadOnly(join(dir, 'ro'), async (ro) => writeFileSync(join(ro, 'a'), 'x'), async (ro) => { ... })
 */
export async function onReadOnly(dir: string, fill: (dir: string) => Promise<void> | void, fn: (dir: string) => Promise<void> | void): Promise<void> {
  execFileSync('mount', ['-t', 'tmpfs', 'tmpfs', dir]);
  try {
    await fill(dir);
    execFileSync('mount', ['-o', 'remount,ro', dir]);
    await fn(dir);
  } finally {
    execFileSync('umount', [dir]);
  }
}
