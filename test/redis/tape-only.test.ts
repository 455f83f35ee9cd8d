// Commands that read a tape file only, given a Redis store URL: E_ARG saying so and how to get a
// tape from the store (tapedeck pull), the password masked; not a "tape not found".
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { redisDescribe } from './setup.ts';

const CLI = join(import.meta.dirname, '../../dist/cli.js');
const URL = 'redis://app:t0-secret@127.0.0.1:1/0?namespace=p1';

redisDescribe('tape-only commands given a Redis URL', () => {
  // merge too: it took the URL for a tape path. The pull named is the user's own namespace.
  const cases: string[][] = [['inspect', URL], ['export', URL], ['tree', URL], ['rerecord', URL], ['stats', URL], ['diff', URL, URL], ['scan', URL], ['merge', URL, URL, URL]];
  for (const args of cases) {
    it.skipIf(!existsSync(CLI))(`tapedeck ${args[0]}`, () => {
      const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 20_000 });
      expect(r.status).toBe(2);
      expect(r.stderr).toContain(`tapedeck: E_ARG tapedeck ${args[0]} takes a tape file, not a Redis store (redis://app:***@127.0.0.1:1/0?namespace=p1).`);
      expect(r.stderr).toContain(`hint: For a Redis store run tapedeck pull 'redis://app:<password>@127.0.0.1:1/0' file.tape --namespace p1 first`);
      expect(r.stdout + r.stderr).not.toContain('t0-secret');
    });
  }

  it.skipIf(!existsSync(CLI))('the namespace given by --namespace is the one the pull names', () => {
    const r = spawnSync(process.execPath, [CLI, 'inspect', 'redis://127.0.0.1:1/0', '--namespace', 'given'], { encoding: 'utf8', timeout: 20_000 });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`hint: For a Redis store run tapedeck pull 'redis://127.0.0.1:1/0' file.tape --namespace given first, then tapedeck inspect file.tape.`);
  });

  // import wrote a local file named after the URL and said it wrote the store: refused, with
  // how to get the recordings into the store (write a tape, push it).
  const dir = mkdtempSync(join(tmpdir(), 'tapedeck-tape-only-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  for (const args of [['import', 'in.json', URL]]) {
    it.skipIf(!existsSync(CLI))(`tapedeck ${args[0]} writes no local file named after the URL`, () => {
      writeFileSync(join(dir, 'in.json'), JSON.stringify({ header: { v: 1 }, records: [] }));
      const r = spawnSync(process.execPath, [CLI, ...args], { cwd: dir, encoding: 'utf8', timeout: 20_000 });
      expect(r.status).toBe(2);
      expect(r.stderr).toContain(`tapedeck: E_ARG tapedeck ${args[0]} takes a tape file, not a Redis store (redis://app:***@127.0.0.1:1/0?namespace=p1).`);
      expect(r.stderr).toContain(`then tapedeck push file.tape 'redis://app:<password>@127.0.0.1:1/0' --namespace p1 (put the store's password in place of <password>).`);
      expect(r.stdout + r.stderr).not.toContain('t0-secret');
      expect(readdirSync(dir)).toEqual(['in.json']);
    });
  }
});
