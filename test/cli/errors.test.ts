// The command line as a user meets it: every command given bad input answers with one line
// `tapedeck: E_CODE message` and a hint that names a command or flag, the documented exit code,
// and no stack trace (unless --debug). Piping into `head` is not an error, import refuses what
// is none of its formats without writing a tape, inspect reads createFetch/serve tapes, and a
// signal stops `tapedeck serve` for good, freeing its port.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { intoClosedPipe } from './cli-helpers.ts';

const root = join(import.meta.dirname, '../..');
const bin = join(root, 'dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const cli = (...args: string[]) => spawnSync(process.execPath, [bin, ...args], { cwd: dir, encoding: 'utf8', env: { ...process.env, TAPEDECK_MODE: '' } });
const file = (name: string, text: string) => {
  writeFileSync(join(dir, name), text);
  return name;
};
mkdirSync(join(dir, 'a-dir'));
mkdirSync(join(dir, 'empty-dir'));
file('bad.json', '{"messages": [1, }');
file('array.json', '[1, 2, 3]');
file('other.json', '{"hello": "world"}');
file('not-llm.json', '{"foo": 1}');

/** stderr must be exactly the error line and the hint line. */
const ONE_LINE = /^tapedeck: (E_[A-Z_]+) [^\n]+\nhint: [^\n]+\n$/;

const cases: [string, string[], number, string][] = [
  // command, arguments, exit code, code
  ['canonical', ['bad.json'], 1, 'E_JSON'],
  ['canonical', ['a-dir'], 1, 'E_FILE'],
  ['hash', ['missing.json'], 1, 'E_FILE'],
  ['paths', ['bad.json'], 1, 'E_JSON'],
  ['key', ['not-llm.json'], 1, 'E_REQUEST'],
  ['verify', [], 2, 'E_USAGE'],
  ['verify', ['a-dir'], 1, 'E_FILE'],
  ['inspect', ['missing.tape'], 1, 'E_TAPE_NOT_FOUND'],
  ['inspect', ['a-dir'], 1, 'E_FILE'],
  ['prune', ['a-dir'], 1, 'E_FILE'],
  ['export', [], 2, 'E_USAGE'],
  ['export', ['bad.json'], 1, 'E_TAPE_CORRUPT'],
  ['import', ['array.json'], 2, 'E_USAGE'],
  ['import', ['array.json', 'out1.tape'], 1, 'E_IMPORT_FORMAT'],
  ['import', ['other.json', 'out2.tape'], 1, 'E_IMPORT_FORMAT'],
  ['import', ['empty-dir', 'out3.tape'], 1, 'E_IMPORT_FORMAT'],
  ['import', ['bad.json', 'out4.tape'], 1, 'E_IMPORT_PARSE'],
  ['tree', [], 2, 'E_USAGE'],
  ['tree', ['a-dir'], 1, 'E_FILE'],
  ['tree', ['t.tape', '--width', 'wide'], 2, 'E_ARG'],
  ['serve', ['--port', 'x'], 2, 'E_ARG'],
  ['serve', ['--bogus'], 2, 'E_USAGE'],
  ['push', [], 2, 'E_USAGE'],
  ['pull', ['not-a-url', 'x.tape'], 2, 'E_ARG'],
  ['frobnicate', [], 2, 'E_USAGE'],
  ['hash', ['--frob'], 2, 'E_USAGE'],
];

describe('bad input, one command at a time', () => {
  for (const [cmd, args, status, code] of cases) {
    it(`tapedeck ${[cmd, ...args].join(' ')} -> ${code}, exit ${status}`, () => {
      const r = cli(cmd, ...args);
      expect(r.stderr).toMatch(ONE_LINE);
      expect(ONE_LINE.exec(r.stderr)![1]).toBe(code);
      expect(r.stderr).not.toMatch(/\n\s+at /);
      // Hints speak in commands and flags, not API calls or option objects.
      expect(r.stderr).not.toMatch(/\w\(\)|\{\s*\w+:/);
      expect(r.status).toBe(status);
    });
  }

  it('import writes no tape for input it refuses', () => {
    for (const out of ['out1.tape', 'out2.tape', 'out3.tape', 'out4.tape']) expect(existsSync(join(dir, out)), out).toBe(false);
  });

  it('an existing tape is kept unless --force, and the hint says so', () => {
    const exported = cli('import', join(root, 'test/fixtures/dspy-cache/qa-cache.json'), 'kept.tape');
    expect(exported.status).toBe(0);
    const again = cli('import', join(root, 'test/fixtures/dspy-cache/qa-cache.json'), 'kept.tape');
    expect(again.status).toBe(1);
    expect(again.stderr).toMatch(/^tapedeck: E_TAPE_EXISTS .*\nhint: .*--force/m);
    expect(again.stderr).not.toContain('(node:');
    expect(cli('import', join(root, 'test/fixtures/dspy-cache/qa-cache.json'), 'kept.tape', '--force').status).toBe(0);
  });

  it('--debug adds the stack trace', () => {
    const r = cli('hash', 'missing.json', '--debug');
    expect(r.stderr).toMatch(/^tapedeck: E_FILE .*\nhint: .*\n[\s\S]*\n\s+at /);
    expect(r.status).toBe(1);
  });
});

describe('--help', () => {
  it('lists every environment variable, the exit codes and examples', () => {
    const r = cli('--help');
    expect(r.status).toBe(0);
    for (const s of ['TAPEDECK_MODE', 'CACHE_MODE', 'TAPEDECK_BACKEND', 'TAPEDECK_REPLAY_ENABLED', 'Exit codes:', 'Examples:', '--debug', '130']) expect(r.stdout).toContain(s);
  });
});

describe('pipes', () => {
  it('output piped into a reader that stops early (head) ends quietly with exit 0', async () => {
    const big = file('big.json', JSON.stringify(Array.from({ length: 200_000 }, (_, i) => ({ i, text: 'x'.repeat(20) }))));
    const { status, stderr } = await intoClosedPipe(bin, ['canonical', big], { cwd: dir });
    expect(stderr).toBe('');
    expect(status).toBe(0);
  });
});

describe('inspect', () => {
  it('shows model and first user message for tapes recorded by createFetch (HTTP exchange records)', async () => {
    const tape = join(dir, 'fetch.tape');
    const upstream = async () => new Response(JSON.stringify({ id: 'x', choices: [{ message: { role: 'assistant', content: 'hi' } }] }), { headers: { 'content-type': 'application/json' } });
    const f = createFetch({ tape, mode: 'record', fetch: upstream as typeof fetch, onWarning: () => {} });
    try {
      const body = { model: 'gpt-4o-mini', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'What is a tapedeck?' }] };
      await (await f('https://api.openai.com/v1/chat/completions', { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } })).text();
    } finally {
      await f.close();
    }
    const r = cli('inspect', tape);
    expect(r.stderr).toBe('');
    const row = r.stdout.split('\n')[1]!.split('\t');
    expect(row[4]).toBe('200');
    expect(row[5]).toBe('-');
    expect(row[7]).toBe('gpt-4o-mini');
    expect(row[8]).toBe('What is a tapedeck?');
  });
});

