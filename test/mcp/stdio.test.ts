// `tapedeck mcp` over stdio against real MCP servers from npm and the SDK's own Client: record,
// then replay with the server command replaced by one that fails if run.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it, vi } from 'vitest';
import { readTape } from '../../src/store/tape-file.ts';
import { isMcpRecord } from '../../src/store/records.ts';
import { CLI, EVERYTHING, everythingSession, FAILS_IF_RUN, FILESYSTEM, logged, MEMORY, richClient, tmp } from './helpers.ts';

const ODD = join(import.meta.dirname, 'odd-server.mjs');

/** A client connected through `tapedeck mcp`, its received-message log and its stderr text. */
async function viaTapedeck(tape: string, mode: string, server: string[], opts: { client?: Client; extra?: string[]; env?: Record<string, string> } = {}) {
  const inner = new StdioClientTransport({ command: 'node', args: [CLI, 'mcp', '--tape', tape, '--mode', mode, ...(opts.extra ?? []), '--', ...server], stderr: 'pipe', env: { ...(process.env as Record<string, string>), ...opts.env } });
  let stderr = '';
  inner.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
  const { transport, log } = logged(inner);
  const client = opts.client ?? new Client({ name: 'tapedeck-test', version: String(Date.now()) });
  await client.connect(transport);
  return { client, log, stderr: () => stderr, close: () => client.close() };
}

/**
 * Raw JSON-RPC lines through `tapedeck mcp`: writes the messages, waits for an answer to every
 * request, then closes stdin; resolves to the lines tapedeck wrote on stdout.
 */
