// File-system errors a user's paths and disks cause are said as such: a name longer than the file
// system takes, a symbolic link loop, a file too large to read whole. They were reported as
// `E_INTERNAL ... This is a bug in tapedeck`, since only ENOENT, EISDIR, ENOTDIR, EACCES and EPERM
// had words; now each is E_FILE (E_TOO_LARGE) with the path and the fix, exit 1.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatCliError } from '../../src/cli-errors.ts';
import { appendRecords, createTape } from '../../src/store/tape-file.ts';
import { chatRecord } from './cli-helpers.ts';

const bin = join(import.meta.dirname, '../../dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-path-errors-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const cli = (...args: string[]) => spawnSync(process.execPath, [bin, ...args], { cwd: dir, encoding: 'utf8', env: { ...process.env, TAPEDECK_MODE: '' } });

/** One error line and one hint line, no stack, never "a bug in tapedeck". */
const ONE_LINE = /^tapedeck: (E_[A-Z_]+) [^\n]+\nhint: [^\n]+\n$/;
const long = `${'b'.repeat(300)}.tape`;

beforeAll(async () => {
  await createTape(join(dir, 'ok.tape'));
  await appendRecords(join(dir, 'ok.tape'), [chatRecord(0)]);
  writeFileSync(
    join(dir, 'cassette.yaml'),
    `interactions:
- request:
    body: '{"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}'
    headers:
      Content-Type:
      - application/json
    method: POST
    uri: https://api.openai.com/v1/chat/completions
  response:
    body:
      string: '{"id": "chatcmpl-1", "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}}]}'
    headers:
      Content-Type:
      - application/json
    status:
      code: 200
      message: OK
version: 1
`,
  );
  symlinkSync('loop-b', join(dir, 'loop-a'));
  symlinkSync('loop-a', join(dir, 'loop-b'));
});

describe('a name too long for the file system', () => {
  it.each([
    ['verify', long],
    ['inspect', long],
    ['canonical', `${long}.json`],
    ['import', 'cassette.yaml', long],
    ['import', `${long}.json`, 'out.tape'],
  ].map((args) => ({ args, line: `${args[0]} <${args.length - 1} args>` })))('tapedeck $line: E_FILE naming the path and the fix, exit 1', ({ args }) => {
    const r = cli(...args);
    expect(r.stderr).toMatch(ONE_LINE);
    expect(ONE_LINE.exec(r.stderr)![1]).toBe('E_FILE');
    expect(r.stderr).toContain('is too long for the file system');
    expect(r.stderr).toContain('bbbbbbbb');
    expect(r.stderr).toContain('hint: Give a shorter name');
    expect(r.stderr).not.toContain('bug in tapedeck');
    expect(r.status).toBe(1);
  });

  it('a tape read through the store (merge): E_TAPE_IO with the same fix, not "check permissions"', () => {
    const r = cli('merge', long, 'ok.tape', 'ok.tape');
    expect(r.stderr).toMatch(ONE_LINE);
    expect(r.stderr).toContain('hint: Give a shorter name');
    expect(r.status).toBe(1);
  });
});

describe('a symbolic link loop', () => {
  it.each([['verify', 'loop-a'], ['canonical', 'loop-a'], ['import', 'loop-a', 'out.tape'], ['export', 'loop-a']].map((args) => ({ args, line: args.join(' ') })))('tapedeck $line: E_FILE, exit 1', ({ args }) => {
    const r = cli(...args);
    expect(r.stderr).toMatch(ONE_LINE);
    expect(r.stderr).toContain('tapedeck: E_FILE loop-a goes through too many symbolic links');
    expect(r.stderr).toContain('hint: Check the links on the path');
    expect(r.status).toBe(1);
  });
});

describe('a file too large to read whole', () => {
  // What Node.js throws past its own limits (reading a 3 GB file whole takes seconds and gigabytes,
  // so the errors are made here): the input's size, said as E_TOO_LARGE.
  it.each([
    ['ERR_STRING_TOO_LONG', 'Cannot create a string longer than 0x1fffffe8 characters'],
    ['ERR_FS_FILE_TOO_LARGE', 'File size (3221225472) is greater than 2 GiB'],
  ])('%s: E_TOO_LARGE, not a bug', (code, message) => {
    const text = formatCliError(Object.assign(new Error(message), { code }));
    expect(text).toMatch(ONE_LINE);
    expect(text).toContain(`tapedeck: E_TOO_LARGE A file is too large to read whole: ${message}`);
    expect(text).not.toContain('bug in tapedeck');
  });
});

describe('the other errnos a user causes', () => {
  it.each([
    ['EROFS', 'read-only file system'],
    ['ENOSPC', 'No space left'],
    ['EMFILE', 'Too many open files'],
    ['ENXIO', 'nothing behind it'],
    ['EBUSY', 'is busy'],
    ['ETXTBSY', 'a program being run'],
    ['EEXIST', 'already exists'],
    ['EIO', 'input/output error'],
  ])('%s: E_FILE with the path, never E_INTERNAL', (code, words) => {
    const e = Object.assign(new Error(`${code}: system words, open '/x/y.tape'`), { code, path: '/x/y.tape' });
    const text = formatCliError(e);
    expect(text).toMatch(ONE_LINE);
    expect(text).toContain('tapedeck: E_FILE ');
    expect(text).toContain(words);
    expect(text).toContain('/x/y.tape');
    expect(text).not.toContain('bug in tapedeck');
  });
});
