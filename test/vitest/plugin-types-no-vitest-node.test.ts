// The plugin's declarations imported their types from 'vitest/node', whose types in vitest 3.2
// (the lowest vitest the package takes) import the untyped `debug` package: a vitest.config.ts
// with `plugins: [tapedeck()]` failed to type-check under `skipLibCheck: false`, where the same
// config without the plugin passed. Now the shipped declarations name no 'vitest/node': the
// plugin's type comes from 'vitest/config' (as `defineConfig` does), the reporter's from a few
// members declared where it is. A consumer config (plugin and reporter) is type-checked against
// the built dist with the TypeScript and vitest of node_modules, and the files tsc read are
// listed: none of vitest's node.d.ts.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';

const repo = join(import.meta.dirname, '..', '..');

it('the plugin and reporter type-check with skipLibCheck false without reading vitest/node types', { timeout: 120_000 }, () => {
  expect(readFileSync(join(repo, 'dist/vitest/plugin.d.ts'), 'utf8')).not.toContain('vitest/node');
  const dir = mkdtempSync(join(tmpdir(), 'tapedeck-plugin-types-'));
  try {
    mkdirSync(join(dir, 'node_modules'));
    symlinkSync(repo, join(dir, 'node_modules', 'llm-tapedeck'));
    symlinkSync(join(repo, 'node_modules', 'vitest'), join(dir, 'node_modules', 'vitest'));
    symlinkSync(join(repo, 'node_modules', '@types'), join(dir, 'node_modules', '@types'));
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
    writeFileSync(
      join(dir, 'vitest.config.ts'),
      `import { defineConfig } from 'vitest/config';
import { tapedeck, TapedeckReporter } from 'llm-tapedeck/vitest/plugin';
export const plugin = tapedeck({ prune: false });
export const named: string = plugin.name;
export default defineConfig({ plugins: [plugin], test: { reporters: ['default', new TapedeckReporter('/tmp/tapedeck-run')] } });
`,
    );
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { strict: true, skipLibCheck: false, module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', lib: ['ES2022', 'DOM'], noEmit: true, types: ['node'] }, files: ['vitest.config.ts'] }),
    );
    let out: string;
    try {
      out = execFileSync(process.execPath, [join(repo, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', dir, '--listFiles'], { encoding: 'utf8' });
    } catch (e) {
      throw new Error(String((e as { stdout?: string }).stdout ?? e));
    }
    const read = out.split('\n').filter(Boolean);
    expect(read.some((f) => f.endsWith('/dist/vitest/plugin.d.ts'))).toBe(true);
    expect(read.filter((f) => /\/vitest\/dist\/node\.d\.ts$/.test(f))).toEqual([]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
