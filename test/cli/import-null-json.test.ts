// A recording file holding JSON `null` (a recorder script that wrote nothing useful) was said to
// be "none of the formats import reads: found a object" (`typeof null`, with the wrong article).
// It is now "found null", as the other scalars are "found a string" / "found a boolean".
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { importCommand } from '../../src/cli/import.ts';
import { TapedeckError } from '../../src/errors.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-import-null-json-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const opts = { force: false, har: false, skipBad: false, review: false, textconv: false };

async function found(text: string, name: string): Promise<TapedeckError> {
  const src = join(dir, name);
  writeFileSync(src, text);
  const e = await importCommand(src, join(dir, `${name}.tape`), opts).then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(TapedeckError);
  return e as TapedeckError;
}

describe('a recording file holding a JSON scalar', () => {
  it('null is said as null', async () => {
    const e = await found('null\n', 'null.json');
    expect(e.code).toBe('E_IMPORT_FORMAT');
    expect(e.message).toContain('is none of the formats import reads: found null;');
    expect(e.message).not.toContain('a object');
  });

  it('a string and a boolean are said as before', async () => {
    expect((await found('"text"\n', 'string.json')).message).toContain('found a string;');
    expect((await found('true\n', 'bool.json')).message).toContain('found a boolean;');
  });
});
