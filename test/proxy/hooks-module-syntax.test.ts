// A hooks module (`tapedeck serve --hooks`) with a syntax error: the error names the line and
// column where it breaks, and the line itself, not only the parser's message.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { loadHooksModule } from '../../src/proxy/hooks-module.ts';
import { rejectionOf } from '../helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-hooks-syntax-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a hooks module that does not parse', () => {
  it('names the line, the column and the text where it breaks', async () => {
    const file = join(dir, 'bad.mjs');
    writeFileSync(file, 'export function beforeReplay(r) {\n  const x = { a: 1,;\n  return r;\n}\n');
    const e = await rejectionOf(loadHooksModule(file));
    expect(e).toBeInstanceOf(TapedeckError);
    expect(e.code).toBe('E_ARG');
    expect(e.message).toContain("Unexpected token ';'");
    expect(e.message).toContain('line 2, column 20');
    expect(e.message).toContain('const x = { a: 1,;');
  });

  it('an unclosed function is named at the end of the file', async () => {
    const file = join(dir, 'open.mjs');
    writeFileSync(file, 'export function beforeReplay(r) {\n  return r;\n');
    const e = await rejectionOf(loadHooksModule(file));
    expect(e.message).toContain('Unexpected end of input');
    expect(e.message).toMatch(/line 3\b/);
  });
});
