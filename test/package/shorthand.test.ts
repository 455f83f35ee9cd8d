// No internal shorthand reaches users: the files of the packed tarball (dist, docs, README,
// CHANGELOG, package.json) and every command's --help name features by what they are, never by
// the design notes they came from (a design-note or tracker number, or a path into the design folder).
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pack, root, type Packed } from './packed.ts';

/** Each pattern with what it catches; built from parts so this file does not match itself. */
const SHORTHAND: RegExp[] = [
  new RegExp('\\bs' + 'eed[ _-]?0\\d{2}\\b', 'i'), // the word for a design note followed by its three-digit number, any case or separator
  new RegExp('\\bi' + 'ssues? #?\\d+\\b', 'i'), // a tracker reference: the word for a ticket (singular or plural) and its number
  new RegExp('\\.\\./s' + 'hared\\b'), // a relative path into the design folder
  new RegExp('\\bs' + 'hared/seeds\\b'),
];

/** `file:line: text` for every line that matches a shorthand pattern. */
function findShorthand(name: string, text: string): string[] {
  const out: string[] = [];
  text.split('\n').forEach((line, i) => {
    if (SHORTHAND.some((re) => re.test(line))) out.push(`${name}:${i + 1}: ${line.trim().slice(0, 160)}`);
  });
  return out;
}

describe('internal shorthand', () => {
  it('the patterns catch what they are for, and not ordinary words', () => {
    const caught = ['s' + 'eed 000', 'S' + 'eed 003\'s cache', 'recordings-s' + 'eed000', 'i' + 'ssue 5', 'I' + 'ssue 3\'s rows', '../s' + 'hared/seeds/003.txt'];
    for (const s of caught) expect(findShorthand('x', s), s).toHaveLength(1);
    for (const s of ['seed: 1234', '--seed N', 'a seeded PRNG', 'https://github.com/llm-tapedeck/llm-tapedeck/issues', 'shared lock']) {
      expect(findShorthand('x', s), s).toEqual([]);
    }
  });

  let p: Packed;
  // npm pack of the build: seconds, more on a loaded CI machine than a hook's default 10 s.
  beforeAll(() => {
    p = pack();
  }, 120_000);
  afterAll(() => p?.remove());

  it('none in the files of the packed tarball', () => {
    const text = p.files.filter((f) => /\.(js|ts|md|json|txt)$/.test(f) || f === 'LICENSE');
    expect(text.length).toBeGreaterThan(20);
    expect(text).toContain('README.md');
    expect(text.some((f) => f.startsWith('docs/'))).toBe(true);
    const found = text.flatMap((f) => findShorthand(f, readFileSync(join(p.pkg, f), 'utf8')));
    expect(found).toEqual([]);
  });

  it("none in any command's --help", async () => {
    const cli = join(p.pkg, 'dist/cli.js');
    const run = (args: string[]) => promisify(execFile)(process.execPath, [cli, ...args], { cwd: p.dir, encoding: 'utf8' });
    const pages = [['--help'], ['help'], ['serve', '--help'], ['tree', '--help']];
    const found: string[] = [];
    for (const args of pages) {
      const { stdout } = await run(args);
      expect(stdout.length, args.join(' ')).toBeGreaterThan(200);
      found.push(...findShorthand(`tapedeck ${args.join(' ')}`, stdout));
    }
    expect(found).toEqual([]);
  });
});
