// Input the CLI reads whole is bounded while it is read, whatever the file is. The limit used to
// come from the size stat gives, which is 0 for a pipe or a device: `tapedeck hash /dev/zero`,
// `yes '{"a":1}' | tapedeck canonical /dev/stdin` and `tapedeck import /dev/zero x.tape --from
// har` grew to gigabytes. Each now stops one byte past its limit with E_TOO_LARGE naming the file,
// the limit and the fix. (Each run is capped at 1.5 GB of address space and 60 s, so a regression
// fails here instead of taking the machine's memory.)
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, ftruncateSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendRecords, createTape } from '../../src/store/tape-file.ts';
import { chatRecord } from './cli-helpers.ts';

const bin = join(import.meta.dirname, '../../dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-bounded-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `tapedeck <args>` under a shell (stdin piped from the shell command `feed`), capped in memory and time. */
function capped(args: string[], feed?: string): { status: number | null; stderr: string } {
  const run = `ulimit -v 1500000; ${feed ? `${feed} | ` : ''}exec "$0" "$@"`;
  const r = spawnSync('sh', ['-c', run, process.execPath, bin, ...args], { cwd: dir, encoding: 'utf8', timeout: 60_000, env: { ...process.env, TAPEDECK_MODE: '' } });
  return { status: r.status, stderr: r.stderr };
}

const ONE_LINE = /^tapedeck: E_TOO_LARGE [^\n]+\nhint: [^\n]+\n$/;

beforeAll(async () => {
  await createTape(join(dir, 'ok.tape'));
  await appendRecords(join(dir, 'ok.tape'), [chatRecord(0)]);
  // 100 MB of zeros without writing them: a regular file over the limit.
  const fd = openSync(join(dir, 'big.json'), 'w');
  ftruncateSync(fd, 100_000_000);
  closeSync(fd);
});

describe('a pipe or a device given as a path is read only up to the limit', () => {
  it.each([
    { args: ['hash', '/dev/zero'], feed: undefined, file: '/dev/zero' },
    { args: ['canonical', '/dev/zero'], feed: undefined, file: '/dev/zero' },
    { args: ['key', '/dev/zero'], feed: undefined, file: '/dev/zero' },
    { args: ['paths', '/dev/stdin'], feed: `yes '{"a":1}'`, file: '/dev/stdin' },
    { args: ['canonical', '/dev/stdin'], feed: `yes '{"a":1}'`, file: '/dev/stdin' },
  ].map((c) => ({ ...c, line: c.args.join(' ') })))('tapedeck $line: E_TOO_LARGE naming the file and 64 MiB, exit 1', ({ args, feed, file }) => {
    const r = capped(args, feed);
    expect(r.stderr).toMatch(ONE_LINE);
    expect(r.stderr).toContain(`E_TOO_LARGE ${file} holds more than 64 MiB (67108864 bytes)`);
    expect(r.stderr).toContain('hint: Give a JSON document of at most 64 MiB');
    expect(r.status).toBe(1);
  });

  it('stdin itself says the same (it always stopped at the core; now while reading, naming stdin)', () => {
    const r = capped(['canonical'], 'head -c 100000000 /dev/zero');
    expect(r.stderr).toMatch(ONE_LINE);
    expect(r.stderr).toContain('E_TOO_LARGE stdin holds more than 64 MiB');
    expect(r.status).toBe(1);
  });

  it('a regular file over the limit is refused before it is read, by name', () => {
    const r = capped(['hash', 'big.json']);
    expect(r.stderr).toMatch(ONE_LINE);
    expect(r.stderr).toContain('E_TOO_LARGE big.json holds more than 64 MiB');
    expect(r.status).toBe(1);
  });

  it.each([
    { args: ['import', '/dev/zero', 'x.tape', '--from', 'har'], file: '/dev/zero', what: 'the most tapedeck import reads from a pipe or device' },
    { args: ['import', '/dev/zero', 'x.tape', '--from', 'vcr'], file: '/dev/zero', what: 'the most tapedeck import reads from a pipe or device' },
    { args: ['import', '/dev/zero', 'x.tape'], file: '/dev/zero', what: 'the most tapedeck reads as one JSON document' },
  ].map((c) => ({ ...c, line: c.args.join(' ') })))('tapedeck $line: E_TOO_LARGE, no tape written', ({ args, file, what }) => {
    const r = capped(args);
    expect(r.stderr).toMatch(ONE_LINE);
    expect(r.stderr).toContain(`E_TOO_LARGE ${file} holds more than 64 MiB (67108864 bytes), ${what}`);
    expect(r.status).toBe(1);
    expect(existsSync(join(dir, 'x.tape'))).toBe(false);
  });

  it('import from stdin: at most 64 MiB, with the fix (a file is read whatever its size)', () => {
    const r = capped(['import', '-', 'x.tape', '--from', 'vcr'], 'yes');
    expect(r.stderr).toMatch(ONE_LINE);
    expect(r.stderr).toContain('E_TOO_LARGE stdin holds more than 64 MiB');
    expect(r.stderr).toContain('hint: Save it to a file and import the file');
    expect(r.status).toBe(1);
  });

  it('add bounds a device too, and writes no tape', () => {
    const r = capped(['add', 'added.tape', '/dev/zero']);
    expect(r.stderr).toMatch(ONE_LINE);
    expect(r.stderr).toContain('E_TOO_LARGE /dev/zero holds more than 64 MiB');
    expect(r.status).toBe(1);
    expect(existsSync(join(dir, 'added.tape'))).toBe(false);
  });

  it('merge and stats --prices bound a device too', () => {
    const merge = capped(['merge', '/dev/zero', 'ok.tape', 'ok.tape']);
    expect(merge.stderr).toMatch(ONE_LINE);
    expect(merge.stderr).toContain('E_TOO_LARGE /dev/zero holds more than 64 MiB');
    expect(merge.status).toBe(1);
    const prices = capped(['stats', 'ok.tape', '--prices', '/dev/zero']);
    expect(prices.stderr).toMatch(ONE_LINE);
    expect(prices.stderr).toContain('E_TOO_LARGE /dev/zero holds more than 64 MiB');
    // stats: 2 for bad input (its own table).
    expect(prices.status).toBe(2);
  });

  it('input under the limit and at it still reads; a tape is read as before', () => {
    writeFileSync(join(dir, 'small.json'), '{"b":1,"a":2}');
    const r = spawnSync(process.execPath, [bin, 'canonical', 'small.json'], { cwd: dir, encoding: 'utf8' });
    expect(r.stdout).toBe('{"a":2,"b":1}\n');
    const piped = spawnSync('sh', ['-c', `printf '{"b":1,"a":2}' | "$0" "$@"`, process.execPath, bin, 'canonical', '/dev/stdin'], { cwd: dir, encoding: 'utf8' });
    expect(piped.stdout).toBe('{"a":2,"b":1}\n');
    // Exactly 64 MiB from a pipe given as a path: read whole (one byte more is past the limit).
    const atLimit = `{ head -c ${64 * 1024 * 1024 - 1} /dev/zero | tr '\\0' ' '; printf 1; } | "$0" "$@"`;
    const full = spawnSync('sh', ['-c', atLimit, process.execPath, bin, 'canonical', '/dev/stdin'], { cwd: dir, encoding: 'utf8' });
    expect(full.stderr).toBe('');
    expect(full.stdout).toBe('1\n');
    expect(spawnSync(process.execPath, [bin, 'verify', 'ok.tape'], { cwd: dir, encoding: 'utf8' }).status).toBe(0);
  });
});
