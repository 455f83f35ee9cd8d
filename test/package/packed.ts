// The packed package as a user gets it: `npm pack` once per test file, the tarball unpacked into
// a temp directory's node_modules/llm-tapedeck, and its runtime dependencies (plus the SDKs and
// types a consumer brings) linked from this checkout's node_modules, so nothing is fetched from
// the registry and a run takes seconds.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export const root = join(import.meta.dirname, '../..');

export interface Packed {
  /** The temp directory: a consumer project with node_modules/llm-tapedeck. */
  dir: string;
  tarball: string;
  /** The unpacked package directory. */
  pkg: string;
  /** Paths inside the package, relative to it ("dist/index.js", ...). */
  files: string[];
  remove(): void;
}

/** Packages linked into the consumer project: the runtime dependencies and what a consumer adds. */
const LINKED = ['@noble/hashes', 'msgpackr', 'ws', 'yaml', 'selfsigned', 'openai', '@anthropic-ai/sdk', '@types/node', 'undici-types', 'vitest'];

export function pack(): Packed {
  const dir = mkdtempSync(join(tmpdir(), 'tapedeck-consumer-'));
  // --ignore-scripts: `prepack` would rebuild dist/ while other test files import it; the suite's
  // pretest has just built it.
  const out = execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  const [info] = JSON.parse(out) as { filename: string }[];
  const tarball = join(dir, info!.filename);
  mkdirSync(join(dir, 'node_modules'), { recursive: true });
  execFileSync('tar', ['-xzf', tarball, '-C', dir]);
  const pkg = join(dir, 'node_modules', 'llm-tapedeck');
  renameSync(join(dir, 'package'), pkg);
  for (const name of LINKED) {
    const target = join(root, 'node_modules', name);
    mkdirSync(dirname(join(dir, 'node_modules', name)), { recursive: true });
    symlinkSync(target, join(dir, 'node_modules', name), 'dir');
  }
  const files = (readdirSync(pkg, { recursive: true, withFileTypes: true }) as import('node:fs').Dirent[])
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(pkg.length + 1))
    .sort();
  return { dir, tarball, pkg, files, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
