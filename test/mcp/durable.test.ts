// Nothing is acknowledged that is not stored, for MCP too: an answer reaches the client only once
// its exchange is on the tape. `tapedeck mcp` killed with SIGKILL right after each answered call
// keeps every answered call; over the proxy (Streamable HTTP) and in process an answered call is
// on the tape when the client has it; an exchange whose record fails is answered with an error,
// never with the server's answer.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { tapeTransport } from '../../src/mcp/transport.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { TapeBackend } from '../../src/store/backends/tape.ts';
import { isMcpRecord } from '../../src/store/records.ts';
import { readTape, withTapeLock } from '../../src/store/tape-file.ts';
import { freshNamespace, redisDescribe, useRedis } from '../redis/setup.ts';
import { CLI, EVERYTHING, everythingHttp, FAILS_IF_RUN, tmp } from './helpers.ts';

/** The echo calls on the tape, by message. */
const echoed = async (tape: string): Promise<string[]> =>
  (await readTape(tape)).records
    .map((r) => r.value)
    .filter(isMcpRecord)
    .filter((r) => r.method === 'tools/call')
    .map((r) => String((r.request.params as { arguments: { message: string } }).arguments.message));

const textOf = (r: unknown) => (r as { content: { text: string }[] }).content[0]!.text;

/**
 * Runs `tapedeck mcp --mode record` on `tape` six times, one echo call each, and kills it with
 * SIGKILL the moment the client has the answer; then replays every answered call without the
 * server and checks each gets the answer its client got. Resolves to the messages answered.
 */
async function killAfterEachAnswer(tape: string): Promise<string[]> {
  const answers = new Map<string, string>();
  for (let i = 0; i < 6; i++) {
    const transport = new StdioClientTransport({ command: 'node', args: [CLI, 'mcp', '--tape', tape, '--mode', 'record', '--', 'node', EVERYTHING, 'stdio'], stderr: 'ignore' });
    const client = new Client({ name: 'kill9', version: '1' });
    await client.connect(transport);
    const message = `call ${i}`;
    const result = await client.callTool({ name: 'echo', arguments: { message } });
    // The moment the client has its answer: no chance to write anything more.
    process.kill(transport.pid!, 'SIGKILL');
    answers.set(message, textOf(result));
    await client.close().catch(() => undefined);
  }
  // Replayed without the server, each answered call gets the answer its client got (a call
  // missing from the tape would be a miss, -32050).
  const transport = new StdioClientTransport({ command: 'node', args: [CLI, 'mcp', '--tape', tape, '--', ...FAILS_IF_RUN], stderr: 'ignore' });
  const client = new Client({ name: 'kill9', version: '1' });
  await client.connect(transport);
  try {
    for (const [message, text] of answers) expect(textOf(await client.callTool({ name: 'echo', arguments: { message } }))).toBe(text);
  } finally {
    await client.close();
  }
  return [...answers.keys()];
}

describe('an answered MCP call is on the tape', () => {
  it('tapedeck mcp killed with SIGKILL right after each answered call: every answered call is on the tape and replays', async () => {
    const tape = join(tmp('kill9'), 'kill9.tape');
    const answered = await killAfterEachAnswer(tape);
    expect((await echoed(tape)).sort()).toEqual(answered.sort());
  }, 120_000);

  it('through tapedeck serve (Streamable HTTP): the call is on the tape when its answer arrives', async () => {
    const dir = tmp('http-durable');
    const tape = join(dir, 'http.tape');
    const server = await everythingHttp();
    const proxy = await startProxy({ upstream: server.url, tape, mode: 'record', port: 0, onWarning: () => {} });
    const client = new Client({ name: 'http-durable', version: '1' });
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(`${proxy.url}/mcp`)));
      for (let i = 0; i < 3; i++) {
        await client.callTool({ name: 'echo', arguments: { message: `http ${i}` } });
        expect(await echoed(tape)).toContain(`http ${i}`);
      }
    } finally {
      await client.close();
      await proxy.close();
      await server.stop();
    }
  }, 60_000);

  it('in process (tapeTransport): a record that cannot be stored answers -32054, not the server answer', async () => {
    const dir = tmp('record-failed');
    const tape = join(dir, 'failed.tape');
    const warnings: string[] = [];
    const wrapped = tapeTransport(() => new StdioClientTransport({ command: 'node', args: [EVERYTHING, 'stdio'], stderr: 'ignore' }), {
      tape: new TapeBackend(tape, { lock: { timeoutMs: 150 } }),
      mode: 'record',
      onWarning: (m) => warnings.push(m),
    });
    const client = new Client({ name: 'record-failed', version: '1' });
    await client.connect(wrapped);
    try {
      await withTapeLock(tape, async () => {
        const err = await client.callTool({ name: 'echo', arguments: { message: 'while locked' } }).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(McpError);
        expect((err as McpError).code).toBe(-32054);
        expect((err as McpError).message).toContain('could not be recorded');
        expect((err as McpError).message).toContain('E_TAPE_LOCKED');
      });
      expect(textOf(await client.callTool({ name: 'echo', arguments: { message: 'unlocked' } }))).toContain('unlocked');
    } finally {
      await client.close();
    }
    expect(await echoed(tape)).toEqual(['unlocked']);
    expect(warnings.join('\n')).toContain('could not append an MCP record');
    const m = await wrapped.tape;
    // The call, and the client's notifications/initialized stored as it was sent.
    expect(m.appendFailures).toBe(2);
    expect(m.recorded).toBeGreaterThan(0);
    expect(readFileSync(tape).includes(Buffer.from('while locked'))).toBe(false);
  }, 60_000);
});

redisDescribe('an answered MCP call is in the Redis store', () => {
  const redis = useRedis();
  it('tapedeck mcp on redis:// killed with SIGKILL right after each answered call: every answered call replays', async () => {
    expect(await killAfterEachAnswer(`${redis.current.url}/0?namespace=${freshNamespace('mcp-kill9')}`)).toHaveLength(6);
  }, 120_000);
});
