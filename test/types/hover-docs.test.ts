// What an editor shows on hover over a name the package exports is the doc comment of its
// declaration: every class, interface, type and constant an entry exports has one that says
// what it is (a comment holding only an @example shows nothing to read), and so does every
// member of an exported options interface. The names are read from the entries' index files,
// so a new export without a doc comment fails here.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';

const src = join(import.meta.dirname, '..', '..', 'src');
const ENTRIES = ['index.ts', 'store/index.ts', 'proxy/index.ts', 'proxy/fetch-entry.ts', 'mcp/index.ts', 'realtime/index.ts', 'browser/index.ts', 'testing/index.ts', 'vitest/index.ts', 'vitest/plugin.ts', 'testing/jest.ts', 'testing/mocha.ts'];

const text = (file: string): string => readFileSync(file, 'utf8');
const resolve = (from: string, spec: string): string => join(dirname(from), spec.replace(/\.js$/, '.ts'));

/** The files and names an entry exports, following `export … from` and `export *` through the source. */
function exported(file: string, seen = new Set<string>()): Map<string, string> {
  const out = new Map<string, string>();
  if (seen.has(file) || !existsSync(file)) return out;
  seen.add(file);
  const s = text(file);
  for (const m of s.matchAll(/export (?:type )?\{([^}]*)\} from '(\.[^']+)'/g)) {
    for (const part of m[1]!.split(',')) {
      const names = part.replace(/\btype\b/, '').trim().split(/\s+as\s+/);
      if (names[0]) out.set(names[1] ?? names[0], resolve(file, m[2]!));
    }
  }
  for (const m of s.matchAll(/export \* from '(\.[^']+)'/g)) for (const [n, f] of exported(resolve(file, m[1]!), seen)) out.set(n, f);
  for (const m of s.matchAll(/^export (?:declare )?(?:abstract )?(?:async )?(?:interface|class|type|const|function) (\w+)/gm)) out.set(m[1]!, file);
  return out;
}

/** The lines of the doc comment right above line `i`, without its `*`s; undefined without one. */
function docAbove(lines: string[], i: number): string[] | undefined {
  let end = i - 1;
  while (end >= 0 && lines[end]!.trim() === '') end--;
  if (end < 0 || !lines[end]!.trim().endsWith('*/')) return undefined;
  let start = end;
  while (start >= 0 && !lines[start]!.trim().startsWith('/**')) start--;
  if (start < 0) return undefined;
  return lines.slice(start, end + 1).map((l) => l.replace(/^\s*\/?\*+\/?\s?/, '').replace(/\*\/$/, '').trim()).filter((l) => l !== '');
}

/** Where `name` is declared, following re-exports of it; undefined when it is a function (its overloads carry the docs) or not found. */
function declaration(name: string, file: string, depth = 0): { file: string; line: number; kind: string } | undefined {
  if (depth > 5 || !existsSync(file)) return undefined;
  const lines = text(file).split('\n');
  const re = new RegExp(`^export (?:declare )?(?:abstract )?(interface|class|type|const) ${name}\\b`);
  const at = lines.findIndex((l) => re.test(l));
  if (at >= 0) return { file, line: at, kind: re.exec(lines[at]!)![1]! };
  const again = exported(file).get(name);
  return again !== undefined && again !== file ? declaration(name, again, depth + 1) : undefined;
}

const missing: string[] = [];
const undocumentedOptions: string[] = [];
const checked = new Set<string>();
for (const entry of ENTRIES) {
  for (const [name, from] of exported(join(src, entry))) {
    const d = declaration(name, from);
    if (d === undefined || checked.has(`${d.file}:${d.line}`)) continue;
    checked.add(`${d.file}:${d.line}`);
    const lines = text(d.file).split('\n');
    const where = `${d.file.slice(src.length + 1)}:${d.line + 1} ${name}`;
    const doc = docAbove(lines, d.line);
    if (doc === undefined || doc[0]!.startsWith('@')) missing.push(where);
    if (d.kind !== 'interface' || !name.endsWith('Options')) continue;
    // Members of an options interface: one per line at two spaces of indent.
    for (let i = d.line + 1; i < lines.length && !lines[i]!.startsWith('}'); i++) {
      const m = /^ {2}(?:readonly )?(\w+)\??:/.exec(lines[i]!);
      if (m && docAbove(lines, i) === undefined && !/\/\*\*.*\*\//.test(lines[i]!)) undocumentedOptions.push(`${where}.${m[1]}`);
    }
  }
}

describe('hover docs of the exported names', () => {
  it('finds the exports it checks (it reads the entries it names)', () => {
    expect(checked.size).toBeGreaterThan(150);
  });

  it('every exported class, interface, type and constant has a doc comment saying what it is', () => {
    expect(missing).toEqual([]);
  });

  it('every member of an exported options interface has a doc comment', () => {
    expect(undocumentedOptions).toEqual([]);
  });
});
