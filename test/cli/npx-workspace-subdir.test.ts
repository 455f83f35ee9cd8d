// `npx tapedeck …` from a folder inside a package of an npm workspace: npm runs the command in
// the package's folder and passes the folder the user typed it in as INIT_CWD, so relative paths
// were read against the wrong folder ("does not exist" for a tape `ls` shows) and tapes were
// written where the user did not look. The command now works from the folder it was typed in;
// `npm run` scripts, which npm runs in the package folder on purpose, are left as they are. The
// real npx runs on a workspace whose node_modules/.bin/tapedeck is this checkout's CLI (dist/).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { npmExecDirectory } from '../../src/cli/npm-exec-dir.ts';
import { appendRecords, createTape } from '../../src/store/tape-file.ts';
import { chatRecord } from './cli-helpers.ts';

const root = join(import.meta.dirname, '..', '..');
const ws = mkdtempSync(join(tmpdir(), 'tapedeck-npx-workspace-'));
const pkg = join(ws, 'packages', 'a');
const sub = join(pkg, 'test');
afterAll(() => rmSync(ws, { recursive: true, force: true }));

beforeAll(async () => {
  mkdirSync(join(sub, '__tapes__'), { recursive: true });
  mkdirSync(join(ws, 'node_modules', '.bin'), { recursive: true });
  // What npm install makes of the package's bin: an executable that runs dist/cli.js.
  writeFileSync(join(ws, 'node_modules', '.bin', 'tapedeck'), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(join(root, 'dist', 'cli.js'))} "$@"\n`, { mode: 0o755 });
  writeFileSync(join(ws, 'package.json'), JSON.stringify({ name: 'ws', private: true, workspaces: ['packages/*'] }));
  writeFileSync(join(pkg, 'package.json'), JSON.stringify({ name: 'a', version: '1.0.0', scripts: { 'check-tape': 'tapedeck verify test/__tapes__/chat.tape' } }));
  await createTape(join(sub, '__tapes__', 'chat.tape'));
  await appendRecords(join(sub, '__tapes__', 'chat.tape'), [chatRecord(0)]);
});

/** A command line through a shell in `cwd`, as a user types it (npm's own variables left out). */
function sh(command: string, cwd: string): Promise<{ code: number | null; out: string }> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !/^(npm_|INIT_CWD$|TAPEDECK_|VITEST|NODE_OPTIONS$)/i.test(k)) env[k] = v;
  env.PATH = `${join(process.execPath, '..')}:${env.PATH ?? ''}`;
  const child = spawn('/bin/sh', ['-c', command], { cwd, env });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, out })));
}

describe('npx tapedeck in a sub-folder of an npm workspace package', () => {
  it('reads a tape by a path relative to the folder it was typed in', { timeout: 60_000 }, async () => {
    const r = await sh('npx --offline tapedeck inspect __tapes__/chat.tape', sub);
    expect(r.out).not.toContain('does not exist');
    expect(r.code, r.out).toBe(0);
    expect(r.out).toContain('question 0');
  });

  it('writes a tape where the user is', { timeout: 60_000 }, async () => {
    const r = await sh('npx --offline tapedeck export __tapes__/chat.tape > exported.json && npx --offline tapedeck import exported.json copied.tape', sub);
    expect(r.code, r.out).toBe(0);
    expect(existsSync(join(sub, 'copied.tape'))).toBe(true);
    expect(existsSync(join(pkg, 'copied.tape'))).toBe(false);
  });

  it('an npm run script still runs from its package folder', { timeout: 60_000 }, async () => {
    const r = await sh('npm run --silent check-tape', sub);
    expect(r.code, r.out).toBe(0);
    expect(r.out).not.toContain('does not exist');
  });

  it('only npx moving the command up out of the folder it was typed in is undone', () => {
    expect(npmExecDirectory({ npm_command: 'exec', INIT_CWD: sub }, pkg)).toBe(sub);
    // npm exec -w a from the workspace root: run in the workspace's folder, as npm means.
    expect(npmExecDirectory({ npm_command: 'exec', INIT_CWD: ws }, pkg)).toBeUndefined();
    expect(npmExecDirectory({ npm_command: 'exec', INIT_CWD: pkg }, pkg)).toBeUndefined();
    expect(npmExecDirectory({ npm_command: 'run-script', INIT_CWD: sub }, pkg)).toBeUndefined();
    expect(npmExecDirectory({ npm_command: 'exec', INIT_CWD: join(ws, 'packages', 'ab') }, pkg)).toBeUndefined();
    expect(npmExecDirectory({ npm_command: 'exec' }, pkg)).toBeUndefined();
  });
});
