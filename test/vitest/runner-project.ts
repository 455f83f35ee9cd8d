// A small project for a test runner, as a user has it: jest, mocha, vitest, openai and
// llm-tapedeck installed (linked from this checkout), and commands run through a shell with a
// clean environment, as a user pastes them.
import { spawn } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { outputOf } from './child.ts';

const root = join(import.meta.dirname, '..', '..');

/** A project folder `name` under `base`, with the runners and llm-tapedeck linked as `npm install` would, and `files`. */
export function runnerProject(base: string, name: string, files: Record<string, string>): string {
  const dir = join(base, name);
  mkdirSync(join(dir, 'node_modules', '.bin'), { recursive: true });
  for (const p of ['jest', 'mocha', 'vitest']) {
    symlinkSync(join(root, 'node_modules', p), join(dir, 'node_modules', p));
    symlinkSync(join(root, 'node_modules', '.bin', p), join(dir, 'node_modules', '.bin', p));
  }
  symlinkSync(join(root, 'node_modules', 'openai'), join(dir, 'node_modules', 'openai'));
  symlinkSync(root, join(dir, 'node_modules', 'llm-tapedeck'));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, private: true, type: 'module' }));
  for (const [p, text] of Object.entries(files)) writeFileSync(join(dir, p), text);
  return dir;
}

/** A command line through a shell, as a user pastes it, with a clean environment. */
export function sh(command: string, cwd: string, env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined || /^(VITEST|TAPEDECK_|CACHE_MODE$|CI$|NODE_ENV$|NODE_OPTIONS$|NODE_TEST_CONTEXT$|JEST_WORKER_ID$)/.test(k)) continue;
    base[k] = v;
  }
  // ./bin/npx first: a runner linked into the project starts as npx would start it, without npm.
  base.PATH = `${join(import.meta.dirname, 'bin')}${delimiter}${dirname(process.execPath)}${delimiter}${base.PATH ?? ''}`;
  // The runners here are links into the shared install, and mocha resolves `--require` from
  // where it really is: NODE_PATH lets it find the project's llm-tapedeck, as it would when
  // installed in the project.
  base.NODE_PATH = join(cwd, 'node_modules');
  return outputOf(spawn('/bin/sh', ['-c', command], { cwd, env: { ...base, NO_COLOR: '1', FORCE_COLOR: '0', ...env } }));
}
