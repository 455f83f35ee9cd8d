// What a new user met at the command line, each through the built CLI as they run it: help texts
// that say all they mean, verify and inspect on plain and streamed tapes, rerecord's draft next
// to the tapes, a serve that cannot start, serve's lines (misses, MCP exchanges), diff's
// `--fail-on none`, and an import error in the command line's words.
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, copyFileSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import { tapeTransport } from '../../src/mcp/index.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { exportTapeJSON } from '../../src/store/export.ts';
import { createTape } from '../../src/store/tape-file.ts';
import { MEMORY } from '../mcp/helpers.ts';
import { upstreamSuite } from '../proxy/upstream-suite.ts';
import { runCli } from './cli-helpers.ts';

const root = join(import.meta.dirname, '../..');
const bin = join(root, 'dist/cli.js');
const suite = upstreamSuite('small-things');
const { dir } = suite;
const env = { ...process.env, TAPEDECK_MODE: '', NO_COLOR: '1' };
const cli = (...args: string[]) => spawnSync(process.execPath, [bin, ...args], { cwd: dir, encoding: 'utf8', env });
/** The CLI without blocking this process, for commands that call the fake provider living here. */
const cliAsync = (...args: string[]) => runCli(bin, args, { cwd: dir, env });
const up = {
  get url() {
    return suite.upstream.url;
  },
};

