// `tapedeck import` took no --redact-header / --redact-field / --redact-query ("Unknown option"),
// so a secret only a custom rule catches (an HMAC header, an `ssn` body member, a signature in
// the query) went to the tape as it was, although `tapedeck serve` takes those flags and
// importRecordings({ redact }) masks them. The import command now takes them, with serve's
// spelling (repeatable, `--flag NAME` or `--flag=NAME`).
// The CLI runs from dist: build first (flock /tmp/build.lock npm run build).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { exportTapeJSON } from '../../src/store/export.ts';

const root = join(import.meta.dirname, '../..');
const bin = join(root, 'dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-import-redact-flags-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const cli = (...args: string[]) => spawnSync(process.execPath, [bin, ...args], { cwd: dir, encoding: 'utf8', env: { ...process.env, TAPEDECK_MODE: '' } });

const SIG = '9f8e7d6c5b4a39281706f5e4d3c2b1a0';
const SSN = '123-45-6789';
const QSIG = 'q7w8e9r0t1y2u3i4o5p6';
const answer = JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }] });
const HAR = {
  log: {
    version: '1.2',
    creator: { name: 'Playwright', version: '1.65.2' },
    entries: [
      {
        startedDateTime: '2026-12-07T03:41:50.496Z',
        time: 10,
        request: {
          method: 'POST',
          url: `https://api.openai.com/v1/chat/completions?acme_sig=${QSIG}`,
          httpVersion: 'HTTP/1.1',
          cookies: [],
          headers: [
            { name: 'content-type', value: 'application/json' },
            { name: 'x-acme-sig', value: SIG },
          ],
          queryString: [{ name: 'acme_sig', value: QSIG }],
          headersSize: -1,
          bodySize: -1,
          postData: { mimeType: 'application/json', text: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], metadata: { ssn: SSN } }) },
        },
        response: { status: 200, statusText: 'OK', httpVersion: 'HTTP/1.1', cookies: [], headers: [{ name: 'content-type', value: 'application/json' }], content: { size: answer.length, mimeType: 'application/json', text: answer }, redirectURL: '', headersSize: -1, bodySize: -1 },
        cache: {},
        timings: { send: 0, wait: 1, receive: 0 },
      },
    ],
  },
};
const har = join(dir, 'custom.har');
writeFileSync(har, JSON.stringify(HAR));

const tapeText = (tape: string) => exportTapeJSON(tape);

describe('tapedeck import --redact-header / --redact-field / --redact-query', () => {
  it('masks the named header, body member and query parameter, as serve does', async () => {
    const r = cli('import', 'custom.har', 'custom.tape', '--redact-header', 'x-acme-sig', '--redact-field=ssn', '--redact-query', 'acme_sig');
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const text = await tapeText(join(dir, 'custom.tape'));
    expect(text).not.toContain(SIG);
    expect(text).not.toContain(SSN);
    expect(text).not.toContain(QSIG);
    // Without the flags they are kept: what the flags are for.
    const plain = cli('import', 'custom.har', 'plain.tape');
    expect(plain.status).toBe(0);
    const kept = await tapeText(join(dir, 'plain.tape'));
    expect(kept).toContain(SIG);
    expect(kept).toContain(SSN);
  });

  it('is repeatable, and a flag without its name is a usage error', async () => {
    const r = cli('import', 'custom.har', 'two.tape', '--redact-field', 'ssn', '--redact-field', 'content', '--redact-header', 'x-acme-sig');
    expect(r.status).toBe(0);
    const text = await tapeText(join(dir, 'two.tape'));
    expect(text).not.toContain(SSN);
    expect(text).not.toContain('"hi"');
    const bad = cli('import', 'custom.har', 'bad.tape', '--redact-header');
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('--redact-header needs a value');
  });

  it('with a tapedeck JSON export, which is turned back into its tape as it is: a usage error, not rules dropped', async () => {
    const json = join(dir, 'custom.tape.json');
    writeFileSync(json, await exportTapeJSON(join(dir, 'plain.tape')));
    const r = cli('import', 'custom.tape.json', 'from-export.tape', '--redact-field', 'ssn');
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('a tapedeck JSON export is imported as it is');
    expect(existsSync(join(dir, 'from-export.tape'))).toBe(false);
  });

  it('is in the import help', () => {
    const r = cli('import', '--help');
    expect(r.stdout).toContain('--redact-header');
    expect(r.stdout).toContain('--redact-field');
    expect(r.stdout).toContain('--redact-query');
  });
});
