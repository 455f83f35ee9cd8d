// A recording that is no UTF-8 text is refused saying what it is (gzip-compressed, UTF-16 text,
// another encoding) whatever its name, as docs/migrate.md promises: a HAR saved as
// `session.har.gz` or a nock recording as `chat.json` (its format unknown by name) was called
// "binary data" with no fix, although those are the files that need "decompress it" or "save it
// as UTF-8".
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { importCommand } from '../../src/cli/import.ts';
import { TapedeckError } from '../../src/errors.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-import-encoding-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const opts = { force: false, har: false, skipBad: false, review: false, textconv: false };
const nock = JSON.stringify([{ scope: 'https://api.openai.com:443', method: 'POST', path: '/v1/chat/completions', body: { model: 'm', messages: [] }, status: 200, response: { id: 'x' } }]);

async function refusal(file: string): Promise<TapedeckError> {
  try {
    await importCommand(file, join(dir, 'out.tape'), opts);
  } catch (e) {
    if (e instanceof TapedeckError) return e;
    throw e;
  }
  throw new Error('expected a refusal');
}

describe('a recording under a name that gives no format', () => {
  it('gzip-compressed (session.har.gz, chat.json.gz): says so and how to decompress it', async () => {
    for (const name of ['session.har.gz', 'chat.json.gz']) {
      const file = join(dir, name);
      writeFileSync(file, gzipSync(nock));
      const e = await refusal(file);
      expect(e.code).toBe('E_IMPORT_FORMAT');
      expect(e.message).toContain('gzip-compressed data');
      expect(e.hint).toContain(`gzip -dc ${file}`);
    }
  });

  it('UTF-16 text with or without a byte order mark (chat.json saved by PowerShell): says to save it as UTF-8', async () => {
    for (const [name, bytes] of [
      ['utf16-bom.json', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(nock, 'utf16le')])],
      ['utf16.json', Buffer.from(nock, 'utf16le')],
    ] as const) {
      const file = join(dir, name);
      writeFileSync(file, bytes);
      const e = await refusal(file);
      expect(e.code).toBe('E_IMPORT_FORMAT');
      expect(e.message).toContain('UTF-16 text');
      expect(e.hint).toContain('iconv -f UTF-16 -t UTF-8');
    }
  });

  it('Latin-1 text: names the byte and the conversion', async () => {
    const file = join(dir, 'latin1.json');
    writeFileSync(file, Buffer.from(nock.replace('"x"', '"caf\u00e9"'), 'latin1'));
    const e = await refusal(file);
    expect(e.code).toBe('E_IMPORT_FORMAT');
    expect(e.message).toContain('is not UTF-8 text');
    expect(e.hint).toContain('iconv -f LATIN1');
  });

  it('other binary data is still binary data', async () => {
    const file = join(dir, 'image.json');
    writeFileSync(file, Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52]));
    const e = await refusal(file);
    expect(e.code).toBe('E_IMPORT_FORMAT');
    expect(e.message).toContain('binary data');
  });
});
