// The @example blocks of the source's doc comments, as an editor shows them on hover and as the
// published .d.ts files carry them, made into programs: read from src (so a test fails when the
// example there is wrong), with the imports an example names pointed at src, and the setup it
// leaves out (the variables it takes as given) put in front.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

export const root = join(import.meta.dirname, '..', '..');

/** Where each entry of package.json "exports" comes from in src. */
const ENTRIES: Record<string, string> = {
  'llm-tapedeck': 'src/index.ts',
  'llm-tapedeck/store': 'src/store/index.ts',
  'llm-tapedeck/proxy': 'src/proxy/index.ts',
  'llm-tapedeck/fetch': 'src/proxy/fetch-entry.ts',
  'llm-tapedeck/mcp': 'src/mcp/index.ts',
  'llm-tapedeck/realtime': 'src/realtime/index.ts',
  'llm-tapedeck/browser': 'src/browser/index.ts',
  'llm-tapedeck/testing': 'src/testing/index.ts',
  'llm-tapedeck/vitest': 'src/vitest/index.ts',
};

/**
 * The text of the @example of the doc comment right before the first line of `file` (under src)
 * that `declaration` matches, without the comment's leading `*`s.
 *
 * @example
 * exampleOf('tree/tree.ts', /^\s+find\(/) // "const { node, matched } = tree.find(…)"
 */
export function exampleOf(file: string, declaration: RegExp): string {
  const lines = readFileSync(join(root, 'src', file), 'utf8').split('\n');
  const at = lines.findIndex((l) => declaration.test(l));
  if (at < 0) throw new Error(`no line of src/${file} matches ${declaration}`);
  let end = at - 1;
  while (end >= 0 && lines[end]!.trim() === '') end--;
  if (!lines[end]!.trim().endsWith('*/')) throw new Error(`src/${file}:${at + 1} has no doc comment`);
  let start = end;
  while (start >= 0 && !lines[start]!.trim().startsWith('/**')) start--;
  const body = lines.slice(start + 1, end).map((l) => l.replace(/^\s*\* ?/, ''));
  const from = body.findIndex((l) => l.startsWith('@example'));
  if (from < 0) throw new Error(`the doc comment of src/${file}:${at + 1} has no @example`);
  const out: string[] = [];
  for (const l of body.slice(from + 1)) {
    if (l.startsWith('@')) break;
    out.push(l);
  }
  return out.join('\n').trim();
}

/** An example's imports of the package pointed at the source of each entry, from `dir`. */
export function toSource(code: string, dir: string): string {
  return code.replace(/from '(llm-tapedeck(?:\/[a-z/]+)?)'/g, (all, spec: string) => {
    const src = ENTRIES[spec];
    if (src === undefined) return all;
    const rel = relative(dir, join(root, src)).replaceAll('\\', '/');
    return `from '${rel.startsWith('.') ? rel : './' + rel}'`;
  });
}

/**
 * An example as a module whose expression statements (a line that is a value, its comment
 * saying what it is) are collected, in order, into the exported `results`.
 */
export function collecting(code: string): string {
  const lines = code.split('\n').map((l) => {
    const bare = l.replace(/\s\/\/ .*$/, '').trimEnd();
    if (bare === '' || /^(import|export|const|let|var|if|for|try|await using|\}|\/\/)/.test(bare.trimStart()) || bare.endsWith('{')) return l;
    return `results.push(${bare.replace(/;$/, '')});`;
  });
  return lines.join('\n');
}

/**
 * Type-checks files of `dir` with the project's strict settings (tsc over them and src), and
 * returns what tsc printed: empty when everything compiles.
 */
export function typeCheck(dir: string, files: string[]): string {
  const config = join(dir, 'tsconfig.json');
  writeFileSync(config, JSON.stringify({
    extends: join(root, 'tsconfig.json'),
    compilerOptions: { noEmit: true, rootDir: root, allowImportingTsExtensions: true, lib: ['ES2024', 'ESNext.Disposable'] },
    files: files.map((f) => join(dir, f)),
  }));
  try {
    execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', config], { encoding: 'utf8', cwd: root });
    return '';
  } catch (e) {
    return String((e as { stdout?: string }).stdout ?? e).replaceAll(dir + '/', '');
  }
}
