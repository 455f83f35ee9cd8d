// The MCP side of a record run into the same tape: the agent's filesystem tool read another file
// on the second run (its argument and result changed). Record mode kept the first run's call
// (not made again) beside the new one, which paired with itself as `identical`, while the new
// call was only `added`: `tapedeck diff` said "nothing fails". Now the kept copy is said to be
// kept from an earlier run, and the new call is compared with the old one. A session the latest
// run did not record again (another server's, on the same tape) pairs as it is.
// The real MCP SDK client through tapeTransport (in process) from the real server-filesystem.
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import { driftReport } from '../../src/drift/report.ts';
import { tapeTransport } from '../../src/mcp/transport.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { FILESYSTEM, tmp } from '../mcp/helpers.ts';

/** One session on `tape` in `mode` (session `session`), reading `files`/each of `read`. */
async function session(tape: string, files: string, read: string | string[], session = 1, mode: 'record' | 'update' = 'record'): Promise<void> {
  const inner = new StdioClientTransport({ command: 'node', args: [FILESYSTEM, files], stderr: 'pipe' });
  const client = new Client({ name: 'agent', version: '1.0.0' });
  await client.connect(tapeTransport(inner, { tape, mode, session }) as never);
  try {
    await client.listTools();
    for (const file of [read].flat()) await client.callTool({ name: 'read_text_file', arguments: { path: join(files, file) } });
  } finally {
    await client.close();
  }
}

const values = async (file: string) => (await readTape(file)).records.map((r) => r.value);

describe('an MCP session recorded again in record mode into its tape', () => {
  it('compares the changed call with the old one, and says the old call was kept from an earlier run', async () => {
    const dir = tmp('kept');
    const a = join(dir, 'a');
    const b = join(dir, 'b');
    mkdirSync(a);
    mkdirSync(b);
    writeFileSync(join(a, 'notes.txt'), 'notes v1: the secret door is red\n');
    writeFileSync(join(a, 'other.txt'), 'notes v3: door moved\n');
    writeFileSync(join(b, 'plan.txt'), 'step one\n');
    const tape = join(dir, 'agent.tape');
    const old = join(dir, 'agent.old.tape');
    await session(tape, a, 'notes.txt');
    await session(tape, b, 'plan.txt', 2);
    copyFileSync(tape, old);
    // The agent reads another file now; the second server is not used by this run.
    await session(tape, a, 'other.txt');

    const name = 'agent.tape';
    const r = driftReport([{ name, records: await values(old) }], [{ name, records: await values(tape) }], { old, new: tape });
    const calls = r.entries.filter((e) => e.route === 'mcp tools/call read_text_file');
    const changed = calls.find((e) => e.status === 'paired' && e.requestChange.length > 0);
    expect(changed, JSON.stringify(calls.map((e) => [e.status, e.summary]))).toBeDefined();
    expect(changed!.requestChange[0]).toMatch(/^params\.arguments\.path differs/);
    expect(changed!.primary).toBe('text');
    const kept = r.entries.filter((e) => e.kept);
    expect(kept.map((e) => [e.status, e.primary, e.route, e.summary])).toEqual([['paired', 'identical', 'mcp tools/call read_text_file', 'kept from an earlier run; the latest record run did not make this request again']]);
    // Session 2 (the other server), not recorded again: its exchanges pair with themselves.
    const plan = calls.filter((e) => e !== changed && !e.kept);
    expect(plan.map((e) => [e.status, e.primary, e.kept ?? false])).toEqual([['paired', 'identical', false]]);
    expect(r.summary.failing).toBeGreaterThan(0);
  });

  it('an update run, which records only the call it had not, keeps nothing from an earlier run', async () => {
    const dir = tmp('kept-update');
    writeFileSync(join(dir, 'notes.txt'), 'notes v1\n');
    writeFileSync(join(dir, 'other.txt'), 'notes v3\n');
    const tape = join(dir, 'agent.tape');
    const old = join(dir, 'agent.old.tape');
    await session(tape, dir, 'notes.txt');
    copyFileSync(tape, old);
    await session(tape, dir, ['notes.txt', 'other.txt'], 1, 'update');
    const name = 'agent.tape';
    const r = driftReport([{ name, records: await values(old) }], [{ name, records: await values(tape) }], { old, new: tape });
    expect(r.entries.filter((e) => e.kept)).toEqual([]);
    const calls = r.entries.filter((e) => e.route === 'mcp tools/call read_text_file');
    expect(calls.map((e) => [e.status, e.primary])).toEqual([
      ['paired', 'identical'],
      ['added', ''],
    ]);
  });
});
