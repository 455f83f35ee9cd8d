// A reader that stops early (`tapedeck scan t.tape | head -1`) does not decide the exit code: the
// command runs to its result and exits with the code it deserves. Before, the closed pipe ended
// the process with 0, so a scan that found keys, a verify that found damage or a diff that failed
// its --fail-on passed CI under `set -o pipefail`. A plain success piped to head still exits 0.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendRecords, createTape } from '../../src/store/tape-file.ts';
import { chatRecord } from './cli-helpers.ts';

const root = join(import.meta.dirname, '../..');
const bin = join(root, 'dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-closed-pipe-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const env = { ...process.env, TAPEDECK_MODE: '' };

// Enough records that each command's output is far past a pipe's buffer (64 KB, 140 KB to 1 MB
// here): head is gone while the command still writes.
const N = 2000;

/** `set -o pipefail; tapedeck <args> | head -c 10`, as a CI script runs it: the pipeline's status and the command's stderr. */
function intoHead(args: string[]): { status: number | null; stderr: string } {
  const r = spawnSync('bash', ['-c', 'set -o pipefail; "$@" | head -c 10 > /dev/null', 'bash', process.execPath, bin, ...args], { cwd: dir, env, encoding: 'utf8' });
  return { status: r.status, stderr: r.stderr };
}

/** A chat record whose request carries a bearer token, as a tape written before redaction holds. */
function leakyRecord(i: number) {
  const r = chatRecord(i);
  return { ...r, request: { ...r.request, headers: { ...r.request.headers, authorization: `Bearer sk-proj-Qa1Ws2Ed3Rf4Tg5Yh6Uj7Ik8Ol9Pz0X${String(i).padStart(6, '0')}` } } };
}

beforeAll(async () => {
  await createTape(join(dir, 'leaky.tape'));
  await appendRecords(join(dir, 'leaky.tape'), Array.from({ length: N }, (_, i) => leakyRecord(i)));
  // Every other record damaged: a byte of its frame flipped, so its checksum fails.
  await createTape(join(dir, 'damaged.tape'));
  const { offsets } = await appendRecords(join(dir, 'damaged.tape'), Array.from({ length: N }, (_, i) => chatRecord(i)));
  const b = readFileSync(join(dir, 'damaged.tape'));
  for (let i = 1; i < N; i += 2) b[offsets[i]! + 8]! ^= 0xff;
  writeFileSync(join(dir, 'damaged.tape'), b);
  await createTape(join(dir, 'clean.tape'));
  await appendRecords(join(dir, 'clean.tape'), Array.from({ length: N }, (_, i) => chatRecord(i)));
  await createTape(join(dir, 'one.tape'));
  await appendRecords(join(dir, 'one.tape'), [chatRecord(0)]);
});

describe('a reader that stops early keeps the verdict in the exit code', () => {
  it.each([
    { args: ['scan', 'leaky.tape'], why: 'credentials found' },
    { args: ['verify', 'damaged.tape'], why: 'damage found' },
    { args: ['inspect', 'damaged.tape'], why: 'damage found' },
    { args: ['export', 'damaged.tape'], why: 'damage left out' },
    { args: ['diff', 'one.tape', 'clean.tape', '--format', 'json', '--fail-on', 'added'], why: '--fail-on failed' },
  ].map((c) => ({ ...c, line: c.args.join(' ') })))('tapedeck $line | head: exit 1 ($why), not 0', ({ args }) => {
    expect(intoHead(args).status).toBe(1);
  });

  it.each([['inspect', 'clean.tape'], ['export', 'clean.tape'], ['verify', 'clean.tape']].map((args) => ({ args, line: args.join(' ') })))('tapedeck $line | head: a success still exits 0, quietly', ({ args }) => {
    const { status, stderr } = intoHead(args);
    expect(stderr).toBe('');
    expect(status).toBe(0);
  });
});
