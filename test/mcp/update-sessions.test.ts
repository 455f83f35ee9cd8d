// Two sessions on one tape, with server-memory: session A recorded, then session B added in
// update mode against a fresh server. B's create_entities misses, so B goes live; its read_graph
// is a call the tape already has (A's), answered live with B's graph. Replay must give each
// session what it saw: B ["Bob"], A ["Alice"]. Before, B's live read_graph was not stored (the
// tape "already had" it), so B's replay got A's graph, ["Alice"]: another session's answer,
// served silently (/tmp/trial-run/mcp-update-stale).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import { mcpKey, tapeTransport } from '../../src/mcp/index.ts';
import { mcpServerKey } from '../../src/mcp/key.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { isMcpRecord } from '../../src/store/records.ts';
import { CLI, FAILS_IF_RUN, MEMORY, tmp } from './helpers.ts';

const env = (file: string) => ({ ...(process.env as Record<string, string>), MEMORY_FILE_PATH: file });

/** create_entities `who`, then read_graph: the names in the graph (or the error a miss gives). */
async function session(client: Client, who: string): Promise<string[]> {
  await client.callTool({ name: 'create_entities', arguments: { entities: [{ name: who, entityType: 'person', observations: [] }] } });
  return names(client);
}

async function names(client: Client): Promise<string[]> {
  const graph = await client.callTool({ name: 'read_graph', arguments: {} });
  const text = (graph.content as { text: string }[])[0]!.text;
  return (JSON.parse(text) as { entities: { name: string }[] }).entities.map((e) => e.name);
}

/** `tapedeck mcp` over stdio (the built CLI), as an MCP host starts it. */
async function viaCli(tape: string, mode: string, server: string[], memoryFile: string) {
  const inner = new StdioClientTransport({ command: 'node', args: [CLI, 'mcp', '--tape', tape, '--mode', mode, '--', ...server], env: env(memoryFile), stderr: 'pipe' });
  let stderr = '';
  inner.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
  const client = new Client({ name: 'trial', version: '1.0.0' });
  await client.connect(inner);
  return { client, stderr: () => stderr };
}

/** In process: tapeTransport around the SDK's stdio transport (never made in replay). */
async function inProcess(tape: string, mode: string, memoryFile: string | undefined, misses: string[] = []) {
  const inner = memoryFile === undefined ? () => { throw new Error('replay made the live transport'); } : () => new StdioClientTransport({ command: 'node', args: [MEMORY], env: env(memoryFile), stderr: 'ignore' });
  const client = new Client({ name: 'trial', version: '1.0.0' });
  await client.connect(tapeTransport(inner as never, { tape, mode, onMiss: (r: string) => misses.push(r) }) as never);
  return client;
}

