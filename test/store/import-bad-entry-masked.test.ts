// Imports take in recordings that still hold credentials (talkback, HAR and VCR.py keep them), and
// the error of a bad entry quoted the field's value: a HAR entry's mistyped URL printed its
// `?key=` (a Google API key) into the log, as did --skip-bad's list of what it left out. The
// value is shown with its secrets masked, as the tape would store them.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { importRecordings } from '../../src/proxy/import.ts';
import { TapedeckError } from '../../src/errors.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-import-bad-masked-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const GOOGLE = `AIzaSy${'Q7v'.repeat(11)}XX`;
const TOKEN = 'Zk3xQ9vLmP2wR7tYplain';
const PASSWORD = 'Pa55w0rdXYZsecret';

const entry = (url: string) => ({
  startedDateTime: '2026-01-01T00:00:00.000Z',
  time: 1,
  request: { method: 'POST', url, httpVersion: 'HTTP/1.1', headers: [], queryString: [], cookies: [], headersSize: -1, bodySize: -1, postData: { mimeType: 'application/json', text: '{"model":"m","messages":[{"role":"user","content":"hi"}]}' } },
  response: { status: 200, statusText: 'OK', httpVersion: 'HTTP/1.1', headers: [], cookies: [], content: { size: 2, mimeType: 'application/json', text: '{"id":"c1"}' }, redirectURL: '', headersSize: -1, bodySize: -1 },
  cache: {},
  timings: { send: 0, wait: 1, receive: 0 },
});
const BAD = [
  `htps//generativelanguage.googleapis.com/v1beta/models/g:generateContent?key=${GOOGLE}`,
  `api.example.com/v1/chat/completions?access_token=${TOKEN}`,
  `htps://admin:${PASSWORD}@api.example.com:99999/v1/chat/completions`,
];

function har(urls: string[]): string {
  const file = join(dir, `h${Math.random().toString(36).slice(2)}.har`);
  writeFileSync(file, JSON.stringify({ log: { version: '1.2', creator: { name: 't', version: '1' }, entries: urls.map(entry) } }));
  return file;
}

describe('import: a bad entry is named with its secrets masked', () => {
  it.each(BAD)('the error of %#', async (url) => {
    const e = await importRecordings(har([url]), join(dir, 'out.tape'), { force: true }).then(() => undefined, (x: unknown) => x as TapedeckError);
    expect(e).toBeInstanceOf(TapedeckError);
    expect(e!.code).toBe('E_IMPORT_ENTRY');
    const all = `${e!.message} ${JSON.stringify(e!.details)}`;
    for (const secret of [GOOGLE, TOKEN, PASSWORD]) expect(all).not.toContain(secret);
    // Still says which value is wrong.
    expect(e!.message).toContain('request.url');
    expect(e!.message).toContain('api');
  });

  it('--skip-bad lists them masked', async () => {
    const report = await importRecordings(har([...BAD, 'https://api.example.com/v1/chat/completions']), join(dir, 'skip.tape'), { force: true, skipBad: true });
    expect(report.skipped.length).toBe(3);
    const all = JSON.stringify(report.skipped);
    for (const secret of [GOOGLE, TOKEN, PASSWORD]) expect(all).not.toContain(secret);
  });
});
