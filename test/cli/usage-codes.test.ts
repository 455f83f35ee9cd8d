// The same kind of command-line mistake got a different code, or exit code, depending on the
// command: a missing argument was E_USAGE for verify and export but E_ARG for add, push and pull;
// an unknown option E_USAGE for tree but E_ARG for init, serve, add, push and pull; and --chaos
// in record mode, two flags that do not go together, exited 1 ("bad input") where --tape beside
// --store exits 2; a bad option value was E_ARG for serve but E_USAGE for mcp. Now: E_USAGE for
// the words of the command line (an unknown command or option, a missing argument), E_ARG for a
// value, and exit 2 for every mistake on the command line (docs/api.md, "Exit codes").
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli-errors.ts';

const bin = join(import.meta.dirname, '../../dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-usage-codes-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const cli = (...args: string[]) => spawnSync(process.execPath, [bin, ...args], { cwd: dir, encoding: 'utf8', timeout: 30_000, env: { ...process.env, TAPEDECK_MODE: '', GIT_CEILING_DIRECTORIES: tmpdir() } });
const codeOf = (stderr: string) => /^tapedeck: (E_[A-Z_]+) /.exec(stderr)?.[1];

describe.skipIf(!existsSync(bin))('one code and one exit code per kind of command-line mistake', () => {
  it.each([['verify'], ['export'], ['add'], ['add', 'a.tape'], ['push'], ['push', 'a.tape'], ['pull'], ['pull', 'redis://127.0.0.1:1/0']])('a missing argument: tapedeck %s', (...args) => {
    const r = cli(...args);
    expect(codeOf(r.stderr)).toBe('E_USAGE');
    expect(r.status).toBe(EXIT.usage);
  });

  it.each([['init', '--bogus'], ['tree', 'a.tape', '--bogus'], ['add', 'a.tape', 'a.json', '--bogus'], ['push', 'a.tape', 'redis://127.0.0.1:1/0', '--bogus'], ['pull', 'redis://127.0.0.1:1/0', 'a.tape', '--bogus'], ['serve', '--bogus'], ['export', 'a.tape', '--bogus']])(
    'an unknown option: tapedeck %s',
    (...args) => {
      const r = cli(...args);
      expect(codeOf(r.stderr)).toBe('E_USAGE');
      expect(r.stderr).toContain('Unknown option --bogus.');
      expect(r.status).toBe(EXIT.usage);
    },
  );

  it.each([['serve', '--port', 'x'], ['mcp', '--tape', 'x.tape', '--timeout', 'abc'], ['mcp', '--tape', 'x.tape', '--timing', 'slow'], ['tree', 'a.tape', '--width', 'wide'], ['push', 'a.tape', 'redis://127.0.0.1:1/0', '--ttl', 'abc']])(
    'a bad option value: tapedeck %s',
    (...args) => {
      const r = cli(...args);
      expect(codeOf(r.stderr)).toBe('E_ARG');
      expect(r.status).toBe(EXIT.usage);
    },
  );

  it('flags that do not go together are usage, exit 2: --chaos in record mode as --tape beside --store', () => {
    const chaos = cli('serve', '--upstream', 'http://127.0.0.1:9', '--tape', 'c.tape', '--port', '0', '--mode', 'record', '--chaos', '429:0.5');
    expect(codeOf(chaos.stderr)).toBe('E_CHAOS_MODE');
    expect(chaos.status).toBe(EXIT.usage);
    const store = cli('serve', '--upstream', 'http://127.0.0.1:9', '--tape', 'c.tape', '--store', 'redis://127.0.0.1:1', '--port', '0');
    expect(codeOf(store.stderr)).toBe('E_ARG');
    expect(store.status).toBe(EXIT.usage);
  });
});
