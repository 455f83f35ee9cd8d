// `tapedeck serve --store` takes a Redis URL and nothing else: a mistyped URL must not become a
// tape file in the working directory (a CI fleet would record into files no other worker sees,
// or replay nothing but misses), and --tape beside --store must not be silently ignored.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { serveOptions } from '../../src/proxy/cli.ts';

const CLI = join(import.meta.dirname, '../../dist/cli.js');
const cwd = mkdtempSync(join(tmpdir(), 'tapedeck-serve-store-'));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));
// A serve that wrongly starts would run until killed: the timeout turns that into a failure.
const serve = (args: string[]) => spawnSync(process.execPath, [CLI, 'serve', '--port', '0', ...args], { cwd, encoding: 'utf8', timeout: 10_000, killSignal: 'SIGKILL' });

describe('tapedeck serve --store', () => {
  it.skipIf(!existsSync(CLI))('a --store that is no redis:// URL is a usage error (exit 2), and no tape file is made from it', () => {
    for (const store of ['redis:/127.0.0.1:6379/0', 'http://app:s3cret-pw@127.0.0.1:6379/0', 'valkey://127.0.0.1:6379']) {
      const r = serve(['--store', store, '--mode', 'record', '--upstream', 'http://127.0.0.1:9']);
      expect(r.status, r.stderr).toBe(2);
      expect(r.stderr).toContain('tapedeck: E_ARG --store');
      expect(r.stderr).toContain('is not a redis:// or rediss:// URL');
      expect(r.stderr).toContain('--tape FILE');
      expect(r.stderr).not.toContain('s3cret-pw');
    }
    expect(readdirSync(cwd)).toEqual([]);
  });

  it.skipIf(!existsSync(CLI))('--tape and --store together is a usage error naming both, not one of them ignored', () => {
    const r = serve(['--tape', 'local.tape', '--store', 'redis://app:s3cret-pw@127.0.0.1:1/0']);
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).toContain('tapedeck: E_ARG --tape local.tape and --store redis://app:***@127.0.0.1:1/0');
    expect(r.stderr).toMatch(/hint: .*not both/);
    expect(r.stderr).not.toContain('s3cret-pw');
  });

  it('serveOptions refuses them with E_ARG and keeps a redis:// or rediss:// store', () => {
    expect(() => serveOptions(['--store', 'redis:/h:6379'])).toThrow(expect.objectContaining({ code: 'E_ARG' }));
    expect(() => serveOptions(['--tape', 'a.tape', '--store', 'redis://h:6379/0'])).toThrow(expect.objectContaining({ code: 'E_ARG' }));
    expect(serveOptions(['--store', 'redis://h:6379/0?namespace=ci']).store).toBe('redis://h:6379/0?namespace=ci');
    expect(serveOptions(['--store', 'REDISS://h:6380/0']).store).toBe('REDISS://h:6380/0');
    expect(serveOptions(['--tape', 'a.tape']).tape).toBe('a.tape');
  });
});
