/**
 * The vitest command a run's printed record and prune commands start with. They are run as
 * printed, so a run started with its own config file (`vitest run -c vitest.tapes.config.ts`)
 * prints its `-c`: without it the command runs the default config (or none) and records nothing
 * where the miss was.
 */
import { basename, dirname, relative, resolve } from 'node:path';
import { shellQuote } from '../testing/session.ts';

/** The names vitest looks for by itself in the root, first to last. */
const DEFAULT_CONFIG = /^(vitest|vite)\.config\.(ts|mts|cts|js|mjs|cjs)$/;

/**
 * `npx vitest run`, with `-c <file>` when the run's config file is not one vitest finds by
 * itself in the root (`configFile`: vitest's resolved `config`, an absolute path or undefined).
 *
 * @example
 * vitestCommand('/p/vitest.config.ts', '/p')       // 'npx vitest run'
 * vitestCommand('/p/vitest.tapes.config.ts', '/p') // 'npx vitest run -c vitest.tapes.config.ts'
 */
export function vitestCommand(configFile: string | undefined, root: string): string {
  const base = 'npx vitest run';
  if (!configFile) return base;
  const file = resolve(root, configFile);
  if (dirname(file) === resolve(root) && DEFAULT_CONFIG.test(basename(file))) return base;
  return `${base} -c ${shellQuote(relative(root, file).replace(/\\/g, '/') || file)}`;
}
