// The main entry (`tapedeck`) must stay free of the file system: the tree and the in-memory replay
// store are exported from it, their tape-backed parts only from `llm-tapedeck/store`. This walks the
// static import graphs of the tree's and the replay store's pure entry modules and fails if any
// module in them imports node:fs.
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const src = resolve(dirname(fileURLToPath(import.meta.url)), '../../src');

function graph(entry: string): Map<string, string[]> {
  const seen = new Map<string, string[]>();
  const todo = [entry];
  while (todo.length > 0) {
    const file = todo.pop()!;
    if (seen.has(file)) continue;
    const text = readFileSync(file, 'utf8');
    // Static imports and re-exports only: dynamic import() is how the CLI loads optional parts,
    // and `import type` is erased from the output.
    const specs = [...text.matchAll(/^\s*(?:import|export)\s(?!type\s)[^;]*?from\s+'([^']+)'/gms)].map((m) => m[1]!);
    seen.set(file, specs);
    for (const s of specs) if (s.startsWith('.')) todo.push(join(dirname(file), s));
  }
  return seen;
}

describe('entry points', () => {
  it('the tree and replay modules the main entry exports reach no node:fs', () => {
    const g = new Map([...graph(join(src, 'tree/index.ts')), ...graph(join(src, 'replay/index.ts'))]);
    expect(readFileSync(join(src, 'index.ts'), 'utf8')).toMatch(/export \* from '\.\/tree\/index\.ts';\nexport \* from '\.\/replay\/index\.ts';/);
    const files = [...g.keys()].map((f) => f.slice(src.length + 1));
    expect(files).toContain('tree/tree.ts');
    expect(files).toContain('replay/store.ts');
    // Proxy records are read by the tree: the stream assembler is in the pure graph too.
    expect(files).toContain('providers/sse-assemble.ts');
    expect(files).not.toContain('replay/durable.ts');
    expect(files).not.toContain('tree/load.ts');
    const fs = [...g].filter(([, specs]) => specs.some((s) => s === 'node:fs' || s === 'node:fs/promises' || s === 'fs'));
    expect(fs.map(([f]) => f.slice(src.length + 1))).toEqual([]);
  });

  it('nothing the main entry imports reaches node:fs', () => {
    const g = graph(join(src, 'index.ts'));
    const files = [...g.keys()].map((f) => f.slice(src.length + 1));
    expect(files).toContain('match/recordings.ts'); // loadRecordingsDir looks node:fs up on call
    const fs = [...g].filter(([, specs]) => specs.some((s) => s === 'node:fs' || s === 'node:fs/promises' || s === 'fs'));
    expect(fs.map(([f]) => f.slice(src.length + 1))).toEqual([]);
  });

  it('llm-tapedeck/proxy exports the tape-backed parts (they sit above the store)', async () => {
    const store = await import('../../src/proxy/index.ts');
    expect(typeof store.loadTree).toBe('function');
    expect(typeof store.DurableReplayStore.open).toBe('function');
    const main = await import('../../src/index.ts');
    expect(typeof main.ConversationTree).toBe('function');
    expect(typeof main.handleReplay).toBe('function');
    expect('loadTree' in main).toBe(false);
  });
});