/** A tape with a plain answer and a streamed one, recorded from the fake provider. */
async function chatTape(path: string): Promise<void> {
  const f = createFetch({ tape: path, mode: 'record', onWarning: () => {} });
  const post = (body: unknown) => f(`${up.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then((r) => r.text());
  await post({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'plain' }] });
  await post({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'streamed' }] });
  await f.close();
}

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });

/** `tapedeck serve` as a child: its stderr so far, and a stop that sends SIGTERM and waits. */
function serve(args: string[]) {
  const child = spawn(process.execPath, [bin, 'serve', ...args], { cwd: dir, env });
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
  return {
    stderr: () => err,
    exited,
    async ready(port: number) {
      for (let i = 0; i < 200; i++) {
        const ok = await fetch(`http://127.0.0.1:${port}/__tapedeck/health`).then(
          (r) => r.ok,
          () => false,
        );
        if (ok) return;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`serve did not start: ${err}`);
    },
    async stop() {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

describe('help texts', () => {
  it("serve --help shows the volatile-text example with its backslashes", () => {
    expect(cli('serve', '--help').stdout).toContain('"\\d{4}-\\d{2}-\\d{2}"');
  });

  it('tapedeck --help: the -h line is whole; once is a mode wherever modes are listed', () => {
    const top = cli('--help').stdout;
    expect(top).toMatch(/-h, --help +Show this help; tapedeck <command> --help \(or tapedeck help\n +<command>\) shows that command's help\n/);
    expect(top).toMatch(/TAPEDECK_MODE +replay \(default\) \| record \| update \| passthrough \| once/);
    expect(cli('mcp', '--help').stdout).toMatch(/--mode MODE +replay \(default\) \| record \| update \| passthrough \| once/);
  });
});

describe('verify and inspect', () => {
  it('verify on a header-only tape: ok with no records; with damage, no record is said to be intact', async () => {
    const empty = join(dir, 'empty.tape');
    await createTape(empty);
    const clean = cli('verify', empty);
    expect(clean.status).toBe(0);
    expect(clean.stdout).toContain('0 records');
    expect(clean.stdout.trim().split('\n').pop()).toBe('ok (no records)');
    appendFileSync(empty, Buffer.from([0x54, 0x44, 0x52, 0x31, 0xff, 0x01]));
    const damaged = cli('verify', empty);
    expect(damaged.status).toBe(1);
    expect(damaged.stdout).not.toContain('listed above');
    expect(damaged.stdout).toContain('no record is intact');
  });

  it('inspect has status and stream columns', async () => {
    const tape = join(dir, 'chat.tape');
    await chatTape(tape);
    const rows = cli('inspect', tape).stdout.trim().split('\n').map((l) => l.split('\t'));
    expect(rows[0]).toEqual(['#', 'offset', 'bytes', 'key', 'status', 'stream', 'signature', 'model', 'first user message', 'origin']);
    expect(rows.slice(1).map((r) => [r[4], r[5], r[8]])).toEqual([
      ['200', '-', 'plain'],
      ['200', 'sse', 'streamed'],
    ]);
  });
});

describe('rerecord and diff', () => {
  it("rerecord's draft beside a tape is not counted by the next diff of the folder", async () => {
    const old = join(dir, 'old-tapes');
    const tapes = join(dir, 'tapes');
    mkdirSync(old);
    mkdirSync(tapes);
    await chatTape(join(old, 'chat.tape'));
    copyFileSync(join(old, 'chat.tape'), join(tapes, 'chat.tape'));
    const rr = await cliAsync('rerecord', join(tapes, 'chat.tape'), '--upstream', up.url, '--yes');
    // 1: the answers changed (the fake provider numbers its answers), as rerecord's diff says.
    expect([0, 1], rr.stderr).toContain(rr.status);
    expect(readdirSync(tapes).sort()).toEqual(['chat.rerecorded.tape', 'chat.tape']);
    const diff = cli('diff', old, tapes, '--format', 'json');
    const report = JSON.parse(diff.stdout) as { summary: { added: number; pairs: number } };
    expect(report.summary.added).toBe(0);
    // Named on its own, the draft is read like any tape.
    const named = JSON.parse(cli('diff', join(tapes, 'chat.tape'), join(tapes, 'chat.rerecorded.tape'), '--format', 'json').stdout) as { summary: { pairs: number } };
    expect(named.summary.pairs).toBe(2);
  });

  it('--fail-on none says none', async () => {
    const tape = join(dir, 'chat.tape');
    if (!existsSync(tape)) await chatTape(tape);
    const r = cli('diff', tape, tape, '--fail-on', 'none');
    expect(r.stdout).toContain('(fail-on: none)');
    expect(r.stdout).not.toContain('(fail-on: )');
    expect(cli('diff', tape, tape, '--fail-on', 'none', '--format', 'markdown').stdout).toContain('(fail-on: none)');
  });
});

describe('serve', () => {
  it('a serve that cannot start (its port taken) leaves no tape and no .writers folder', async () => {
    const blocker = createServer().listen(0, '127.0.0.1');
    await new Promise((r) => blocker.once('listening', r));
    const port = (blocker.address() as { port: number }).port;
    try {
      const r = cli('serve', '--tape', 'never-started.tape', '--mode', 'record', '--upstream', up.url, '--port', String(port));
      expect(r.status).not.toBe(0);
      expect(r.stderr).toContain(`E_LISTEN Port ${port} on 127.0.0.1 is in use`);
      expect(existsSync(join(dir, 'never-started.tape'))).toBe(false);
      expect(existsSync(join(dir, 'never-started.tape.writers'))).toBe(false);
    } finally {
      blocker.close();
    }
  });

  it('prints one line per miss on stderr (none with --quiet)', async () => {
    const tape = join(dir, 'served.tape');
    await chatTape(tape);
    for (const quiet of [false, true]) {
      const port = await freePort();
      const s = serve(['--tape', tape, '--port', String(port), ...(quiet ? ['--quiet'] : [])]);
      await s.ready(port);
      const r = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'never recorded' }] }) });
      expect(r.status).toBe(400);
      await r.text();
      await s.stop();
      const lines = s.stderr().split('\n').filter((l) => l.includes('miss: POST /v1/chat/completions'));
      expect(lines).toHaveLength(quiet ? 0 : 1);
      if (!quiet) expect(lines[0]).toMatch(/^tapedeck serve: miss: POST \/v1\/chat\/completions: message 0 \(user\) text differs/);
    }
  });

  it('counts the MCP exchanges of its tape in its own lines', async () => {
    const tape = join(dir, 'mcp.tape');
    const c = new Client({ name: 'recorder', version: '1' });
    await c.connect(tapeTransport(new StdioClientTransport({ command: 'node', args: [MEMORY], stderr: 'ignore' }), { tape, mode: 'record' }));
    await c.listTools();
    await c.close();
    const init = (JSON.parse(await exportTapeJSON(tape)) as { records: { method: string; request: { params: Record<string, unknown> } }[] }).records.find((r) => r.method === 'initialize')!;
    const port = await freePort();
    const s = serve(['--tape', tape, '--port', String(port)]);
    await s.ready(port);
    expect(s.stderr()).toMatch(/0 recording\(s\), [1-9]\d* MCP exchange\(s\)/);
    // Another host than the one that recorded: still a hit.
    const r = await fetch(`http://127.0.0.1:${port}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { ...init.request.params, clientInfo: { name: 'another-host', version: '9' } } }),
    });
    expect(((await r.json()) as { result?: unknown }).result).toBeDefined();
    await s.stop();
    expect(s.stderr()).toMatch(/closed \(1 hit\(s\), 0 miss\(es\), 0 recorded\)/);
  });
});

describe('import', () => {
  it('an existing tape: the error speaks of the command, not of a library function', async () => {
    const tape = join(dir, 'chat.tape');
    if (!existsSync(tape)) await chatTape(tape);
    const json = join(dir, 'chat.tape.json');
    const out = cli('export', tape);
    writeFileSync(json, out.stdout);
    const r = cli('import', json, tape);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('E_TAPE_EXISTS');
    expect(r.stderr).not.toMatch(/importTapeJSON|exportTapeJSON|\(\)/);
    expect(r.stderr).toContain('--force');
  });
});
