// Several sessions of one program on one MCP tape (docs/mcp.md, "Several sessions on one tape").
// Before, they were not told apart: keys named the method and params only, each session replayed
// from the first recording of each call, and each tapeTransport was a record run of its own. So a
// program with server-memory and server-everything on one tape replayed memory's initialize and
// tools/list to the everything client (0 misses); two servers used one after the other lost the
// first one's recordings when the second closed; and one server used twice (other state) replayed
// the second session's answers to the first.
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import { tapeTransport } from '../../src/mcp/index.ts';
import { openTestTape } from '../../src/testing/index.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { isMcpRecord } from '../../src/store/records.ts';
import { EVERYTHING, MEMORY, tmp } from './helpers.ts';

const never = () => {
  throw new Error('replay made the live transport');
};
const memory = (file: string) => () => new StdioClientTransport({ command: 'node', args: [MEMORY], env: { ...(process.env as Record<string, string>), MEMORY_FILE_PATH: file }, stderr: 'ignore' });
const everything = () => new StdioClientTransport({ command: 'node', args: [EVERYTHING, 'stdio'], stderr: 'ignore' });
const memoryFile = () => join(tmp('memfile'), 'm.jsonl');

/** What a client sees of its server: its name and its first tools. */
async function seen(c: Client): Promise<{ server: string | undefined; tools: string[] }> {
  return { server: c.getServerVersion()?.name, tools: (await c.listTools()).tools.map((t) => t.name).slice(0, 3) };
}

async function graph(c: Client): Promise<string[]> {
  const r = await c.callTool({ name: 'read_graph', arguments: {} });
  return (JSON.parse((r.content as { text: string }[])[0]!.text) as { entities: { name: string }[] }).entities.map((e) => e.name);
}

