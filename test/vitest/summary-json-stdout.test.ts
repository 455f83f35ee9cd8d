// `vitest --reporter=json` and `jest --json` print a machine-readable report on stdout, which CI
// steps parse (test-result upload, annotations). The tapedeck run summary was printed on stdout
// too, and the report no longer parsed. Now, beside such a report, it goes to stderr: stdout
// parses, and the summary is still shown. The runners really run, stdout read apart.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { upstreamSuite } from '../proxy/upstream-suite.ts';
import { runnerProject } from './runner-project.ts';

const suite = upstreamSuite('summary-json-stdout');
const dist = join(import.meta.dirname, '..', '..', 'dist', 'testing');

/** A command through a shell with a clean environment; stdout and stderr apart. */
function run(command: string, cwd: string, env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined || /^(VITEST|TAPEDECK_|CI$|NODE_ENV$|NODE_OPTIONS$|JEST_WORKER_ID$)/.test(k)) continue;
    base[k] = v;
  }
  base.PATH = `${dirname(process.execPath)}${delimiter}${base.PATH ?? ''}`;
  const child = spawn('/bin/sh', ['-c', command], { cwd, env: { ...base, NO_COLOR: '1', FORCE_COLOR: '0', ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

const body = (name: string) => `JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: '${name}' }] })`;

describe('the run summary beside a JSON report on stdout', () => {
  it('vitest --reporter=json: stdout parses, the summary is on stderr', { timeout: 120_000 }, async () => {
    const dir = runnerProject(suite.dir, 'vitest-json', {
      'vitest.config.mjs': `import { defineConfig } from 'vitest/config';\nimport { tapedeck } from 'llm-tapedeck/vitest/plugin';\nexport default defineConfig({ plugins: [tapedeck({ drift: false })] });\n`,
      'chat.test.mjs': `import { test, expect } from 'llm-tapedeck/vitest';\ntest('asks', async ({ tape }) => {\n  const r = await tape.fetch(process.env.UPSTREAM + '/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: ${body('hi')} });\n  expect(r.status).toBe(200);\n});\n`,
    });
    const r = await run('npx vitest run --reporter=json', dir, { UPSTREAM: suite.upstream.url, TAPEDECK_MODE: 'record' });
    expect(r.code, r.stderr).toBe(0);
    expect(() => JSON.parse(r.stdout), r.stdout).not.toThrow();
    expect(r.stderr).toContain('tapedeck: 1 tape, 1 written, 1 recording added');
  });

  it('jest --json with the reporter: stdout parses, the summary is on stderr', { timeout: 120_000 }, async () => {
    const dir = runnerProject(suite.dir, 'jest-json', {});
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'jest-json', private: true }));
    writeFileSync(join(dir, 'jest.config.js'), `module.exports = { setupFilesAfterEnv: [${JSON.stringify(join(dist, 'jest.cjs'))}], reporters: ['default', ${JSON.stringify(join(dist, 'jest-reporter.cjs'))}] };\n`);
    writeFileSync(join(dir, 'chat.test.js'), `const { tape } = require(${JSON.stringify(join(dist, 'jest.cjs'))});\ntest('asks', async () => {\n  const r = await tape().fetch(process.env.UPSTREAM + '/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: ${body('hi')} });\n  expect(r.status).toBe(200);\n});\n`);
    const r = await run('npx jest --json', dir, { UPSTREAM: suite.upstream.url, TAPEDECK_MODE: 'record' });
    expect(r.code, r.stderr).toBe(0);
    expect(() => JSON.parse(r.stdout), r.stdout).not.toThrow();
    expect(r.stderr).toContain('tapedeck: 1 tape, 1 written, 1 recording added');
  });
});
