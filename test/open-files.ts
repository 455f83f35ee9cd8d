// Which files a test's process holds open: a tape read from its file keeps its descriptor until
// it is closed, and tests check that close() lets it go.
import { existsSync, readdirSync, readlinkSync, realpathSync } from 'node:fs';
import { expect } from 'vitest';

/**
 * Expects this process to hold `n` open descriptors of `file`, counted where /proc lists them
 * (Linux, as in CI; elsewhere the descriptors go unchecked).
 */
export function expectOpen(file: string, n: number): void {
  if (existsSync('/proc/self/fd')) expect(openFds(file)).toBe(n);
}

/** This process's open descriptors of `file` (/proc/self/fd). */
function openFds(file: string): number {
  const real = realpathSync(file);
  let n = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`) === real) n++;
    } catch {
      // closed meanwhile (the listing's own descriptor)
    }
  }
  return n;
}
