// A hand-written recording whose URL was mistyped (`htps//…?key=AIza…`, no scheme before a
// password) was refused with the URL quoted as written, its Google key or password printed into
// the log by `tapedeck add`. The URL is quoted with its secrets masked; it still says what is wrong.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { addRecordings } from '../../src/proxy/hand-written.ts';
import { rejectionOf } from '../helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-written-url-masked-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const GOOGLE = `AIzaSy${'Q7v'.repeat(11)}XX`;
const TOKEN = 'Zk3xQ9vLmP2wR7tYplain';
const PASSWORD = 'Pa55w0rdXYZsecret';

describe('tapedeck add: a bad request.url is quoted masked', () => {
  it.each([
    [`htps//generativelanguage.googleapis.com/v1beta/models/g:generateContent?key=${GOOGLE}`, 'is neither a URL nor a path'],
    [`api.example.com/v1/chat/completions?access_token=${TOKEN}`, 'is neither a URL nor a path'],
    [`ftp://admin:${PASSWORD}@api.example.com/v1/chat/completions`, 'is not an http or https URL'],
  ])('%s', async (url, why) => {
    const tape = join(dir, 'x.tape');
    const e = (await rejectionOf(addRecordings({ tape }, [{ request: { url, body: { model: 'm', messages: [] } }, response: { body: {} } }]))) as TapedeckError;
    expect(e).toBeInstanceOf(TapedeckError);
    expect(e.code).toBe('E_RECORDING');
    expect(e.message).toContain(why);
    expect(e.message).toContain('`request.url`');
    for (const secret of [GOOGLE, TOKEN, PASSWORD]) expect(e.message).not.toContain(secret);
    expect(existsSync(tape)).toBe(false);
  });
});
