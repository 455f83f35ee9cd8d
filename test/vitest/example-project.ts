// A copy of examples/vitest in a temp folder, with its dependencies linked as `npm install` in a
// copy would provide them, the example's fake OpenAI API, and vitest run in it as a user runs it
// (a spawned process, a clean environment). Shared by the tape-file suite
// (test/vitest/example.test.ts) and the Redis-store suite (test/redis/vitest.test.ts).
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFakeOpenAI, type FakeOpenAI } from '../../examples/vitest/fake-openai.ts';

export const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** One vitest run: its exit code and everything it printed. */
export interface Run {
  code: number;
  out: string;
}

export interface ExampleProject {
  /** The project folder. */
  dir: string;
  /** Its default tape folder, test/__tapes__. */
  tapes: string;
  fake: FakeOpenAI;
  /** Runs the project's vitest (no CI, no tape mode, no store, no outer vitest unless `env` sets them). */
  vitest(args: string[], env?: Record<string, string>): Promise<Run>;
  /** Every .tape file under test/__tapes__, relative to it, sorted. */
  listTapes(): string[];
  close(): Promise<void>;
}

/**
 * Two test files on one tape (or one namespace) through a namer: four concurrent requests each.
 *
 * @example
 * writeFileSync(join(p.dir, 'test', 'shared-a.test.ts'), sharedTestFile('alpha'))
 */
export const sharedTestFile = (name: string) => `
import { inject, test as base } from 'vitest';
import { tapedeckFixtures } from 'llm-tapedeck/vitest';
const test = base.extend(tapedeckFixtures({ name: () => 'shared/one.tape' }));
for (const i of [1, 2, 3, 4]) {
  test.concurrent('${name} request ' + i, async ({ tape, expect }) => {
    const r = await tape.fetch(inject('openaiBaseURL') + '/chat/completions', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: '${name} ' + i }] }),
    });
    expect(((await r.json()) as { choices: { message: { content: string } }[] }).choices[0].message.content).toContain('${name} ' + i);
  });
}
`;

/** The summary's first line. */
export const summaryLine = (r: Run) => r.out.split('\n').find((l) => l.startsWith('tapedeck: '));

/** Copies the example (without tapes) into a temp folder, adds `files` (path -> text), starts its fake API. */
export async function exampleProject(files: Record<string, string> = {}): Promise<ExampleProject> {
  const dir = mkdtempSync(join(tmpdir(), 'tapedeck-example-'));
  const tapes = join(dir, 'test', '__tapes__');
  cpSync(join(repo, 'examples', 'vitest'), dir, { recursive: true, filter: (src) => !/node_modules|__tapes__/.test(src) });
  mkdirSync(join(dir, 'node_modules', '@ai-sdk'), { recursive: true });
  for (const p of ['vitest', 'openai', 'ai', '@ai-sdk/openai']) symlinkSync(join(repo, 'node_modules', p), join(dir, 'node_modules', p));
  symlinkSync(repo, join(dir, 'node_modules', 'llm-tapedeck'));
  for (const [path, text] of Object.entries(files)) writeFileSync(join(dir, path), text);
  const fake = await startFakeOpenAI();

  function vitest(args: string[], env: Record<string, string> = {}): Promise<Run> {
    const base: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) {
      if (v === undefined || /^(VITEST|TAPEDECK_|CACHE_MODE$|CI$|NODE_ENV$|NODE_OPTIONS$|OPENAI_)/.test(k)) continue;
      base[k] = v;
    }
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        [join(repo, 'node_modules', 'vitest', 'vitest.mjs'), 'run', ...args],
        { cwd: dir, env: { ...base, NO_COLOR: '1', FORCE_COLOR: '0', OPENAI_BASE_URL: fake.url, ...env }, maxBuffer: 16 * 1024 * 1024 },
        (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: `${stdout}\n${stderr}` }),
      );
    });
  }

  function listTapes(): string[] {
    const out: string[] = [];
    const walk = (d: string) => {
      if (!existsSync(d)) return;
      for (const e of readdirSync(d, { withFileTypes: true })) {
        if (e.isDirectory()) walk(join(d, e.name));
        else if (e.name.endsWith('.tape')) out.push(relative(tapes, join(d, e.name)));
      }
    };
    walk(tapes);
    return out.sort();
  }

  return {
    dir,
    tapes,
    fake,
    vitest,
    listTapes,
    async close() {
      await fake.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