describe('an update-mode session that went live replays what it saw', { timeout: 60_000 }, () => {
  it('tapedeck mcp: record A, update B on a fresh server, then replay B gives B\'s graph and A\'s replay still gives A\'s', async () => {
    const dir = tmp('update-sessions');
    const tape = join(dir, 'memory.tape');
    const server = ['node', MEMORY];

    const a = await viaCli(tape, 'record', server, join(dir, 'memory-Alice.jsonl'));
    expect(await session(a.client, 'Alice')).toEqual(['Alice']);
    await a.client.close();

    const b = await viaCli(tape, 'update', server, join(dir, 'memory-Bob.jsonl'));
    expect(await session(b.client, 'Bob')).toEqual(['Bob']);
    await b.client.close();

    // Replay: the server command fails if run.
    const rb = await viaCli(tape, 'replay', FAILS_IF_RUN, join(dir, 'unused.jsonl'));
    expect(await session(rb.client, 'Bob')).toEqual(['Bob']);
    await rb.client.close();
    expect(rb.stderr()).not.toContain('miss');
    expect(rb.stderr()).not.toContain('THE SERVER WAS STARTED');

    const ra = await viaCli(tape, 'replay', FAILS_IF_RUN, join(dir, 'unused.jsonl'));
    expect(await session(ra.client, 'Alice')).toEqual(['Alice']);
    await ra.client.close();
    expect(ra.stderr()).not.toContain('miss');

    // Update again: B has everything it asks for, so the server is never started.
    const ub = await viaCli(tape, 'update', FAILS_IF_RUN, join(dir, 'unused.jsonl'));
    expect(await session(ub.client, 'Bob')).toEqual(['Bob']);
    await ub.client.close();
    expect(ub.stderr()).not.toContain('THE SERVER WAS STARTED');
  });

  it('in process: every call B makes once live replays as B saw it, in order; a call new to the tape keeps its plain key', async () => {
    const dir = tmp('update-sessions-inproc');
    const tape = join(dir, 'memory.tape');
    const a = await inProcess(tape, 'record', join(dir, 'a.jsonl'));
    expect(await session(a, 'Alice')).toEqual(['Alice']);
    await a.close();

    const b = await inProcess(tape, 'update', join(dir, 'b.jsonl'));
    expect(await session(b, 'Bob')).toEqual(['Bob']);
    expect(await names(b)).toEqual(['Bob']);
    await b.close();

    const misses: string[] = [];
    const rb = await inProcess(tape, 'replay', undefined, misses);
    expect(await session(rb, 'Bob')).toEqual(['Bob']);
    expect(await names(rb)).toEqual(['Bob']);
    await rb.close();
    const ra = await inProcess(tape, 'replay', undefined, misses);
    expect(await session(ra, 'Alice')).toEqual(['Alice']);
    await ra.close();
    expect(misses).toEqual([]);

    // B's create_entities was new to the tape: under its key, as record mode stores it. Its
    // read_graph calls were not (A's is there): they are stored at B's place, not as recordings
    // the next session to call read_graph would get.
    const records = (await readTape(tape)).records.map((x) => x.value).filter(isMcpRecord);
    const bob = records.filter((r) => JSON.stringify(r.request).includes('"Bob"'));
    expect(bob).toHaveLength(1);
    // (Keys are scoped to the session's server, whose digest the record carries.)
    const plain = (params: unknown) => mcpServerKey(mcpKey('tools/call', params), 1, (bob[0] as { server?: string }).server);
    expect(bob[0]!.key).toBe(plain(bob[0]!.request.params));
    const reads = records.filter((r) => (r.request.params as { name?: string } | undefined)?.name === 'read_graph');
    expect(reads).toHaveLength(3);
    expect(reads.filter((r) => r.key === plain({ name: 'read_graph', arguments: {} }))).toHaveLength(1);

    // Update again, going further: the fresh server is brought to B's state from the tape, and
    // the new call is recorded for B.
    const ub = await inProcess(tape, 'update', join(dir, 'b2.jsonl'));
    expect(await session(ub, 'Bob')).toEqual(['Bob']);
    expect(await names(ub)).toEqual(['Bob']);
    const opened = await ub.callTool({ name: 'open_nodes', arguments: { names: ['Bob', 'Alice'] } });
    await ub.close();
    expect(JSON.stringify(opened)).toContain('Bob');
    expect(JSON.stringify(opened)).not.toContain('Alice');
    const rb2 = await inProcess(tape, 'replay', undefined, misses);
    expect(await session(rb2, 'Bob')).toEqual(['Bob']);
    expect(await names(rb2)).toEqual(['Bob']);
    expect(await rb2.callTool({ name: 'open_nodes', arguments: { names: ['Bob', 'Alice'] } })).toEqual(opened);
    await rb2.close();
    expect(misses).toEqual([]);
  });

  it('in process: record mode re-records the session update mode added, and leaves the other session alone', async () => {
    const dir = tmp('update-sessions-rerecord');
    const tape = join(dir, 'memory.tape');
    const a = await inProcess(tape, 'record', join(dir, 'a.jsonl'));
    expect(await session(a, 'Alice')).toEqual(['Alice']);
    await a.close();
    const b = await inProcess(tape, 'update', join(dir, 'b.jsonl'));
    expect(await session(b, 'Bob')).toEqual(['Bob']);
    await b.close();

    // B again, in record mode, against a server that already knows Carol: a different answer.
    const seeded = join(dir, 'seeded.jsonl');
    writeFileSync(seeded, `${JSON.stringify({ type: 'entity', name: 'Carol', entityType: 'person', observations: [] })}\n`);
    const rec = await inProcess(tape, 'record', seeded);
    expect(await session(rec, 'Bob')).toEqual(['Carol', 'Bob']);
    await rec.close();

    const rb = await inProcess(tape, 'replay', undefined);
    expect(await session(rb, 'Bob')).toEqual(['Carol', 'Bob']);
    await rb.close();
    const ra = await inProcess(tape, 'replay', undefined);
    expect(await session(ra, 'Alice')).toEqual(['Alice']);
    await ra.close();
    // Nothing left behind: initialize, initialized, A's two calls, B's two calls.
    expect((await readTape(tape)).records.filter((x) => isMcpRecord(x.value))).toHaveLength(6);
  });
});