describe('sessions of one program on one MCP tape', { timeout: 60_000 }, () => {
  it('two servers open at once: each replays its own initialize and tools, with no miss', async () => {
    const tape = join(tmp('program-two'), 'two.tape');
    const run = async (mode: 'record' | 'replay', misses: string[]) => {
      const m = new Client({ name: 'agent', version: '1' });
      const e = new Client({ name: 'agent', version: '1' });
      await m.connect(tapeTransport(mode === 'record' ? memory(memoryFile()) : never, { tape, mode, onMiss: (r) => misses.push(r) }));
      await e.connect(tapeTransport(mode === 'record' ? everything : never, { tape, mode, onMiss: (r) => misses.push(r) }));
      const out = { memory: await seen(m), everything: await seen(e) };
      await m.close();
      await e.close();
      return out;
    };
    const misses: string[] = [];
    const recorded = await run('record', misses);
    expect(recorded.memory.server).toBe('memory-server');
    expect(recorded.everything.server).not.toBe('memory-server');
    expect(await run('replay', misses)).toEqual(recorded);
    expect(misses).toEqual([]);
  });

  it('two servers one after the other: the second session keeps the first one\'s recordings, and each replays its own', async () => {
    const tape = join(tmp('program-seq'), 'seq.tape');
    const run = async (mode: 'record' | 'replay', misses: string[]) => {
      const out: Record<string, unknown> = {};
      for (const [name, inner] of [['memory', memory(memoryFile())], ['everything', everything]] as const) {
        const c = new Client({ name: 'agent', version: '1' });
        await c.connect(tapeTransport(mode === 'record' ? inner : never, { tape, mode, onMiss: (r) => misses.push(r) }));
        out[name] = await seen(c);
        await c.close();
      }
      return out;
    };
    const misses: string[] = [];
    const recorded = await run('record', misses);
    // Both initialize recordings are on the tape: the second session replaced none of the first's.
    const inits = (await readTape(tape)).records.map((r) => r.value).filter(isMcpRecord).filter((r) => r.method === 'initialize');
    expect(inits).toHaveLength(2);
    expect(await run('replay', misses)).toEqual(recorded);
    expect(misses).toEqual([]);
  });

  it('one server twice in a row, in two states: each session replays its own answers', async () => {
    const tape = join(tmp('program-same'), 'same.tape');
    const run = async (mode: 'record' | 'replay', misses: string[]) => {
      const out: Record<string, string[]> = {};
      for (const who of ['Alice', 'Bob']) {
        const c = new Client({ name: 'agent', version: '1' });
        await c.connect(tapeTransport(mode === 'record' ? memory(memoryFile()) : never, { tape, mode, onMiss: (r) => misses.push(r) }));
        await c.callTool({ name: 'create_entities', arguments: { entities: [{ name: who, entityType: 'p', observations: [] }] } });
        out[who] = await graph(c);
        await c.close();
      }
      return out;
    };
    const misses: string[] = [];
    expect(await run('record', misses)).toEqual({ Alice: ['Alice'], Bob: ['Bob'] });
    expect(await run('replay', misses)).toEqual({ Alice: ['Alice'], Bob: ['Bob'] });
    // The program run again in one process replays alike.
    expect(await run('replay', misses)).toEqual({ Alice: ['Alice'], Bob: ['Bob'] });
    expect(misses).toEqual([]);
  });

  it('tape.mcp() twice in one test (two servers): each replays its own server', async () => {
    const dir = tmp('program-fixture');
    const path = join(dir, 'agent.tape');
    const test = 'program-sessions > two servers';
    const run = async (mode: 'record' | 'replay') => {
      const t = openTestTape({ tape: path, mode, env: {}, runDir: join(dir, `run-${mode}`), test });
      const m = new Client({ name: 'agent', version: '1' });
      const e = new Client({ name: 'agent', version: '1' });
      await m.connect(t.mcp(mode === 'record' ? memory(memoryFile()) : never));
      await e.connect(t.mcp(mode === 'record' ? everything : never));
      const out = { memory: await seen(m), everything: await seen(e) };
      await m.close();
      await e.close();
      const failure = t.missFailure();
      await t.close();
      return { out, failure };
    };
    const recorded = await run('record');
    expect(recorded.out.memory.server).toBe('memory-server');
    const replayed = await run('replay');
    expect(replayed.failure).toBeUndefined();
    expect(replayed.out).toEqual(recorded.out);
  });

  it('a tape whose sessions were not numbered (an older release) replays a second session as before, with no miss', async () => {
    const tape = join(tmp('program-old'), 'old.tape');
    // Both sessions as session 1, of transports that do not name their server: keyed and stored
    // as an older release stored every session (no record names its server).
    const unnamed = (make: () => StdioClientTransport) => () => {
      const t = make();
      return { start: () => t.start(), send: (m: never) => t.send(m), close: () => t.close(), set onmessage(f: never) { t.onmessage = f; }, set onclose(f: never) { t.onclose = f; }, set onerror(f: never) { t.onerror = f; } };
    };
    const m = new Client({ name: 'agent', version: '1' });
    const e = new Client({ name: 'agent', version: '1' });
    await m.connect(tapeTransport(unnamed(memory(memoryFile())), { tape, mode: 'record', session: 1 }));
    await e.connect(tapeTransport(unnamed(everything), { tape, mode: 'record', session: 1 }));
    const first = await seen(m);
    await seen(e);
    await m.close();
    await e.close();
    expect((await readTape(tape)).records.map((r) => r.value).filter(isMcpRecord).some((r) => 'session' in r)).toBe(false);

    const misses: string[] = [];
    for (const session of [undefined, 2]) {
      const a = new Client({ name: 'agent', version: '1' });
      const b = new Client({ name: 'agent', version: '1' });
      await a.connect(tapeTransport(never, { tape, mode: 'replay', onMiss: (r) => misses.push(r) }));
      await b.connect(tapeTransport(never, { tape, mode: 'replay', ...(session ? { session } : {}), onMiss: (r) => misses.push(r) }));
      // As before sessions were numbered: each session from the first recording of each call.
      expect(await seen(a)).toEqual(first);
      expect(await seen(b)).toEqual(first);
      await a.close();
      await b.close();
    }
    expect(misses).toEqual([]);
  });

  it('session: a number out of range is E_ARG naming the option', async () => {
    const t = tapeTransport(never, { tape: join(tmp('program-arg'), 'x.tape'), mode: 'replay', session: 0 });
    await expect(t.start()).rejects.toMatchObject({ code: 'E_ARG', message: expect.stringContaining('session must be a whole number from 1') });
  });
});