describe('tapedeck serve and signals', () => {
  const portFree = (port: number) =>
    new Promise<boolean>((resolve) => {
      const s = createServer();
      s.once('error', () => resolve(false));
      s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
    });

  for (const [name, signals, status] of [
    ['SIGTERM', ['SIGTERM'], 0],
    ['SIGINT twice', ['SIGINT', 'SIGINT'], 'either'],
  ] as const) {
    it(`${name}: the process ends and the port is free`, async () => {
      const child = spawn(process.execPath, [bin, 'serve', '--tape', join(dir, `serve-${name.replace(' ', '-')}.tape`), '--mode', 'replay', '--port', '0'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      const port = await new Promise<number>((resolve, reject) => {
        child.stderr.on('data', (c: Buffer) => {
          stderr += c.toString();
          const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(stderr);
          if (m) resolve(Number(m[1]));
        });
        child.on('close', () => reject(new Error(`serve ended early: ${stderr}`)));
      });
      expect(await portFree(port)).toBe(false);
      const closed = new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
      for (const s of signals) child.kill(s);
      const code = await closed;
      // Twice: 130 if the second signal arrived while closing, 0 if closing was already done.
      if (status === 'either') expect([0, 130]).toContain(code);
      else expect(code).toBe(status);
      expect(await portFree(port)).toBe(true);
      expect(stderr).not.toMatch(/\n\s+at /);
    });
  }
});
