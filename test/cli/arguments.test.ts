// How the command line takes what it is given: `--` ends the options of every command (`tapedeck
// verify -- -weird.tape` was "Unknown option --."), a UTF-8 byte order mark before JSON is skipped
// by key, canonical, hash and paths as import and add skip it (they said "Invalid JSON at byte 0"
// pointing at an invisible character), and a path Node.js could not decode (not UTF-8) is refused
// by name instead of being reported missing, or written under another name than the one printed.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dashValues, unspellableArgument } from '../../src/cli-args.ts';
import { appendRecords, createTape } from '../../src/store/tape-file.ts';
import { chatRecord } from './cli-helpers.ts';

const bin = join(import.meta.dirname, '../../dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-arguments-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const env = { ...process.env, TAPEDECK_MODE: '' };
const cli = (...args: string[]) => spawnSync(process.execPath, [bin, ...args], { cwd: dir, encoding: 'utf8', env });
/** The CLI under sh, for arguments spawn cannot pass (bytes that are not UTF-8): `script` uses "$0" as the CLI's node, "$1" as the CLI. */
const sh = (script: string) => spawnSync('sh', ['-c', script, process.execPath, bin], { cwd: dir, encoding: 'utf8', env });

const REQUEST = '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}';
const BOM = '\uFEFF';

beforeAll(async () => {
  await createTape(join(dir, 'ok.tape'));
  await appendRecords(join(dir, 'ok.tape'), [chatRecord(0)]);
  copyFileSync(join(dir, 'ok.tape'), join(dir, '-weird.tape'));
  writeFileSync(join(dir, 'plain.json'), REQUEST);
  writeFileSync(join(dir, 'bom.json'), BOM + REQUEST);
  writeFileSync(join(dir, '-dash.json'), REQUEST);
  writeFileSync(join(dir, 'bom-bad.json'), `${BOM}{"a":1,}`);
});

describe('a UTF-8 byte order mark before the JSON is skipped', () => {
  it.each(['key', 'canonical', 'hash', 'paths'])('tapedeck %s: the same output as without it, exit 0', (cmd) => {
    const plain = cli(cmd, 'plain.json');
    const bom = cli(cmd, 'bom.json');
    expect(bom.stderr).toBe('');
    expect(bom.status).toBe(0);
    expect(bom.stdout).toBe(plain.stdout);
  });

  it('from stdin too', () => {
    const r = spawnSync(process.execPath, [bin, 'hash'], { cwd: dir, encoding: 'utf8', input: BOM + REQUEST });
    expect(r.stdout).toBe(cli('hash', 'plain.json').stdout);
  });

  it('an error after it names the file\'s own byte (the mark counts), not byte 0', () => {
    const r = cli('canonical', 'bom-bad.json');
    expect(r.stderr).toMatch(/^tapedeck: E_JSON Invalid JSON at byte 10 /);
    expect(r.status).toBe(1);
  });
});

describe('-- ends the options', () => {
  it.each([
    { args: ['verify', '--', '-weird.tape'], out: /^-weird\.tape: format 1/ },
    { args: ['inspect', '--', '-weird.tape'], out: /^#\toffset/ },
    { args: ['export', '--', '-weird.tape'], out: /^\{/ },
    { args: ['canonical', '--', '-dash.json'], out: /^\{"messages"/ },
    { args: ['hash', '--', '-dash.json'], out: /^[0-9a-f]{64}\n$/ },
    { args: ['key', '--', '-dash.json'], out: /^provider\topenai-chat/ },
    { args: ['paths', '--', '-dash.json'], out: /^0\t/ },
    { args: ['merge', '--', '-weird.tape', '-weird.tape', '-weird.tape'], out: /^tapedeck merge -weird\.tape: / },
    { args: ['help', '--', 'export'], out: /^Usage: tapedeck export/ },
  ].map((c) => ({ ...c, line: c.args.join(' ') })))('tapedeck $line', ({ args, out }) => {
    const r = cli(...args);
    expect(r.stderr).not.toContain('Unknown option');
    expect(r.stderr).not.toContain('takes no option');
    expect(r.stdout).toMatch(out);
  });

  it('the words after it are arguments: a file named --help is a tape to verify, not the help', () => {
    const r = cli('verify', '--', '--help');
    expect(r.stderr).toMatch(/^tapedeck: E_TAPE_NOT_FOUND Tape --help does not exist/);
    expect(r.status).toBe(1);
  });

  it('import takes its input and tape after it', () => {
    const r = cli('import', '--force', '--', '-weird.tape.json', '-out.tape');
    expect(r.stderr).not.toContain('Unknown option');
    expect(r.stderr).toMatch(/No such file or directory: -weird\.tape\.json/);
  });

  it('the parsers of serve, tree, diff and the rest leave the words after it alone (no --flag=-5 made of two arguments)', () => {
    const options = { width: { type: 'string' } };
    expect(dashValues(['x.tape', '--width', '-5'], options)).toEqual(['x.tape', '--width=-5']);
    expect(dashValues(['--', '--width', '-5'], options)).toEqual(['--', '--width', '-5']);
  });

  it('an option after it is not taken as one (a too-many argument instead)', () => {
    const r = cli('inspect', 'ok.tape', '--', '--force');
    expect(r.stderr).toMatch(/^tapedeck: E_USAGE inspect takes one tape; "--force" is one argument too many/);
    expect(r.status).toBe(2);
  });
});

describe('a path that is not UTF-8', () => {
  beforeAll(() => {
    mkdirSync(join(dir, 'nu'));
    // The file made by the shell, so its name holds the Latin-1 byte é (0xe9) as it is.
    const r = sh(`cp ok.tape "nu/$(printf 'caf\\351.tape')"`);
    expect(r.status).toBe(0);
  });

  it('an existing tape is refused as a name that cannot be spelt, not as missing (E_TAPE_NOT_FOUND)', () => {
    const r = sh(`"$0" "$1" verify "nu/$(printf 'caf\\351.tape')"`);
    expect(r.stderr).toMatch(/^tapedeck: E_FILE The path "nu\/caf\uFFFD\.tape" is not valid UTF-8/);
    expect(r.stderr).toContain('hint: Rename the file to a UTF-8 name (mv nu/caf?.tape nu/caf_.tape)');
    expect(r.stderr).not.toContain('E_TAPE_NOT_FOUND');
    expect(r.status).toBe(1);
  });

  it('import writes no tape under a name other than the one given', () => {
    const r = sh(`"$0" "$1" import plain.json "nu/$(printf 'out\\351.tape')"`);
    expect(r.stderr).toMatch(/^tapedeck: E_FILE The path "nu\/out\uFFFD\.tape" is not valid UTF-8/);
    expect(r.status).toBe(1);
    expect(readdirSync(join(dir, 'nu')).filter((n) => n.startsWith('out'))).toEqual([]);
  });

  it('a name that really holds U+FFFD, and exists, is read as given', () => {
    copyFileSync(join(dir, 'ok.tape'), join(dir, 'nu', 'real\uFFFD.tape'));
    const r = cli('verify', join('nu', 'real\uFFFD.tape'));
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it('--flag=value is looked at by its value; a word that names a file is kept', () => {
    const exists = (p: string) => p === 'real\uFFFD.tape';
    expect(unspellableArgument(['import', 'a.json', '--out=x\uFFFD.tape'], exists)).toBe('x\uFFFD.tape');
    expect(unspellableArgument(['serve', '--tape=real\uFFFD.tape'], exists)).toBeUndefined();
    expect(unspellableArgument(['verify', 'real\uFFFD.tape'], exists)).toBeUndefined();
    expect(unspellableArgument(['verify', 'cafe.tape'], () => false)).toBeUndefined();
  });
});
