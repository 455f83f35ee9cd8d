// `vitest --watch` in record mode: each re-run after a change is a run of its own, so its
// recordings replace what the run before it recorded (as a retry's or a repetition's do), and the
// tape keeps the answers the last run saw. Before, every re-run of one watch session was "the
// same run": each appended its recordings, replay served the first iteration's answer, and the
// summary called the newest recordings unused. Through the real vitest in watch mode, with the
// plugin, a file change triggering each re-run.
import { spawn } from 'node:child_process';
import { appendFileSync, readFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { upstreamSuite } from '../proxy/upstream-suite.ts';
import { runnerProject, sh } from './runner-project.ts';

const suite = upstreamSuite('watch-rerecord');

const files = {
  'vitest.config.mjs': `import { defineConfig } from 'vitest/config';\nimport { tapedeck } from 'llm-tapedeck/vitest/plugin';\nexport default defineConfig({ plugins: [tapedeck({ drift: false })] });\n`,
  'chat.test.mjs': `import { appendFileSync } from 'node:fs';
import { test, expect } from 'llm-tapedeck/vitest';
test('asks', async ({ tape }) => {
  const r = await tape.fetch(process.env.UPSTREAM + '/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }) });
  const answer = (await r.json()).choices[0].message.content;
  appendFileSync('answers.log', (process.env.CI ? 'replay ' : 'record ') + answer + '\\n');
  expect(answer).toContain('hi');
});
`,
};

/** A clean environment, as runner-project's sh() gives a command. */
function cleanEnv(cwd: string, env: Record<string, string>): Record<string, string> {
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined || /^(VITEST|TAPEDECK_|CACHE_MODE$|CI$|NODE_ENV$|NODE_OPTIONS$)/.test(k)) continue;
    base[k] = v;
  }
  base.PATH = `${dirname(process.execPath)}${delimiter}${base.PATH ?? ''}`;
  base.NODE_PATH = join(cwd, 'node_modules');
  return { ...base, NO_COLOR: '1', FORCE_COLOR: '0', ...env };
}

describe('vitest --watch in record mode', () => {
  it('re-records on each re-run: the tape keeps the last run\'s answer', { timeout: 120_000 }, async () => {
    const dir = runnerProject(suite.dir, 'watch', files);
    const child = spawn(process.execPath, [join(dir, 'node_modules', 'vitest', 'vitest.mjs'), '--watch'], {
      cwd: dir,
      env: cleanEnv(dir, { UPSTREAM: suite.upstream.url, TAPEDECK_MODE: 'record' }),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    const waiters: { n: number; resolve: () => void }[] = [];
    const summaries = () => out.split('\n').filter((l) => l.startsWith('tapedeck: ')).length;
    const onData = (d: Buffer) => {
      out += d.toString();
      for (const w of waiters.splice(0)) (summaries() >= w.n ? w.resolve() : waiters.push(w));
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    const exited = new Promise<void>((r) => child.on('close', () => r()));
    /** Resolves once the n-th run summary was printed (or rejects if vitest ended first). */
    const summary = (n: number) =>
      Promise.race([
        new Promise<void>((resolve) => (summaries() >= n ? resolve() : waiters.push({ n, resolve }))),
        exited.then(() => {
          if (summaries() < n) throw new Error(`vitest ended before run ${n}:\n${out}`);
        }),
      ]);
    try {
      await summary(1);
      // A change to the test file makes vitest run it again.
      appendFileSync(join(dir, 'chat.test.mjs'), '// changed\n');
      await summary(2);
      appendFileSync(join(dir, 'chat.test.mjs'), '// changed again\n');
      await summary(3);
    } finally {
      child.kill('SIGINT');
      await exited;
    }
    const lines = out.split('\n').filter((l) => l.startsWith('tapedeck: ') || l.includes('chat.test/asks.tape'));
    // Each re-run re-recorded the call (its recording replaced the run before's): none unused.
    const runs = out.split('\n').filter((l) => l.startsWith('tapedeck: '));
    expect(runs, lines.join('\n')).toHaveLength(3);
    expect(runs[1], lines.join('\n')).toContain('0 unused recordings');
    expect(runs[2], lines.join('\n')).toContain('0 unused recordings');
    expect(out, lines.join('\n')).toContain('re-recorded (replaced)');

    const recorded = readFileSync(join(dir, 'answers.log'), 'utf8').trim().split('\n');
    expect(recorded).toHaveLength(3);
    const r = await sh('npx vitest run', dir, { UPSTREAM: suite.upstream.url, CI: '1' });
    expect(r.code, r.out).toBe(0);
    const replayed = readFileSync(join(dir, 'answers.log'), 'utf8').trim().split('\n').pop();
    // Replay serves the answer the last watch run saw, not the first's.
    expect(replayed).toBe(recorded[2]!.replace(/^record /, 'replay '));
    expect(r.out).toContain('1 replayed, 0 misses, 0 unused recordings');
  });
});