function rawSession(args: string[], messages: Record<string, unknown>[]): Promise<Record<string, unknown>[]> {
  const child = spawn('node', [CLI, 'mcp', ...args], { stdio: ['pipe', 'pipe', 'ignore'] });
  const want = new Set(messages.filter((m) => m.id !== undefined).map((m) => m.id));
  const out: Record<string, unknown>[] = [];
  let buf = '';
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (b: Buffer) => {
      buf += b.toString();
      for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
        const m = JSON.parse(buf.slice(0, nl)) as Record<string, unknown>;
        buf = buf.slice(nl + 1);
        out.push(m);
        if (m.method === undefined && want.delete(m.id) && want.size === 0) child.stdin.end();
      }
    });
    child.once('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`tapedeck mcp exited ${code}`))));
    for (const m of messages) child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...m })}\n`);
  });
}

const mcpRecordsOf = async (tape: string) => (await readTape(tape)).records.map((r) => r.value).filter(isMcpRecord);

describe('tapedeck mcp over stdio', () => {
  it("a server's JSON line that is no JSON-RPC message stays off the host's stdout (said on stderr)", async () => {
    const dir = tmp('noisy');
    const tape = join(dir, 'noisy.tape');
    const child = spawnSync('node', [CLI, 'mcp', '--tape', tape, '--mode', 'record', '--', 'node', ODD], {
      input: [
        { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } },
        { jsonrpc: '2.0', method: 'notifications/initialized' },
        { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      ].map((m) => `${JSON.stringify(m)}\n`).join(''),
      env: { ...process.env, ODD_NOISY: '1' },
      encoding: 'utf8',
      timeout: 30_000,
    });
    const lines = child.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((m) => m.jsonrpc)).toEqual(['2.0', '2.0']);
    expect(lines.map((m) => m.id)).toEqual([1, 2]);
    expect(child.stderr).toContain('the MCP server wrote a line that is not a JSON-RPC message to stdout (ignored): {"not":"jsonrpc","level":"info"}');
  });


  it('server-everything: tools, progress, logging, resources, prompts, sampling, elicitation and roots replay identically, in order, without the server', async () => {
    const dir = tmp('everything');
    const tape = join(dir, 'everything.tape');
    const rec = await viaTapedeck(tape, 'record', ['node', EVERYTHING, 'stdio'], { client: richClient() });
    const recorded = await everythingSession(rec.client);
    await rec.close();
    expect(rec.log.filter((m) => (m as { method?: string }).method === 'notifications/progress')).toHaveLength(3);
    // What the client saw includes the server's own requests and its logging.
    const seen = rec.log.map((m) => (m as { method?: string }).method).filter(Boolean);
    expect(seen).toEqual(expect.arrayContaining(['sampling/createMessage', 'elicitation/create', 'roots/list', 'notifications/message', 'notifications/progress']));

    const records = await mcpRecordsOf(tape);
    const methods = records.map((r) => r.method);
    expect(methods).toContain('initialize');
    expect(methods).toContain('notifications/initialized');
    // The sampling call holds the server's createMessage request and the client's answer.
    const sampling = records.find((r) => (r.request.params as { name?: string } | undefined)?.name === 'trigger-sampling-request')!;
    expect(sampling.events.some((e) => 'request' in e && e.request.method === 'sampling/createMessage')).toBe(true);

    const rep = await viaTapedeck(tape, 'replay', FAILS_IF_RUN, { client: richClient() });
    const replayed = await everythingSession(rep.client);
    await rep.close();
    expect(replayed).toEqual(recorded);
    expect(rep.log).toEqual(rec.log);
    expect(rep.stderr()).not.toMatch(/^THE SERVER WAS STARTED$/m);
    rmSync(dir, { recursive: true, force: true });
  });

  it('server-filesystem: file answers replay after the files are gone; a changed argument is a miss in the protocol and the session goes on', async () => {
    const dir = tmp('fs');
    const files = join(dir, 'files');
    mkdirSync(files);
    writeFileSync(join(files, 'notes.txt'), 'first line\nsecond line\n');
    const tape = join(dir, 'fs.tape');
    const script = async (c: Client) => [
      await c.callTool({ name: 'list_directory', arguments: { path: files } }),
      await c.callTool({ name: 'read_text_file', arguments: { path: join(files, 'notes.txt') } }),
      await c.callTool({ name: 'write_file', arguments: { path: join(files, 'new.txt'), content: 'written' } }),
      await c.callTool({ name: 'list_directory', arguments: { path: files } }),
    ];
    const rec = await viaTapedeck(tape, 'record', ['node', FILESYSTEM, files]);
    const recorded = await script(rec.client);
    await rec.close();
    // The second listing sees the written file: the k-th identical call gets the k-th recording.
    expect(JSON.stringify(recorded[3])).toContain('new.txt');
    expect(JSON.stringify(recorded[0])).not.toContain('new.txt');

    rmSync(files, { recursive: true });
    const rep = await viaTapedeck(tape, 'replay', FAILS_IF_RUN);
    expect(await script(rep.client)).toEqual(recorded);
    expect(rep.log).toEqual(rec.log);
    const err = await rep.client.callTool({ name: 'read_text_file', arguments: { path: join(files, 'other.txt') } }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(McpError);
    expect((err as McpError).code).toBe(-32050);
    expect((err as McpError).message).toContain('tools/call read_text_file: params.arguments.path differs');
    expect((err as McpError).message).toContain('other.txt');
    expect((err as McpError).message).toContain('--mode record');
    // Still usable after the miss.
    expect(await rep.client.callTool({ name: 'read_text_file', arguments: { path: join(files, 'notes.txt') } })).toEqual(recorded[1]);
    await rep.close();
    expect(rep.stderr()).toContain('MCP miss in');
    expect(rep.stderr()).toContain('closest recording: tools/call read_text_file');
    rmSync(dir, { recursive: true, force: true });
  });

  it('server-memory: state-changing calls replay in recorded order', async () => {
    const dir = tmp('memory');
    const tape = join(dir, 'memory.tape');
    const env = { MEMORY_FILE_PATH: join(dir, 'memory.jsonl') };
    const script = async (c: Client) => [
      await c.callTool({ name: 'read_graph', arguments: {} }),
      await c.callTool({ name: 'create_entities', arguments: { entities: [{ name: 'Ada', entityType: 'person', observations: ['writes programs'] }] } }),
      await c.callTool({ name: 'read_graph', arguments: {} }),
      await c.callTool({ name: 'add_observations', arguments: { observations: [{ entityName: 'Ada', contents: ['likes engines'] }] } }),
      await c.callTool({ name: 'read_graph', arguments: {} }),
    ];
    const rec = await viaTapedeck(tape, 'record', ['node', MEMORY], { env });
    const recorded = await script(rec.client);
    await rec.close();
    expect(JSON.stringify(recorded[0])).not.toContain('Ada');
    expect(JSON.stringify(recorded[4])).toContain('likes engines');
    rmSync(env.MEMORY_FILE_PATH, { force: true });
    const rep = await viaTapedeck(tape, 'replay', FAILS_IF_RUN, { env });
    expect(await script(rep.client)).toEqual(recorded);
    await rep.close();
    expect(rep.log).toEqual(rec.log);
    rmSync(dir, { recursive: true, force: true });
  });

  it('a server that answers with an error is recorded and replayed as that error; a crash or a hang gets an error and records nothing', async () => {
    const dir = tmp('odd');
    const tape = join(dir, 'odd.tape');
    const rec = await viaTapedeck(tape, 'record', ['node', ODD], { extra: ['--timeout', '2500'] });
    const failed = await rec.client.callTool({ name: 'fail', arguments: {} }).catch((e: McpError) => e);
    expect((failed as McpError).code).toBe(-32602);
    const hung = await rec.client.callTool({ name: 'hang', arguments: {} }).catch((e: McpError) => e);
    expect((hung as McpError).code).toBe(-32052);
    const crashed = await rec.client.callTool({ name: 'crash', arguments: {} }).catch((e: McpError) => e);
    expect((crashed as McpError).code).toBe(-32051);
    expect((crashed as McpError).message).toContain('exited (code 3)');
    await rec.close();
    const names = (await mcpRecordsOf(tape)).map((r) => (r.request.params as { name?: string } | undefined)?.name ?? r.method);
    expect(names).toEqual(['initialize', 'notifications/initialized', 'fail']);
    expect(rec.stderr()).toContain('exited (code 3)');

    const rep = await viaTapedeck(tape, 'replay', FAILS_IF_RUN);
    const again = await rep.client.callTool({ name: 'fail', arguments: {} }).catch((e: McpError) => e);
    expect((again as McpError).code).toBe(-32602);
    expect((again as McpError).message).toBe((failed as McpError).message);
    const miss = await rep.client.callTool({ name: 'crash', arguments: {} }).catch((e: McpError) => e);
    expect((miss as McpError).code).toBe(-32050);
    await rep.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a server that cannot start, or exits at once: each request gets one error, the one naming the command; nothing recorded, no tape written', async () => {
    const dir = tmp('nostart');
    const init = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } };
    const input = [init, { jsonrpc: '2.0', method: 'notifications/initialized' }, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'create_entities', arguments: {} } }].map((m) => `${JSON.stringify(m)}\n`).join('');
    for (const [name, server, said] of [
      ['enoent', ['no-such-command-xyz'], /^tapedeck: could not start the MCP server "no-such-command-xyz": ENOENT\. Check the server command after --\.$/],
      ['exit', ['node', '-e', 'process.exit(3)'], /^tapedeck: the MCP server exited \(code 3\)/],
    ] as const) {
      const tape = join(dir, `${name}.tape`);
      const r = spawnSync('node', [CLI, 'mcp', '--tape', tape, '--mode', 'record', '--', ...server], { input, encoding: 'utf8' });
      expect(r.status).toBe(1);
      const answers = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { id: number; error: { code: number; message: string } });
      expect(answers.map((a) => a.id)).toEqual([0, 1]);
      for (const a of answers) {
        expect(a.error.code).toBe(-32051);
        expect(a.error.message).toMatch(said);
      }
      // Never started again for the later messages: one failure said once.
      if (name === 'enoent') expect(r.stderr.match(/E_UPSTREAM/g)).toHaveLength(1);
      expect(r.stderr).toContain(`no MCP exchange recorded; ${tape} not written`);
      expect(r.stderr).not.toMatch(/exchange\(s\) recorded/);
      expect(existsSync(tape)).toBe(false);
    }
    // The SDK Client: one answer to its initialize, so no "response for an unknown message ID".
    const errors: Error[] = [];
    const client = new Client({ name: 'tapedeck-test', version: '1' });
    client.onerror = (e) => errors.push(e);
    const transport = new StdioClientTransport({ command: 'node', args: [CLI, 'mcp', '--tape', join(dir, 'sdk.tape'), '--mode', 'record', '--', 'no-such-command-xyz'], stderr: 'ignore' });
    const failed = await client.connect(transport).catch((e: McpError) => e);
    expect((failed as McpError).code).toBe(-32051);
    expect((failed as McpError).message).toContain('Check the server command after --');
    await client.close();
    expect(errors.map((e) => e.message).filter((m) => m.includes('unknown message ID'))).toEqual([]);
    // The Client closed the transport itself when connect failed, without waiting for tapedeck
    // to exit: the tape it opened is gone once it has.
    await vi.waitFor(() => expect(existsSync(join(dir, 'sdk.tape'))).toBe(false), { timeout: 10_000, interval: 50 });
    rmSync(dir, { recursive: true, force: true });
  });

  it('piped input closed right after the last request: the answers still on the way are recorded, with no warning', async () => {
    const dir = tmp('piped');
    const tape = join(dir, 'memory.tape');
    const init = { id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'piped', version: '1' } } };
    const input = [init, { method: 'notifications/initialized' }, { id: 2, method: 'tools/list' }, { id: 3, method: 'tools/call', params: { name: 'read_graph', arguments: {} } }];
    // spawnSync writes the input and closes stdin at once, before the server has answered
    // anything: what `printf ... | tapedeck mcp` does.
    const r = spawnSync('node', [CLI, 'mcp', '--tape', tape, '--mode', 'record', '--', 'node', MEMORY], {
      input: input.map((m) => `${JSON.stringify({ jsonrpc: '2.0', ...m })}\n`).join(''),
      encoding: 'utf8',
      env: { ...process.env, MEMORY_FILE_PATH: join(dir, 'memory.jsonl') },
    });
    expect(r.status).toBe(0);
    const answers = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { id: number; result?: unknown });
    expect(answers.map((a) => [a.id, a.result !== undefined])).toEqual([[1, true], [2, true], [3, true]]);
    expect(r.stderr).not.toContain('had no answer');
    expect(r.stderr).toContain('4 MCP exchange(s) recorded');
    // Stored as each exchange became whole (pipelined, the notification before the initialize answer).
    expect((await mcpRecordsOf(tape)).map((x) => x.method).sort()).toEqual(['initialize', 'notifications/initialized', 'tools/call', 'tools/list']);
    rmSync(dir, { recursive: true, force: true });
  });

  it('piped input closed while a call hangs: the others are recorded, only the hung call is warned about, after --shutdown-timeout', async () => {
    const dir = tmp('piped-hang');
    const tape = join(dir, 'odd.tape');
    const init = { id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'piped', version: '1' } } };
    const input = [init, { method: 'notifications/initialized' }, { id: 2, method: 'tools/call', params: { name: 'hang', arguments: {} } }, { id: 3, method: 'tools/call', params: { name: 'echo', arguments: { text: 'late' } } }];
    const t0 = Date.now();
    const r = spawnSync('node', [CLI, 'mcp', '--tape', tape, '--mode', 'record', '--shutdown-timeout', '700', '--', 'node', ODD], {
      input: input.map((m) => `${JSON.stringify({ jsonrpc: '2.0', ...m })}\n`).join(''),
      encoding: 'utf8',
    });
    expect(r.status).toBe(0);
    // The wait is bounded by --shutdown-timeout, not by the request timeout (10 minutes).
    expect(Date.now() - t0).toBeGreaterThanOrEqual(700);
    expect(Date.now() - t0).toBeLessThan(8000);
    expect(r.stdout.trim().split('\n').map((l) => (JSON.parse(l) as { id: number }).id)).toEqual([1, 3]);
    const warned = r.stderr.split('\n').filter((l) => l.includes('had no answer'));
    expect(warned).toHaveLength(1);
    expect(warned[0]).toContain('tools/call hang');
    expect(warned[0]).toContain('--shutdown-timeout');
    expect((await mcpRecordsOf(tape)).map((x) => (x.request.params as { name?: string } | undefined)?.name ?? x.method).sort()).toEqual(['echo', 'initialize', 'notifications/initialized']);
    rmSync(dir, { recursive: true, force: true });
  });

  it('secrets in params and answers never reach the tape, and two calls that differ only in a secret stay two recordings', async () => {
    const dir = tmp('secrets');
    const tape = join(dir, 'secrets.tape');
    const key = `sk-proj-${'A1b2C3d4'.repeat(5)}`;
    const rec = await viaTapedeck(tape, 'record', ['node', ODD], { env: { ODD_KEY: key } });
    const leaked = await rec.client.callTool({ name: 'secret', arguments: {} });
    expect(JSON.stringify(leaked)).toContain(key);
    await rec.client.callTool({ name: 'echo', arguments: { token: 'Bearer aaaaaaaaaaaaaaaaaaaaaaaa' } });
    await rec.client.callTool({ name: 'echo', arguments: { token: 'Bearer bbbbbbbbbbbbbbbbbbbbbbbb' } });
    await rec.close();
    const bytes = readFileSync(tape).toString('latin1');
    expect(bytes).not.toContain(key);
    expect(bytes).not.toContain('aaaaaaaaaaaaaaaaaaaaaaaa');
    const echoes = (await mcpRecordsOf(tape)).filter((r) => (r.request.params as { name?: string } | undefined)?.name === 'echo');
    expect(echoes).toHaveLength(2);
    expect(echoes[0]!.key).not.toBe(echoes[1]!.key);

    const rep = await viaTapedeck(tape, 'replay', FAILS_IF_RUN);
    // Masked as an HTTP recording's answer is on the same tape: keyed under the tape's salt.
    expect(JSON.stringify(await rep.client.callTool({ name: 'secret', arguments: {} }))).toMatch(/\[REDACTED:[0-9a-f]{16}\]/);
    expect(JSON.stringify(await rep.client.callTool({ name: 'echo', arguments: { token: 'Bearer bbbbbbbbbbbbbbbbbbbbbbbb' } }))).toMatch(/\[REDACTED:[0-9a-f]{16}\]/);
    const other = await rep.client.callTool({ name: 'echo', arguments: { token: 'Bearer cccccccccccccccccccccccc' } }).catch((e: McpError) => e);
    expect((other as McpError).code).toBe(-32050);
    expect((other as McpError).message).not.toContain('cccccccccccccccccccccccc');
    await rep.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('stdout carries only the protocol: a replayed session writes one JSON-RPC message per line, tapedeck speaks on stderr', async () => {
    const dir = tmp('stdout');
    const tape = join(dir, 'odd.tape');
    const rec = await viaTapedeck(tape, 'record', ['node', ODD]);
    await rec.client.listTools();
    await rec.close();
    const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'tapedeck-test', version: 'other' } } };
    const input = [init, { jsonrpc: '2.0', method: 'notifications/initialized' }, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'nope' } }]
      .map((m) => JSON.stringify(m))
      .join('\n');
    const r = spawnSync('node', [CLI, 'mcp', '--tape', tape, '--', ...FAILS_IF_RUN], { input: `${input}\n`, encoding: 'utf8' });
    expect(r.status).toBe(0);
    const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { id: number; result?: unknown; error?: { code: number } });
    expect(lines.map((l) => l.id)).toEqual([1, 2, 3]);
    expect(lines[2]!.error!.code).toBe(-32050);
    expect(r.stderr).toContain('MCP miss');
    // Run by an MCP host, perhaps outside the project: the command names the package.
    expect(r.stderr).toContain(`re-record: npx llm-tapedeck mcp --tape ${tape} --mode record -- node -e `);
    expect(r.stderr).not.toMatch(/^THE SERVER WAS STARTED$/m);
    rmSync(dir, { recursive: true, force: true });
  });

  it('a lone surrogate in arguments gets its own error, -32053, naming the member, in record and replay', async () => {
    const dir = tmp('surrogate');
    const tape = join(dir, 'odd.tape');
    const init = { id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };
    // JSON.stringify writes a lone surrogate as the escape \ud800, which JSON.parse reads back as one.
    const lone = { id: 2, method: 'tools/call', params: { name: 'echo', arguments: { text: 'half a pair: \ud800' } } };
    const echo = { id: 3, method: 'tools/call', params: { name: 'echo', arguments: { text: 'fine' } } };
    const recorded = await rawSession(['--tape', tape, '--mode', 'record', '--', 'node', ODD], [init, { method: 'notifications/initialized' }, lone, echo]);
    const replayed = await rawSession(['--tape', tape, '--', ...FAILS_IF_RUN], [init, { method: 'notifications/initialized' }, lone, echo]);
    for (const lines of [recorded, replayed]) {
      const err = lines.find((l) => l.id === 2)!.error as { code: number; message: string };
      expect(err.code).toBe(-32053);
      expect(err.message).toContain('cannot be keyed');
      expect(err.message).toContain('$.params.arguments.text');
      // The session goes on.
      expect(lines.find((l) => l.id === 3)!.result).toEqual(recorded.find((l) => l.id === 3)!.result);
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('a miss message is one line, with the re-record command, however long the tape path', async () => {
    const dir = tmp('miss-line');
    // A long tape path: the message with its re-record command is far over one headline.
    const tape = join(dir, `${'a-long-folder-name-'.repeat(4)}odd.tape`);
    const init = { id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };
    const echo = (text: string) => ({ id: 3, method: 'tools/call', params: { name: 'echo', arguments: { text } } });
    await rawSession(['--tape', tape, '--mode', 'record', '--', 'node', ODD], [init, { method: 'notifications/initialized' }, echo('fine')]);
    const replayed = await rawSession(['--tape', tape, '--', ...FAILS_IF_RUN], [init, { method: 'notifications/initialized' }, echo('other')]);
    const miss = replayed.find((l) => l.id === 3)!.error as { code: number; message: string };
    expect(miss.code).toBe(-32050);
    expect(miss.message).not.toContain('\n');
    expect(miss.message).toMatch(/^tapedeck miss: tools\/call echo: params\.arguments\.text differs, "other" vs "fine" in the closest recording; re-record: npx llm-tapedeck mcp --tape \S+odd\.tape --mode record -- node -e /);
    rmSync(dir, { recursive: true, force: true });
  });

  it("replay answers with the caller's id and sends progress with the caller's progress token", async () => {
    const dir = tmp('token');
    const tape = join(dir, 'e.tape');
    const init = { id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };
    const call = (id: unknown, token: unknown) => ({ id, method: 'tools/call', params: { name: 'trigger-long-running-operation', arguments: { duration: 0.1, steps: 2 }, _meta: { progressToken: token } } });
    const recorded = await rawSession(['--tape', tape, '--mode', 'record', '--', 'node', EVERYTHING, 'stdio'], [init, { method: 'notifications/initialized' }, call(2, 'recorded-token')]);
    const progress = (lines: Record<string, unknown>[]) => lines.filter((l) => l.method === 'notifications/progress').map((l) => (l.params as { progressToken: unknown; progress: number }));
    expect(progress(recorded).map((p) => p.progressToken)).toEqual(['recorded-token', 'recorded-token']);
    const replayed = await rawSession(['--tape', tape, '--', ...FAILS_IF_RUN], [{ ...init, id: 'a' }, { method: 'notifications/initialized' }, call('b', 99)]);
    expect(progress(replayed)).toEqual(progress(recorded).map((p) => ({ ...p, progressToken: 99 })));
    const answers = replayed.filter((l) => l.method === undefined);
    expect(answers.map((l) => l.id)).toEqual(['a', 'b']);
    expect(answers[1]!.result).toEqual(recorded.find((l) => l.id === 2)!.result);
    rmSync(dir, { recursive: true, force: true });
  });

  it('usage errors are one line on stderr with exit code 2', () => {
    const r = spawnSync('node', [CLI, 'mcp', '--mode', 'record'], { encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/E_USAGE mcp needs --tape/);
    // A negative number is a value the flag refuses, as tapedeck serve words it, not "ambiguous".
    const negative = spawnSync('node', [CLI, 'mcp', '--tape', 'x.tape', '--timeout', '-5'], { encoding: 'utf8' });
    expect(negative.status).toBe(2);
    expect(negative.stderr).toBe('tapedeck: E_ARG Invalid --timeout "-5".\nhint: Use a whole number of milliseconds from 1 to 2147483647, e.g. --timeout 30000.\n');
    expect(spawnSync('node', [CLI, 'mcp', '--tape', 'x.tape', '--timeout', '3000000000'], { encoding: 'utf8' }).stderr).toContain('Invalid --timeout "3000000000"');
    const noCmd = spawnSync('node', [CLI, 'mcp', '--tape', 'x.tape', '--mode', 'record'], { encoding: 'utf8' });
    expect(noCmd.status).toBe(2);
    expect(noCmd.stderr).toContain('give its command after --');
    const help = spawnSync('node', [CLI, 'mcp', '--help'], { encoding: 'utf8' });
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('Usage: tapedeck mcp --tape FILE');
    // Through npx, the package's name: a bare `tapedeck` would fetch an unrelated package.
    expect(help.stdout).toContain('"command": "npx",');
    expect(help.stdout).toContain('"args": ["-y", "llm-tapedeck", "mcp"');
    expect(help.stdout).not.toContain('["tapedeck"');
    const top = spawnSync('node', [CLI, '--help'], { encoding: 'utf8' });
    expect(top.stdout).toContain('mcp --tape FILE [--mode M] -- <server command>');
  });
});
