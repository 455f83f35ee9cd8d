// The tape modes for MCP, with server-memory: update serves what the tape has and, at the first
// miss, starts the server, brings it to the session's state and records what is missing; record
// replaces what it re-records; passthrough writes nothing; timing paces a replay.
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import { tapeTransport } from '../../src/mcp/index.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { isMcpRecord } from '../../src/store/records.ts';
import { EVERYTHING, MEMORY, tmp } from './helpers.ts';

const never = () => {
  throw new Error('replay made the live transport');
};

function memory(file: string) {
  return () => new StdioClientTransport({ command: 'node', args: [MEMORY], env: { ...(process.env as Record<string, string>), MEMORY_FILE_PATH: file }, stderr: 'ignore' });
}

async function connect(tape: string, mode: string, inner: (() => never) | (() => StdioClientTransport) | undefined, extra = {}) {
  const c = new Client({ name: 'tapedeck-test', version: '1' });
  const t = tapeTransport(inner as never, { tape, mode, ...extra });
  await c.connect(t as never);
  return { c, t };
}

const create = (name: string) => ({ name: 'create_entities', arguments: { entities: [{ name, entityType: 'thing', observations: ['x'] }] } });
const open = (name: string) => ({ name: 'open_nodes', arguments: { names: [name] } });

describe('MCP tape modes', () => {
  it('update: the recorded part replays without the server; a miss starts it, replays the session so far into it, and records the rest', async () => {
    const dir = tmp('update');
    const tape = join(dir, 'm.tape');
    const a = await connect(tape, 'record', memory(join(dir, 'first.jsonl')));
    const created = await a.c.callTool(create('Alpha'));
    await a.c.close();

    // A fresh memory file: only the replayed create_entities can put Alpha in it.
    const live = join(dir, 'second.jsonl');
    const u = await connect(tape, 'update', memory(live));
    expect(await u.c.callTool(create('Alpha'))).toEqual(created);
    expect(existsSync(live)).toBe(false);
    const opened = await u.c.callTool(open('Alpha'));
    expect(JSON.stringify(opened)).toContain('Alpha');
    await u.c.close();
    expect(existsSync(live)).toBe(true);

    const r = await connect(tape, 'replay', never);
    expect(await r.c.callTool(create('Alpha'))).toEqual(created);
    expect(await r.c.callTool(open('Alpha'))).toEqual(opened);
    await r.c.close();
    // initialize, initialized, create_entities, open_nodes: nothing recorded twice.
    expect((await readTape(tape)).records.filter((x) => isMcpRecord(x.value))).toHaveLength(4);
    rmSync(dir, { recursive: true, force: true });
  });

  it('record replaces the calls it re-records and keeps the others; passthrough writes nothing', async () => {
    const dir = tmp('rerecord');
    const tape = join(dir, 'm.tape');
    const a = await connect(tape, 'record', memory(join(dir, 'a.jsonl')));
    await a.c.callTool(create('One'));
    await a.c.callTool(open('One'));
    await a.c.close();
    const before = (await readTape(tape)).records.length;
    const b = await connect(tape, 'record', memory(join(dir, 'b.jsonl')));
    await b.c.callTool(create('One'));
    await b.c.close();
    const after = (await readTape(tape)).records.map((x) => x.value).filter(isMcpRecord);
    expect(after).toHaveLength(before);
    // The open_nodes recording from the first run is still there.
    expect(after.some((x) => (x.request.params as { name?: string } | undefined)?.name === 'open_nodes')).toBe(true);

    const p = await connect(join(dir, 'none.tape'), 'passthrough', memory(join(dir, 'c.jsonl')));
    expect(JSON.stringify(await p.c.callTool(create('Two')))).toContain('Two');
    await p.c.close();
    expect(existsSync(join(dir, 'none.tape'))).toBe(false);
    rmSync(dir, { recursive: true, force: true });
  });

  it("timing 'recorded' paces a replay as recorded; the default does not wait", async () => {
    const dir = tmp('timing');
    const tape = join(dir, 'e.tape');
    const run = async (mode: string, extra = {}) => {
      const { c } = await connect(tape, mode, mode === 'record' ? () => new StdioClientTransport({ command: 'node', args: [EVERYTHING, 'stdio'], stderr: 'ignore' }) : never, extra);
      const t0 = performance.now();
      await c.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 0.6, steps: 2 } });
      const ms = performance.now() - t0;
      await c.close();
      return ms;
    };
    expect(await run('record')).toBeGreaterThanOrEqual(550);
    expect(await run('replay', { timing: 'recorded' })).toBeGreaterThanOrEqual(550);
    expect(await run('replay')).toBeLessThan(550);
    rmSync(dir, { recursive: true, force: true });
  });
});
