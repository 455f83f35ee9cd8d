// Output that cannot be written (a full disk: /dev/full) is a failure of the command, said as
// one: `tapedeck: E_OUTPUT` with the system's reason, exit 1, never E_INTERNAL asking for a bug
// report, and never exit 0 (an export cut short must not look done). A reader that stops early
// (`| head`) is still no error.
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { appendRecords, createTape } from '../../src/store/tape-file.ts';
import { chatRecord, intoClosedPipe } from './cli-helpers.ts';

const root = join(import.meta.dirname, '../..');
const bin = join(root, 'dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-output-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const env = { ...process.env, TAPEDECK_MODE: '' };
const tape = join(dir, 'chat.tape');

beforeAll(async () => {
  const upstream = (async () =>
    new Response(JSON.stringify({ id: 'c1', object: 'chat.completion', model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: 'Paris.' }, finish_reason: 'stop' }] }), {
      headers: { 'content-type': 'application/json' },
    })) as typeof fetch;
  const f = createFetch({ tape, mode: 'record', fetch: upstream, onWarning: () => {} });
  try {
    for (const q of ['Capital of France?', 'Capital of Spain?', 'Capital of Italy?']) {
      await (await f('https://api.openai.com/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: q }] }) })).text();
    }
  } finally {
    await f.close();
  }
  // Export text well past a pipe's buffer: the reader has gone while it is still being written.
  await createTape(join(dir, 'big.tape'));
  const answer = new TextEncoder().encode(JSON.stringify({ choices: [{ message: { content: 'x'.repeat(2000) } }] }));
  await appendRecords(
    join(dir, 'big.tape'),
    Array.from({ length: 400 }, (_, i) => chatRecord(i, answer)),
  );
  writeFileSync(join(dir, 'request.json'), JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }));
});

/** The command with its stdout on a device that is always full. */
function toFullDisk(args: string[]) {
  const full = openSync('/dev/full', 'w');
  try {
    return spawnSync(process.execPath, [bin, ...args], { cwd: dir, env, encoding: 'utf8', stdio: ['ignore', full, 'pipe'] });
  } finally {
    closeSync(full);
  }
}

const COMMANDS: string[][] = [
  ['stats', 'chat.tape'],
  ['export', 'chat.tape'],
  ['export', 'chat.tape', '--review'],
  ['export', 'chat.tape', '--har'],
  ['inspect', 'chat.tape'],
  ['tree', 'chat.tape'],
  ['verify', 'chat.tape'],
  ['scan', 'chat.tape'],
  ['canonical', 'request.json'],
  ['hash', 'request.json'],
  ['key', 'request.json'],
  ['--help'],
];

describe.skipIf(!existsSync('/dev/full'))('stdout that cannot be written', () => {
  it.each(COMMANDS.map((args) => ({ args, line: args.join(' ') })))('tapedeck $line: E_OUTPUT with the reason, exit 1 (2 for stats)', ({ args }) => {
    const r = toFullDisk(args);
    expect(r.stderr).toMatch(/^tapedeck: E_OUTPUT [^\n]*no space left on device[^\n]*\nhint: [^\n]+\n$/i);
    expect(r.stderr).not.toContain('bug in tapedeck');
    // stats, diff and rerecord exit 1 for "answers changed": their failures are 2.
    expect(r.status).toBe(args[0] === 'stats' ? 2 : 1);
  });
});

describe('a reader that stops early', () => {
  it.each([['export', 'big.tape'], ['export', 'big.tape', '--review'], ['export', 'big.tape', '--har'], ['inspect', 'big.tape']].map((args) => ({ args, line: args.join(' ') })))('tapedeck $line into a pipe closed after the first bytes ends quietly with exit 0', async ({ args }) => {
    const { status, stderr } = await intoClosedPipe(bin, args, { cwd: dir, env });
    expect(stderr).toBe('');
    expect(status).toBe(0);
  });
});

// A file on a disk that fills up partway (not /dev/full, where the first write fails): Node
// writes each chunk to a file with one writeSync and takes a short write for the whole, so tree,
// inspect and diff, which write their output at once, left it cut with no error and exit 0.
const canMount = (() => {
  if (process.getuid?.() !== 0) return false;
  const probe = join(dir, 'probe');
  try {
    spawnSync('mkdir', [probe]);
    return spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=4k', 'tmpfs', probe]).status === 0 && spawnSync('umount', [probe]).status === 0;
  } catch {
    return false;
  }
})();

describe('a disk that fills up partway through the output', () => {
  it.runIf(canMount)('tree, inspect, diff and export: E_OUTPUT and a failing exit code, never a cut output with exit 0', () => {
    const mnt = join(dir, 'small');
    spawnSync('mkdir', [mnt]);
    expect(spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=8k', 'tmpfs', mnt]).status).toBe(0);
    try {
      const big = join(dir, 'big.tape');
      // diff as JSON: the terminal and Markdown forms fold a tape's added or removed recordings into one row.
      for (const [args, exit] of [[['tree', big], 1], [['inspect', big], 1], [['export', big], 1], [['diff', big, tape, '--format', 'json'], 2]] as const) {
        const out = join(mnt, 'out');
        const fd = openSync(out, 'w');
        const r = spawnSync(process.execPath, [bin, ...args], { env, stdio: ['ignore', fd, 'pipe'], encoding: 'utf8' });
        closeSync(fd);
        // The premise: the whole output is larger than the disk.
        expect(spawnSync(process.execPath, [bin, ...args], { env, encoding: 'utf8', maxBuffer: 1 << 26 }).stdout.length, args[0]).toBeGreaterThan(8192);
        expect(r.stderr, args[0]).toMatch(/^tapedeck: E_OUTPUT The output could not be written: no space left on device \(ENOSPC\)/);
        expect(r.status, args[0]).toBe(exit);
        rmSync(out);
      }
    } finally {
      spawnSync('umount', [mnt]);
    }
  });
});
