// `tapedeck diff` and `tapedeck stats` on MCP tapes: sessions of the real SDK Client recorded
// through `tapedeck mcp` (node dist/cli.js) from the real server-filesystem, then the files
// changed and the session recorded again. A changed file is a text change of its tool call and
// fails the diff; the same files are identical and pass; a file gone is an error now (status); a
// call made only in the new session is added. Then the classes on their own, and records of a
// kind no report compares: said, never passed over with "nothing fails".
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import { classifyExchanges, type McpAnswerRead } from '../../src/drift/mcp-diff.ts';
import { driftReport } from '../../src/drift/report.ts';
import { appendRecords, createTape, readTape } from '../../src/store/tape-file.ts';
import { CLI, FILESYSTEM, tmp } from '../mcp/helpers.ts';

/** One session through `tapedeck mcp --mode record` against server-filesystem serving `files`. */
async function record(tape: string, files: string, extraCall = false): Promise<void> {
  const transport = new StdioClientTransport({ command: 'node', args: [CLI, 'mcp', '--tape', tape, '--mode', 'record', '--', 'node', FILESYSTEM, files], stderr: 'pipe' });
  const client = new Client({ name: 'drift-test', version: '1.0.0' });
  await client.connect(transport);
  try {
    await client.listTools();
    await client.callTool({ name: 'read_text_file', arguments: { path: join(files, 'notes.txt') } });
    await client.callTool({ name: 'read_text_file', arguments: { path: join(files, 'plan.txt') } });
    await client.callTool({ name: 'list_directory', arguments: { path: files } });
    if (extraCall) await client.callTool({ name: 'get_file_info', arguments: { path: join(files, 'notes.txt') } });
  } finally {
    await client.close();
  }
}

const cli = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });

/** A folder of files and the tape of a session over them. */
async function recorded(name: string, notes: string, opts: { plan?: boolean; extraCall?: boolean; dir?: string } = {}): Promise<string> {
  const dir = opts.dir ?? tmp('drift');
  const files = join(dir, 'files');
  rmSync(files, { recursive: true, force: true });
  mkdirSync(files, { recursive: true });
  writeFileSync(join(files, 'notes.txt'), notes);
  if (opts.plan !== false) writeFileSync(join(files, 'plan.txt'), 'step one\n');
  const live = join(dir, 'fs.tape');
  rmSync(live, { force: true });
  await record(live, files, opts.extraCall);
  const out = join(dir, name);
  copyFileSync(live, out);
  return out;
}

describe('tapedeck diff on MCP tapes recorded from server-filesystem', () => {
  it('a changed file is 1 text pair, exit 1; the same files are identical, exit 0; stats counts the exchanges', async () => {
    expect(existsSync(CLI), 'dist/cli.js is missing: run `npm run build` first').toBe(true);
    const dir = tmp('drift');
    const before = await recorded('old.tape', 'hello notes\n', { dir });
    const same = await recorded('same.tape', 'hello notes\n', { dir });
    const after = await recorded('new.tape', 'COMPLETELY DIFFERENT CONTENT\n', { dir });

    const changed = cli('diff', before, after);
    expect(changed.stderr).toBe('');
    expect(changed.stdout).toMatch(/^tapedeck diff .*old\.tape -> .*new\.tape: 6 pairs \(1 text, 5 identical\), 0 added, 0 removed\n/);
    expect(changed.stdout).toMatch(/^text +new\.tape +3 +mcp tools\/call read_text_file +text \d+% similar/m);
    expect(changed.stdout).toContain('[-hello-]{+COMPLETELY+} [-notes-]{+DIFFERENT CONTENT+}');
    expect(changed.stdout).toContain('1 failing (fail-on: status,structure,tool-calls,finish,text,stream)');
    expect(changed.status).toBe(1);

    const json = JSON.parse(cli('diff', before, after, '--format', 'json').stdout) as { summary: { pairs: number; primary: Record<string, number>; notCompared: unknown[] }; entries: { route: string; shape: string; primary: string; status: string; new: { status: number } }[] };
    expect(json.summary.pairs).toBe(6);
    expect(json.summary.primary).toMatchObject({ text: 1, identical: 5 });
    expect(json.summary.notCompared).toEqual([]);
    const text = json.entries.find((e) => e.primary === 'text')!;
    expect(text).toMatchObject({ route: 'mcp tools/call read_text_file', shape: 'mcp', status: 'paired', new: { status: 200 } });

    const identical = cli('diff', before, same);
    expect(identical.stdout).toMatch(/: 6 pairs \(6 identical\), 0 added, 0 removed\n/);
    expect(identical.stdout).toContain('\nnothing fails (fail-on: status,structure,tool-calls,finish,text,stream)\n');
    expect(identical.status).toBe(0);

    const stats = cli('stats', after);
    expect(stats.status).toBe(0);
    expect(stats.stdout).toMatch(/^1 tape, 0 recorded calls, 6 MCP exchanges \(below\)\n/);
    expect(stats.stdout).toMatch(/^tools\/call read_text_file +2 +0 +[\d.]+ s$/m);
    expect(stats.stdout).toMatch(/^total +6 +0 +[\d.]+ s$/m);
  }, 120_000);

  it('a file gone is an error now (status); a call only the new session makes is added', async () => {
    const dir = tmp('drift');
    const before = await recorded('old.tape', 'hello notes\n', { dir });
    const after = await recorded('new.tape', 'hello notes\n', { dir, plan: false, extraCall: true });
    const r = cli('diff', before, after, '--fail-on', 'status,added');
    // The listing lost the file too: a text change.
    expect(r.stdout).toMatch(/: 6 pairs \(1 status, 1 text, 4 identical\), 1 added, 0 removed\n/);
    expect(r.stdout).toMatch(/^status +new\.tape +4 +mcp tools\/call read_text_file +an error now: tool error: ENOENT/m);
    expect(r.stdout).toMatch(/^added +new\.tape +\d+ +mcp tools\/call get_file_info +new exchange/m);
    expect(r.stdout).toContain('2 failing (fail-on: status,added)');
    expect(r.status).toBe(1);
    // The other way round: the error is gone, the call removed.
    const back = cli('diff', after, before, '--format', 'json');
    const report = JSON.parse(back.stdout) as { entries: { primary: string; status: string; details: { error?: { old?: string; new?: string } } }[] };
    expect(report.entries.find((e) => e.primary === 'status')!.details.error).toEqual({ old: expect.stringMatching(/^tool error: ENOENT/) });
    expect(report.entries.filter((e) => e.status === 'removed')).toHaveLength(1);
    expect(back.status).toBe(1);
  }, 120_000);
});

