// The exit codes are stated twice, in `tapedeck --help` and in docs/api.md's CLI table, and the two
// had drifted: the help put "the reader stops early (| head)" under code 1 while the docs (and
// the behaviour) say 0, and only rerecord's own help said it exits 3. Both now come from one
// table (EXIT_CODE_TABLE, EXIT_CODE_NOTES in src/cli-errors.ts), which this suite holds the docs
// and the help to; and the codes the commands give are the table's (init outside a git
// repository is bad input, 1, not usage).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EXIT, EXIT_CODE_NOTES, EXIT_CODE_TABLE, exitCodesHelp } from '../../src/cli-errors.ts';

const root = join(import.meta.dirname, '../..');
const bin = join(root, 'dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-exit-codes-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const cli = (...args: string[]) => spawnSync(process.execPath, [bin, ...args], { cwd: dir, encoding: 'utf8', env: { ...process.env, TAPEDECK_MODE: '', GIT_CEILING_DIRECTORIES: tmpdir() } });

/** Markdown as plain text: no backticks, links as their text, `\|` as `|`, one space between words. */
const plain = (md: string): string =>
  md
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`/g, '')
    .replace(/\\\|/g, '|')
    .replace(/\s+/g, ' ')
    .trim();
const words = (text: string): string => text.replace(/\s+/g, ' ').trim();

/** docs/api.md's CLI section: the exit code table's rows (code -> meaning) and the text after it. */
function docsExitCodes(): { rows: Map<number, string>; after: string } {
  const md = readFileSync(join(root, 'docs/api.md'), 'utf8');
  const cli = md.slice(md.indexOf('\n## CLI'));
  const table = cli.slice(cli.indexOf('| Code | Meaning |'));
  const rows = new Map<number, string>();
  const lines = table.split('\n');
  let i = 2;
  for (; i < lines.length && lines[i]!.startsWith('|'); i++) {
    const m = /^\| (\d+) \| (.*) \|$/.exec(lines[i]!);
    expect(m, lines[i]).not.toBeNull();
    rows.set(Number(m![1]), plain(m![2]!));
  }
  return { rows, after: plain(lines.slice(i).join('\n').split('\n## ')[0]!) };
}

describe('one truth for the exit codes', () => {
  it('docs/api.md has the table row for row, and the notes after it', () => {
    const { rows, after } = docsExitCodes();
    expect([...rows.keys()]).toEqual(EXIT_CODE_TABLE.map(([code]) => code));
    for (const [code, meaning] of EXIT_CODE_TABLE) expect(rows.get(code), `code ${code}`).toBe(meaning);
    for (const note of EXIT_CODE_NOTES) expect(after).toContain(note);
  });

  it('tapedeck --help prints the same table and notes', () => {
    const r = cli('--help');
    expect(r.status).toBe(0);
    const section = r.stdout.slice(r.stdout.indexOf('Exit codes:\n') + 'Exit codes:\n'.length, r.stdout.indexOf('\nErrors are one line'));
    expect(section.trimEnd()).toBe(exitCodesHelp());
    for (const [code, meaning] of EXIT_CODE_TABLE) expect(words(section)).toContain(`${code} ${meaning}`);
    for (const note of EXIT_CODE_NOTES) expect(words(section)).toContain(note);
  });

  it('every code of EXIT is in the table; a stopped reader is no failure, and rerecord has its 3', () => {
    expect(EXIT_CODE_TABLE.map(([code]) => code).sort((a, b) => a - b)).toEqual(Object.values(EXIT).sort((a, b) => a - b));
    const failed = EXIT_CODE_TABLE.find(([code]) => code === EXIT.failed)![1];
    expect(failed).not.toMatch(/head|reader/);
    expect(EXIT_CODE_NOTES.join(' ')).toMatch(/stops early \(\| head\) changes no exit code/);
    expect(EXIT_CODE_NOTES.join(' ')).toMatch(/3 rerecord/);
    const help = words(cli('--help').stdout);
    expect(help).not.toContain('the same when the reader stops early');
    expect(help).toContain('3 rerecord stopped by its budget or with calls not recorded');
  });
});

describe('the codes the commands give are the table', () => {
  it('tapedeck init outside a git repository: bad input (E_GIT, exit 1), not usage (exit 2)', () => {
    const r = cli('init');
    expect(r.stderr).toMatch(/^tapedeck: E_GIT \S+ is not inside a git repository\.\nhint: /);
    expect(r.status).toBe(EXIT.failed);
  });

  it('tapedeck init with an unknown option: usage, exit 2', () => {
    const r = cli('init', '--bogus');
    expect(r.stderr).toMatch(/^tapedeck: E_USAGE Unknown option --bogus/);
    expect(r.status).toBe(EXIT.usage);
  });
});
