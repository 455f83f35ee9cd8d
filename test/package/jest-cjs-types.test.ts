// The CommonJS types of llm-tapedeck/jest (dist/testing/jest.d.cts, what a ts-jest project's
// TypeScript reads) against the tape jest's runtime gives: they were written by hand and lacked
// chaos(), serve(), mcp(), misses, store, namespace and modeSource, and typed install() and
// cache() loosely. A project as a user has it (llm-tapedeck in node_modules), compiled with the
// repo's TypeScript as CommonJS (a package without "type": "module", node16 and nodenext): the
// test tape of the CommonJS types must be the very TestTape of the ES module entries.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-jest-cjs-types-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const source = `import { configureTapes, createFetch, openTestTape, tape, TapedeckError, type TestTape } from 'llm-tapedeck/jest';
import type { TestTape as EsmTestTape } from 'llm-tapedeck/testing' with { 'resolution-mode': 'import' };
import type { ReplayCache } from 'llm-tapedeck/store' with { 'resolution-mode': 'import' };
import type { FetchSwitch } from 'llm-tapedeck/fetch' with { 'resolution-mode': 'import' };

/** true when A and B are the same type, member for member. */
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
export const sameTape: Same<TestTape, EsmTestTape> = true;
export const sameTapeFromFunction: Same<ReturnType<typeof tape>, EsmTestTape> = true;

export async function inTest(): Promise<unknown[]> {
  const t = tape();
  t.chaos({ faults: { 429: 1 }, attempts: 1 });
  const proxy = await t.serve({ tls: false });
  const cache: ReplayCache = await t.cache();
  const sw: FetchSwitch = t.install({ hosts: ['api.openai.com'] });
  sw.uninstall();
  const where: [string | undefined, string | undefined, string] = [t.store, t.namespace, t.modeSource];
  const failure = t.missFailure();
  return [proxy.url, cache, where, t.misses.length, failure?.code, t.mcp];
}

export async function elsewhere(): Promise<void> {
  configureTapes({ dir: 'test/__tapes__', testCommand: 'npx jest' });
  const opened = openTestTape({ tape: 'a.tape' });
  await opened.close();
  const f = createFetch({ tape: 'b.tape' });
  await f.close();
  const e: unknown = undefined;
  if (e instanceof TapedeckError && e.code === 'E_MISS') throw e;
}
`;

/** tsc over the project with `options`: its output, empty when it compiles. */
function tsc(project: string, options: Record<string, unknown>): string {
  writeFileSync(join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions: { strict: true, skipLibCheck: false, noEmit: true, target: 'ES2022', lib: ['ES2022', 'DOM'], types: ['node'], typeRoots: [join(root, 'node_modules', '@types')], ...options }, files: ['test.ts'] }));
  try {
    execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(project, 'tsconfig.json')], { encoding: 'utf8' });
    return '';
  } catch (e) {
    return String((e as { stdout?: string }).stdout ?? e);
  }
}

it.each([
  ['node16', { module: 'Node16', moduleResolution: 'Node16' }],
  ['nodenext', { module: 'NodeNext', moduleResolution: 'NodeNext' }],
])('a CommonJS TypeScript project, %s: jest\'s tape is typed as the TestTape it is', (name, options) => {
  const project = join(dir, name.replace(/\W+/g, '-'));
  mkdirSync(join(project, 'node_modules'), { recursive: true });
  symlinkSync(root, join(project, 'node_modules', 'llm-tapedeck'));
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'commonjs' }));
  writeFileSync(join(project, 'test.ts'), source);
  expect(tsc(project, options)).toBe('');
});