describe('MCP answers classed', () => {
  const answer = (x: Partial<McpAnswerRead>): McpAnswerRead => ({ answered: true, requests: [], notifications: [], ...x });
  const tool = (text: string, more: Record<string, unknown> = {}) => answer({ result: { content: [{ type: 'text', text }], ...more } });

  it('text, structure, status and noise', () => {
    expect(classifyExchanges(tool('a'), tool('a'))).toEqual({ classes: ['identical'], primary: 'identical', details: {} });
    expect(classifyExchanges(tool('a b'), tool('a c')).primary).toBe('text');
    expect(classifyExchanges(tool('a  b'), tool('a b')).classes).toEqual(['benign']);
    // A tool's error result now, or a JSON-RPC error: status, with what the error says.
    const isError = classifyExchanges(tool('ok'), tool('denied', { isError: true }));
    expect(isError.classes[0]).toBe('status');
    expect(isError.details.error).toEqual({ new: 'tool error: denied' });
    const rpc = classifyExchanges(tool('ok'), answer({ error: { code: -32602, message: 'Unknown tool: x' } }));
    expect(rpc).toEqual({ classes: ['status'], primary: 'status', details: { error: { new: 'error -32602: Unknown tool: x' } } });
    expect(classifyExchanges(answer({ error: { code: -32602, message: 'a' } }), answer({ error: { code: -32603, message: 'a' } })).primary).toBe('status');
    expect(classifyExchanges(answer({ error: { code: -32602, message: 'bad path a' } }), answer({ error: { code: -32602, message: 'bad path b' } })).primary).toBe('text');
    // A tool gone from tools/list: structure; another description: text; _meta: noise.
    const list = (names: string[], description = 'd', meta?: unknown) => answer({ result: { tools: names.map((name) => ({ name, description })), ...(meta ? { _meta: meta } : {}) } });
    expect(classifyExchanges(list(['a', 'b']), list(['a'])).details.structure).toEqual(['result.tools[1]: removed (was object)']);
    expect(classifyExchanges(list(['a']), list(['a'], 'other')).classes).toEqual(['text']);
    expect(classifyExchanges(list(['a'], 'd', { t: 1 }), list(['a'], 'd', { t: 2 })).classes).toEqual(['benign']);
    // structuredContent gained a member: structure beside the text.
    expect(classifyExchanges(tool('a', { structuredContent: { content: 'a' } }), tool('b', { structuredContent: { content: 'b', size: 1 } })).classes).toEqual(['structure', 'text']);
    // The server asks the client for a sampling it did not ask for before: structure.
    expect(classifyExchanges(tool('a'), { ...tool('a'), requests: ['sampling/createMessage'] }).classes).toEqual(['structure']);
    expect(classifyExchanges(tool('a'), { ...tool('a'), notifications: ['notifications/progress'] }).classes).toEqual(['benign']);
  });
});

describe('records no report compares', () => {
  it('are counted and said: never a bare "nothing fails", and stats says what it did not count', async () => {
    const dir = tmp('drift');
    const tape = join(dir, 'other.tape');
    await createTape(tape);
    await appendRecords(tape, [{ v: 1, kind: 'someone.else', note: 'a record of another tool' }]);
    expect((await readTape(tape)).records).toHaveLength(1);
    const r = cli('diff', tape, tape);
    expect(r.stdout).toContain('0 pairs (none), 0 added, 0 removed');
    expect(r.stdout).toContain('nothing fails among the compared recordings (fail-on: status,structure,tool-calls,finish,text,stream); 2 records not compared (someone.else: 1 old, 1 new)');
    expect(r.stdout).not.toMatch(/^nothing fails \(/m);
    const md = cli('diff', tape, tape, '--format', 'markdown');
    expect(md.stdout).toContain('Nothing fails among the compared recordings');
    const stats = cli('stats', tape);
    expect(stats.stdout).toMatch(/^1 tape, 0 recorded calls; 1 record not counted \(someone\.else: 1\)\n/);
    // The report object says it too.
    const report = driftReport([{ name: 't', records: [{ v: 1, kind: 'someone.else' }, undefined] }], [{ name: 't', records: [] }], { old: 'a', new: 'b' });
    expect(report.summary.notCompared).toEqual([{ kind: 'someone.else', old: 1, new: 0 }]);
  });
});
