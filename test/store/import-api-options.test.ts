// importRecordings (the API) found by a user trial: a misspelt option ({ forse: true },
// { skipbad: true }) was dropped without a word, where createFetch refuses names it does not
// take; a missing file was Node's bare ENOENT (the CLI says E_FILE with the path); a directory of
// JSON recordings, which it does not read, was "the directory holds no talkback tapes".
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { importRecordings } from '../../src/proxy/import.ts';
import { vcrCassette, vcrInteraction } from '../proxy/vcr-cassette.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-import-api-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const cassette = join(dir, 'c.yaml');
writeFileSync(cassette, vcrCassette(vcrInteraction(JSON.stringify({ model: 'm', messages: [] }), JSON.stringify({ id: 'x' }))));

async function refusal(p: Promise<unknown>): Promise<TapedeckError> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(TapedeckError);
  return e as TapedeckError;
}

describe('importRecordings options and paths', () => {
  it.each([
    [{ forse: true }, 'forse', 'force'],
    [{ skipbad: true }, 'skipbad', 'skipBad'],
    [{ ignnore: ['user'] }, 'ignnore', 'ignoreArgs'],
  ])('refuses a misspelt option %o, naming the nearest', async (opts, name, near) => {
    const e = await refusal(importRecordings(cassette, join(dir, `${name}.tape`), opts as object));
    expect(e.code).toBe('E_ARG');
    expect(e.message).toMatch(new RegExp(`^Unknown importRecordings option "${name}"\\.`));
    if (near !== 'ignoreArgs') expect(e.hint).toContain(`Did you mean ${near}?`);
    expect(e.hint).toContain('docs/migrate.md');
  });

  it('says E_FILE with the path for a missing file', async () => {
    const src = join(dir, 'nope.yaml');
    const e = await refusal(importRecordings(src, join(dir, 'x.tape')));
    expect(e.code).toBe('E_FILE');
    expect(e.message.startsWith(`No such file or directory: ${src}; no tape written.`)).toBe(true);
    expect(e.details).toMatchObject({ file: src, errno: 'ENOENT' });
    expect(e.hint).toMatch(/Check the path/);
  });

  it('names importRecordingsDir for a directory of JSON recordings', async () => {
    const recs = join(dir, 'recs');
    mkdirSync(recs);
    writeFileSync(join(recs, 'a.json'), JSON.stringify({ request: {}, response: {} }));
    const e = await refusal(importRecordings(recs, join(dir, 'recs.tape')));
    expect(e.code).toBe('E_IMPORT_FORMAT');
    expect(e.message).toContain(`${recs} holds 1 *.json file and no talkback tapes (*.json5)`);
    expect(e.hint).toContain(`importRecordingsDir('${recs}', '<tape>') from llm-tapedeck/store`);
  });
});
