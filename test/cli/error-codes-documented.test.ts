// Every error code the package can throw or print is named in the docs, so a user who meets one
// (`tapedeck: E_PRICES ...`, a caught `err.code === 'E_CLOSED'`) finds what it means and can
// `switch (err.code)` on it. Codes such as E_CLOSED, E_CONFIRM, E_PRICES, E_DIFF_INPUT, E_STORE,
// E_EVENT_STREAM and E_CHAOS were given to users but named on no page; and TapedeckErrorCode, the
// type of `err.code`, left out a third of the codes (E_CLOSED, E_MODE, E_STORE, E_TAPE_DAMAGED...).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';

const root = join(import.meta.dirname, '../..');

/** The files under a folder, recursively, whose names end with `ext`. */
function filesUnder(folder: string, ext: string): string[] {
  return readdirSync(folder, { withFileTypes: true, recursive: true })
    .filter((d) => d.isFile() && d.name.endsWith(ext))
    .map((d) => join(d.parentPath, d.name));
}

/** Every `'E_...'` string in the source: the codes errors are made with. */
function sourceCodes(): Set<string> {
  const codes = new Set<string>();
  for (const file of filesUnder(join(root, 'src'), '.ts')) {
    for (const m of readFileSync(file, 'utf8').matchAll(/'(E_[A-Z0-9_]+)'/g)) codes.add(m[1]!);
  }
  expect(codes.size).toBeGreaterThan(40);
  return codes;
}

it('every E_ code in the source is named in README.md or docs/*.md', () => {
  const codes = sourceCodes();
  const docs = [join(root, 'README.md'), ...filesUnder(join(root, 'docs'), '.md')].map((f) => readFileSync(f, 'utf8')).join('\n');
  const undocumented = [...codes].filter((c) => !new RegExp(`\\b${c}\\b`).test(docs)).sort();
  expect(undocumented).toEqual([]);
});

it('every E_ code in the source is a member of TapedeckErrorCode', () => {
  const text = readFileSync(join(root, 'src/errors.ts'), 'utf8');
  const union = text.slice(text.indexOf('export type TapedeckErrorCode'), text.indexOf('(string & {})'));
  const members = new Set([...union.matchAll(/'(E_[A-Z0-9_]+)'/g)].map((m) => m[1]!));
  expect([...sourceCodes()].filter((c) => !members.has(c)).sort()).toEqual([]);
});
