// A HAR's `_file` (Playwright's content: 'attach') names a body file beside the HAR; Playwright
// writes a bare `<sha1>.<ext>`. A HAR from someone else (a bug report, a fixture in a pull
// request) could name `../../.env` or `/home/me/.ssh/id_ed25519` instead: that file's bytes
// were put on the tape as the answer, to be committed with it. A name that leaves the HAR's
// directory (by `..`, an absolute path or a symbolic link) is now a bad entry naming the entry
// and the field; nothing is read or written.
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { importRecordings } from '../../src/proxy/import.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-import-attach-outside-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const chat = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] });
const entry = (responseFile: string) => ({
  startedDateTime: '2026-11-29T20:58:10.000Z',
  time: 4.2,
  request: { method: 'POST', url: 'http://127.0.0.1:4556/v1/chat/completions', httpVersion: 'HTTP/1.1', cookies: [], headers: [{ name: 'Content-Type', value: 'application/json' }], queryString: [], headersSize: -1, bodySize: chat.length, postData: { mimeType: 'application/json', text: chat } },
  response: { status: 200, statusText: 'OK', httpVersion: 'HTTP/1.1', cookies: [], headers: [{ name: 'Content-Type', value: 'application/json' }], content: { size: 10, mimeType: 'application/json', compression: 0, _file: responseFile }, headersSize: -1, bodySize: -1, redirectURL: '' },
  cache: {},
  timings: { send: 0, wait: 3.1, receive: 1.1 },
});
const har = (files: string[]) => JSON.stringify({ log: { version: '1.2', creator: { name: 'Playwright', version: '1.65.1' }, pages: [], entries: files.map(entry) } });

const outside = join(dir, 'private.txt');
writeFileSync(outside, 'PRIVATE-CONTENT-42');

describe("a HAR's _file outside the HAR's directory", () => {
  it.each([
    ['a relative path up', '../private.txt'],
    ['an absolute path', outside],
    ['a path up from a subdirectory', 'sub/../../private.txt'],
  ])('%s is a bad entry; the file is not read and no tape is written', async (_, name) => {
    const d = mkdtempSync(join(dir, 'har-'));
    writeFileSync(join(d, 'ok.json'), '{"id":"chatcmpl-1","object":"chat.completion","choices":[]}');
    const src = join(d, 'app.har');
    writeFileSync(src, har(['ok.json', name]));
    const tape = join(d, 'app.tape');
    const err = await importRecordings(src, tape).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TapedeckError);
    expect(err).toMatchObject({ code: 'E_IMPORT_ENTRY', details: { entry: 1, field: 'response.content._file' } });
    expect((err as Error).message).toMatch(/entry 1 \(log\.entries\[1\]\), field response\.content\._file: .* is outside the HAR's directory/);
    expect((err as Error).message).not.toContain('PRIVATE-CONTENT-42');
    expect(existsSync(tape)).toBe(false);
  });

  it('a symbolic link beside the HAR that points outside it is a bad entry too; the file is not read', async () => {
    const d = mkdtempSync(join(dir, 'har-'));
    symlinkSync(outside, join(d, 'abc.json'));
    const src = join(d, 'app.har');
    writeFileSync(src, har(['abc.json']));
    const err = await importRecordings(src, join(d, 'app.tape')).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'E_IMPORT_ENTRY', details: { entry: 0, field: 'response.content._file' } });
    expect((err as Error).message).toMatch(/"abc\.json" is outside the HAR's directory/);
    expect((err as Error).message).not.toContain('PRIVATE-CONTENT-42');
  });

  it('a file in a subdirectory of the HAR is read', async () => {
    const d = mkdtempSync(join(dir, 'har-'));
    mkdirSync(join(d, 'bodies'));
    writeFileSync(join(d, 'bodies', 'a.json'), '{"id":"chatcmpl-2","object":"chat.completion","choices":[]}');
    const src = join(d, 'app.har');
    writeFileSync(src, har(['bodies/a.json']));
    const report = await importRecordings(src, join(d, 'app.tape'));
    expect(report.records).toBe(1);
  });
});
