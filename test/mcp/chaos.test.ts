// Faults on demand for MCP tool calls, seen by the real MCP SDK client: a JSON-RPC error, an
// isError result, the server's exit mid-call (-32051), a timeout (-32052); the retry gets the
// recorded answer (attempts: 1), and the tape is never written.
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tapeTransport } from '../../src/mcp/index.ts';
import type { ChaosOptions } from '../../src/chaos/options.ts';
import { CLI, EVERYTHING, tmp } from './helpers.ts';

const never = () => {
  throw new Error('replay made the live transport');
};
const dir = tmp('chaos');
const tape = join(dir, 'everything.tape');
const echo = { name: 'echo', arguments: { message: 'hello' } };
let recorded: unknown;
let bytes: Buffer;

beforeAll(async () => {
  const c = new Client({ name: 'tapedeck-test', version: '1' });
  await c.connect(tapeTransport(new StdioClientTransport({ command: 'node', args: [EVERYTHING, 'stdio'], stderr: 'ignore' }), { tape, mode: 'record' }));
  recorded = await c.callTool(echo);
  await c.close();
  bytes = readFileSync(tape);
}, 30_000);
afterAll(() => {
  expect(readFileSync(tape).equals(bytes)).toBe(true);
  rmSync(dir, { recursive: true, force: true });
});

async function client(chaos: ChaosOptions) {
  const t = tapeTransport(never, { tape, mode: 'replay', chaos: { seed: 1, ...chaos }, onMiss: () => {} });
  const c = new Client({ name: 'tapedeck-test', version: '1' });
  await c.connect(t);
  return { c, t };
}

describe('MCP chaos through tapeTransport', () => {
  it('tool-error: the result says isError, and the retry gets the recorded answer', async () => {
    const { c, t } = await client({ faults: { 'tool-error': 1 }, attempts: 1 });
    const first = await c.callTool(echo);
    expect(first.isError).toBe(true);
    expect(JSON.stringify(first.content)).toContain('tapedeck chaos');
    expect(await c.callTool(echo)).toEqual(recorded);
    expect(t.faults()).toEqual({ 'tool-error': 1 });
    await c.close();
  });

  it('error, exit and timeout are JSON-RPC errors the client raises: -32603, -32051, -32052', async () => {
    for (const [fault, code] of [['error', -32603], ['exit', -32051], ['timeout', -32052]] as const) {
      const { c } = await client({ faults: { [fault]: 1 } });
      const e = (await c.callTool(echo).catch((x: unknown) => x)) as McpError;
      expect(e?.code, fault).toBe(code);
      expect(e.message).toContain('injected by tapedeck chaos');
      // The session is still usable: other methods are never faulted.
      expect(await c.ping()).toEqual({});
      await c.close();
    }
  });

  it('is refused in record mode without live', async () => {
    const t = tapeTransport(never, { tape: join(dir, 'other.tape'), mode: 'record', chaos: { faults: { exit: 1 } } });
    await expect(t.start()).rejects.toMatchObject({ code: 'E_CHAOS_MODE' });
  });

  it('tapedeck mcp --chaos: the host sees the injected exit, and the seed is printed', async () => {
    const inner = new StdioClientTransport({ command: 'node', args: [CLI, 'mcp', '--tape', tape, '--chaos', 'exit', '--chaos-seed', '5', '--chaos-attempts', '1', '--', 'false'], stderr: 'pipe' });
    let err = '';
    inner.stderr?.on('data', (b: Buffer) => (err += b.toString()));
    const c = new Client({ name: 'tapedeck-test', version: '1' });
    await c.connect(inner);
    const e = (await c.callTool(echo).catch((x: unknown) => x)) as McpError;
    expect(e?.code).toBe(-32051);
    expect(await c.callTool(echo)).toEqual(recorded);
    await c.close();
    await new Promise((r) => setTimeout(r, 100));
    expect(err).toContain('seed 5');
    expect(err).toMatch(/faults injected: exit 1/);
  });
});
