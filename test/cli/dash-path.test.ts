// A tape or JSON file whose name starts with a dash, given as it is, was "Unknown option
// -old.tape" (or, for the commands parsed by node:util, "Unknown option -o", a letter of it),
// with a hint to read --help, which does not say how to give such a name. Now the error names the
// word and the two ways that work: ./-old.tape, or after -- (which ends the options).
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendRecords, createTape } from '../../src/store/tape-file.ts';
import { chatRecord } from './cli-helpers.ts';

const bin = join(import.meta.dirname, '../../dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-dash-path-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const cli = (...args: string[]) => spawnSync(process.execPath, [bin, ...args], { cwd: dir, encoding: 'utf8', timeout: 30_000, env: { ...process.env, TAPEDECK_MODE: '' } });

beforeAll(async () => {
  await createTape(join(dir, 'ok.tape'));
  await appendRecords(join(dir, 'ok.tape'), [chatRecord(0)]);
  copyFileSync(join(dir, 'ok.tape'), join(dir, '-old.tape'));
  writeFileSync(join(dir, '-lead.json'), '{"a":1}');
  writeFileSync(join(dir, 'lead.json'), '{"a":1}');
});

describe.skipIf(!existsSync(bin))('a path that starts with a dash', () => {
  it.each([
    ['verify', '-old.tape'],
    ['inspect', '-old.tape'],
    ['tree', '-old.tape'],
    ['scan', '-old.tape'],
    ['hash', '-lead.json'],
  ])('tapedeck %s %s: named whole, with ./ and -- to give it; both work', (cmd, word) => {
    const r = cli(cmd, word);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(new RegExp(`^tapedeck: E_USAGE (?:${cmd}: )?Unknown option ${word.replace('.', '\\.')}\\.\\n`));
    expect(r.stderr).toContain(`./${word}`);
    expect(r.stderr).toContain(`tapedeck ${cmd} -- ${word}`);
    // Each way reads the file as the same file under a plain name is read.
    const plain = cli(cmd, word === '-old.tape' ? 'ok.tape' : 'lead.json');
    for (const args of [[cmd, `./${word}`], [cmd, '--', word]]) {
      const ok = cli(...args);
      expect(ok.stderr, args.join(' ')).not.toContain('Unknown option');
      expect(ok.status, args.join(' ')).toBe(plain.status);
      expect(ok.stdout.replaceAll(`./${word}`, word), args.join(' ')).toBe(plain.stdout.replaceAll(word === '-old.tape' ? 'ok.tape' : 'lead.json', word));
    }
  });

  it('a negative number given to a flag is still that flag\'s value, not a path', () => {
    const r = cli('serve', '--tape', 'ok.tape', '--port', '-5');
    expect(r.stderr).toContain('Invalid --port "-5"');
    expect(r.stderr).not.toContain('./-5');
  });
});
