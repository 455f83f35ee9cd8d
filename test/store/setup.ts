// Shared set-up of the store suites: a temporary directory of tapes removed after the file's
// tests, and a mode environment that does not leak in from the shell that runs the suite.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, vi } from 'vitest';

/**
 * Registers the hooks and returns `fresh()`, a new tape path on each call, plus the directory.
 *
 * @example
 * const { fresh, root } = tapeSuite('records'); const file = fresh();
 */
export function tapeSuite(name: string): { root: string; fresh: () => string } {
  const root = mkdtempSync(join(tmpdir(), `tapedeck-${name}-`));
  let n = 0;
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  // The suite must not depend on the mode of the shell that runs it.
  beforeEach(() => {
    vi.stubEnv('TAPEDECK_MODE', '');
    vi.stubEnv('CACHE_MODE', '');
  });
  afterEach(() => {
    vi.unstubAllEnvs();
  });
  return { root, fresh: () => join(root, `t${n++}.tape`) };
}
