// An MCP call whose params hold a run's timestamp or random id (an entity named run-<uuid>,
// an observation "started <ISO time>") replays when tapeTransport is given volatileText (and
// volatileKeys), with the meaning they have for the model's requests (docs/matching.md). Before,
// tapeTransport refused the option (E_ARG unknown option) and every replay missed.
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import { tapeTransport } from '../../src/mcp/index.ts';
import { mcpKey } from '../../src/mcp/key.ts';
import { VOLATILE_PATTERNS } from '../../src/index.ts';
import { CLI, FAILS_IF_RUN, MEMORY, tmp } from './helpers.ts';

const never = () => {
  throw new Error('replay made the live transport');
};

describe('volatile values in MCP call params', { timeout: 60_000 }, () => {
  it('volatileText: a fresh uuid and time replay the recorded call; without it, a miss', async () => {
    const dir = tmp('mcp-volatile');
    const tape = join(dir, 'mem.tape');
    const volatileText = [VOLATILE_PATTERNS.isoTimestamp, VOLATILE_PATTERNS.uuid];
    const run = async (mode: string, opts: Record<string, unknown>) => {
      const misses: string[] = [];
      const inner = mode === 'record' ? () => new StdioClientTransport({ command: 'node', args: [MEMORY], env: { ...(process.env as Record<string, string>), MEMORY_FILE_PATH: join(dir, `m-${randomUUID()}.jsonl`) }, stderr: 'ignore' }) : never;
      const c = new Client({ name: 'agent', version: '1' });
      await c.connect(tapeTransport(inner, { tape, mode, onMiss: (r) => misses.push(r), ...opts }));
      const name = `run-${randomUUID()}`;
      const r = await c
        .callTool({ name: 'create_entities', arguments: { entities: [{ name, entityType: 'run', observations: [`started ${new Date(Date.now() + Math.random() * 1e9).toISOString()}`], meta: { nonce: randomUUID().slice(0, 8) } }] } })
        .then((x) => (x.content as { text: string }[])[0]!.text, (e: Error) => `ERR ${e.message}`);
      await c.close();
      return { r, misses };
    };
    const recorded = await run('record', { volatileText, volatileKeys: ['nonce'] });
    expect(recorded.r).toContain('run-');
    const replayed = await run('replay', { volatileText, volatileKeys: ['nonce'] });
    expect(replayed.misses).toEqual([]);
    expect(replayed.r).toBe(recorded.r);
    // Without the options the fresh values are a miss, as before.
    const plain = await run('replay', {});
    expect(plain.r).toContain('tapedeck miss');
  });

  it('tapedeck mcp --volatile-text: a fresh uuid replays the recorded call', async () => {
    const dir = tmp('mcp-volatile-cli');
    const tape = join(dir, 'mem.tape');
    const run = async (mode: string, server: string[]) => {
      const c = new Client({ name: 'host', version: '1' });
      await c.connect(new StdioClientTransport({ command: 'node', args: [CLI, 'mcp', '--tape', tape, '--mode', mode, '--volatile-text', VOLATILE_PATTERNS.uuid.source, '--volatile-key', 'nonce', '--', ...server], env: { ...(process.env as Record<string, string>), MEMORY_FILE_PATH: join(dir, 'm.jsonl') }, stderr: 'ignore' }));
      const r = await c
        .callTool({ name: 'create_entities', arguments: { entities: [{ name: `run-${randomUUID()}`, entityType: 'run', observations: [], nonce: randomUUID() }] } })
        .then((x) => (x.content as { text: string }[])[0]!.text, (e: Error) => `ERR ${e.message}`);
      await c.close();
      return r;
    };
    const recorded = await run('record', ['node', MEMORY]);
    expect(recorded).toContain('run-');
    expect(await run('replay', FAILS_IF_RUN)).toBe(recorded);
  });

  it('a pattern that matches the empty string is E_ARG, as for the model', () => {
    expect(() => tapeTransport(never, { tape: 'x.tape', mode: 'replay', volatileText: [/\d*/] })).toThrow(/matches the empty string/);
  });

  it('a member named __proto__ (JSON.parse makes own ones) stays in the key with volatile values left out', () => {
    const vol = { text: [/\d{4}-\d{2}-\d{2}/g], keys: new Set(['nonce']) };
    const call = (x: number) => JSON.parse(`{"name":"t","arguments":{"__proto__":{"x":${x}},"nonce":"n${x}","day":"2026-01-0${x}"}}`) as unknown;
    expect(mcpKey('tools/call', call(1), vol)).not.toBe(mcpKey('tools/call', call(2), vol));
    // The volatile values themselves are left out: only the __proto__ member tells these apart.
    const same = (x: number, n: number) => JSON.parse(`{"name":"t","arguments":{"__proto__":{"x":${x}},"nonce":"n${n}","day":"2026-01-0${n}"}}`) as unknown;
    expect(mcpKey('tools/call', same(1, 1), vol)).toBe(mcpKey('tools/call', same(1, 2), vol));
  });
});
