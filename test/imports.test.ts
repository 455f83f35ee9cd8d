// Imports run one way only: core <- providers <- match <- store <- chaos <- (replay, tree, mcp, realtime, drift) <- proxy <- (testing <- vitest, browser),
// and the entries (cli) on top. A module
// may import from its own directory and from layers below its own, never from a layer above or
// beside it (replay, tree, mcp, realtime and drift do not know each other). Checked over every file in src/, from the
// import specifiers themselves (static, `export ... from` and dynamic `import()`).
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = join(import.meta.dirname, '../src');

/** Layer of a file by its place in src/; files beside the layers (errors, version) are the base. */
function layerOf(file: string): { name: string; rank: number } {
  const rel = relative(SRC, file).split(/[\\/]/);
  if (rel.length === 1) {
    // The entries: index.ts sits on top of everything it exposes; the command (cli.ts and its
    // modules in src/cli/) on top of that.
    if (rel[0] === 'index.ts') return { name: 'entry', rank: 8 };
    if (rel[0] === 'cli.ts') return { name: 'cli', rank: 8.5 };
    return { name: 'base', rank: 0 };
  }
  const dir = rel[0]!;
  // browser sits beside testing: a caller of the proxy's createFetch.
  // providers (one module per LLM API: routes, request views, streams, error shapes, credentials)
  // sit between the core and the matcher: the matcher, the store and the proxy ask them.
  const ranks: Record<string, number> = { types: 0, core: 1, providers: 1.5, match: 2, store: 3, chaos: 3.5, replay: 4, tree: 4, mcp: 4, realtime: 4, drift: 4, proxy: 5, testing: 6, browser: 6, vitest: 7, cli: 8.5 };
  if (!(dir in ranks)) throw new Error(`src/${dir} has no layer: add it to test/imports.test.ts`);
  return { name: dir, rank: ranks[dir]! };
}

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

/** Every relative import of a file, resolved. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(/(?:^|[\s;])(?:import|export)\s[^'"]*?from\s*['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/gm)) {
    out.push(resolve(dirname(file), (m[1] ?? m[2])!));
  }
  return out;
}

/** Imports that go up or sideways, as "from -> to" (paths relative to src/). */
export function violations(root: string = SRC): string[] {
  const bad: string[] = [];
  for (const f of files(root)) {
    const from = layerOf(f);
    for (const target of importsOf(f)) {
      const to = layerOf(target);
      const ok = to.name === from.name || to.rank < from.rank;
      if (!ok) bad.push(`${relative(root, f)} -> ${relative(root, target)}`);
    }
  }
  return bad;
}

describe('import direction', () => {
  it('no module imports from a layer above or beside its own', () => {
    expect(violations()).toEqual([]);
  });

  it('the check sees static, re-export and dynamic imports (it can fail)', () => {
    const sample = "import { a } from '../proxy/x.ts';\nexport { b } from './y.ts';\nconst m = await import('../cli.ts');\nimport type { T } from '../tree/t.ts';";
    const specs = [...sample.matchAll(/(?:^|[\s;])(?:import|export)\s[^'"]*?from\s*['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/gm)].map((m) => m[1] ?? m[2]);
    expect(specs).toEqual(['../proxy/x.ts', './y.ts', '../cli.ts', '../tree/t.ts']);
    expect(layerOf(join(SRC, 'store/x.ts')).rank).toBeLessThan(layerOf(join(SRC, 'tree/x.ts')).rank);
  });
});
