// An import (HAR, exported JSON) into a directory that takes no new files (here /proc, where
// creating a file fails with ENOENT) names the tape the user gave and the directory, not the
// temporary file written beside it, and does not tell them to record: no tape is written.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { importRecordings } from '../../src/proxy/import.ts';
import { importTapeJSON } from '../../src/store/export.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-import-target-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const har = {
  log: {
    version: '1.2',
    creator: { name: 'test', version: '1' },
    entries: [
      {
        startedDateTime: '2026-01-01T00:00:00.000Z',
        time: 1,
        request: { method: 'POST', url: 'https://api.openai.com/v1/chat/completions', httpVersion: 'HTTP/1.1', headers: [{ name: 'content-type', value: 'application/json' }], queryString: [], cookies: [], headersSize: -1, bodySize: -1, postData: { mimeType: 'application/json', text: '{"model":"m","messages":[{"role":"user","content":"hi"}]}' } },
        response: { status: 200, statusText: 'OK', httpVersion: 'HTTP/1.1', headers: [{ name: 'content-type', value: 'application/json' }], cookies: [], content: { size: 2, mimeType: 'application/json', text: '{}' }, redirectURL: '', headersSize: -1, bodySize: 2 },
        cache: {},
        timings: { send: 0, wait: 1, receive: 0 },
      },
    ],
  },
};

it.runIf(existsSync('/proc/self'))('names the tape and its directory, not the temporary file', async () => {
  const src = join(dir, 'a.har');
  writeFileSync(src, JSON.stringify(har));
  for (const attempt of [() => importRecordings(src, '/proc/app.tape'), () => importTapeJSON('{"header":{"created":"2026-01-01T00:00:00.000Z","formatVersion":1,"salt":"1a376d6e73c4ed3f496db76fa753fbf7","tapedeckVersion":"0.1.0"},"records":[]}', '/proc/app.tape')]) {
    const e = (await attempt().catch((x: unknown) => x)) as Error & { code?: string; details?: { file?: string } };
    expect(e.code).toBe('E_TAPE_IO');
    expect(e.message).toContain('Cannot write tape /proc/app.tape: a new file in /proc could not be written');
    expect(e.message).not.toMatch(/\.tmp|does not exist/);
    expect(e.details?.file).toBe('/proc/app.tape');
  }
});
