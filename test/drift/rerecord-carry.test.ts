// `tapedeck rerecord` wrote a new tape of the records it sent again and nothing else: with
// `--only weather` on a tape of LLM calls and MCP exchanges it said `recorded 1 of 1`, `nothing
// fails`, exit 0, and the new tape held 1 record; without --only the MCP exchanges were lost all
// the same, and docs/drift.md's "move the new tape over the old one" lost them for good. Now every
// record not sent again (not picked, not HTTP, a call that failed) is carried over byte for byte
// in its place, the re-recorded ones take theirs, and the report says how many were carried over.
// The real OpenAI SDK records through createFetch against the loopback fake provider, the real
// MCP SDK client through `tapedeck mcp` (dist) from server-filesystem; the CLI runs from dist.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DriftReport } from '../../src/drift/report.ts';
import { placeRerecorded } from '../../src/drift/rerecord.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { isHttpRecord, isMcpRecord } from '../../src/store/records.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { CLI, FILESYSTEM, tmp } from '../mcp/helpers.ts';
import { startUpstream, type Upstream } from '../proxy/fake-upstream.ts';

const dir = tmp('rerecord-carry');
const tape = join(dir, 'agent.tape');
let up: Upstream;

const weather = { type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } };

/** The CLI, run without blocking this process (the fake provider answers from here). */
function run(args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: dir, env: { ...process.env, NO_COLOR: '1', OPENAI_API_KEY: 'sk-live-openai-key' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (status) => done({ status: status ?? -1, stdout, stderr }));
  });
}

/** Each record's frame as hex, and what it is: the LLM call's first words, or the MCP method. */
async function records(file: string): Promise<{ frame: string; what: string }[]> {
  const bytes = readFileSync(file);
  return (await readTape(file)).records.map((x) => {
    const v = x.value;
    const what = isHttpRecord(v) ? `http ${v.request.url} ${JSON.stringify((v.request.body as { messages?: { content: string }[] } | undefined)?.messages?.[0]?.content ?? '')}` : isMcpRecord(v) ? 'mcp' : 'other';
    return { frame: bytes.subarray(x.offset, x.offset + x.length).toString('hex'), what };
  });
}

beforeAll(async () => {
  expect(existsSync(CLI), 'dist/cli.js is missing: run `npm run build` first').toBe(true);
  up = await startUpstream();
  // Three LLM calls and one the API answered with an error (recorded, as recordErrors keeps it)...
  const fetch = createFetch({ tape, mode: 'record', recordErrors: true, onWarning: () => {}, summary: false });
  try {
    const openai = new OpenAI({ baseURL: `${up.url}/v1`, apiKey: 'sk-test-key', maxRetries: 0, fetch });
    await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'What is the capital of France?' }] });
    await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'What is the weather in Paris?' }], tools: [weather] });
    const s = await openai.chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'Stream the capital of France' }] });
    for await (const _ of s);
    await openai.post('/fail', { body: { model: 'gpt-4o-mini', input: 'always fails' } }).catch(() => {});
  } finally {
    await fetch.close();
  }
  // ...then the agent's MCP session on the same tape.
  const files = join(dir, 'files');
  mkdirSync(files, { recursive: true });
  writeFileSync(join(files, 'notes.txt'), 'hello notes\n');
  const transport = new StdioClientTransport({ command: 'node', args: [CLI, 'mcp', '--tape', tape, '--mode', 'record', '--', 'node', FILESYSTEM, files], stderr: 'ignore' });
  const client = new Client({ name: 'carry-test', version: '1.0.0' });
  await client.connect(transport);
  try {
    await client.callTool({ name: 'read_text_file', arguments: { path: join(files, 'notes.txt') } });
  } finally {
    await client.close();
  }
}, 60_000);
afterAll(async () => {
  await up?.close();
});

describe('rerecord carries over what it does not send again', () => {
  it('--only weather: the one call re-recorded in its place, every other record byte for byte in its own', async () => {
    const before = await records(tape);
    const mcp = before.filter((x) => x.what === 'mcp').length;
    expect(before.slice(0, 4).map((x) => x.what)).toEqual([
      'http /v1/chat/completions "What is the capital of France?"',
      'http /v1/chat/completions "What is the weather in Paris?"',
      'http /v1/chat/completions "Stream the capital of France"',
      'http /v1/fail ""',
    ]);
    expect(mcp).toBeGreaterThanOrEqual(3);
    up.calls.length = 0;
    const r = await run(['rerecord', 'agent.tape', '--yes', '--only', 'weather', '--out', 'weather.tape', '--format', 'json']);
    expect(r.stderr).toContain('recorded 1 of 1 into weather.tape');
    expect(r.stderr).toContain(`carried over ${3 + mcp} records unchanged, in their places (3 not picked by --only, ${mcp} MCP exchanges): weather.tape holds every record of agent.tape.`);
    expect(r.status).toBe(0);
    expect(up.calls.map((c) => c.url)).toEqual(['/v1/chat/completions']);
    const after = await records(join(dir, 'weather.tape'));
    expect(after.map((x) => x.what)).toEqual(before.map((x) => x.what));
    after.forEach((x, i) => (i === 1 ? expect(x.frame).not.toBe(before[i]!.frame) : expect(x.frame, `record #${i}`).toBe(before[i]!.frame)));
    // The diff compares the call re-recorded, nothing else.
    const report = JSON.parse(r.stdout) as DriftReport;
    expect(report.summary).toMatchObject({ pairs: 1, added: 0, removed: 0 });
    expect(report.entries.map((e) => [e.old?.index, e.new?.index])).toEqual([[1, 1]]);
  });

  it('every call: MCP exchanges carried over, a call that fails keeps its old recording (exit 3), the rest re-recorded in place', async () => {
    const before = await records(tape);
    const mcp = before.filter((x) => x.what === 'mcp').length;
    const r = await run(['rerecord', 'agent.tape', '--yes', '--out', 'all.tape', '--format', 'json']);
    expect(r.stderr).toContain(`tapedeck rerecord: 4 requests to ${up.url} (${mcp} non-HTTP record(s) not sent, kept as they are)`);
    expect(r.stderr).toContain('recorded 3 of 4 into all.tape');
    expect(r.stderr).toMatch(/\ntapedeck rerecord: record #3 not recorded: HTTP 500[^\n]*; its old recording is kept\.\n/);
    expect(r.stderr).toContain(`carried over ${1 + mcp} records unchanged, in their places (1 whose call failed, ${mcp} MCP exchanges)`);
    expect(r.stderr).toContain('tapedeck rerecord: incomplete: 1 of 4 call(s) not recorded (exit 3); their old recordings are kept in all.tape');
    expect(r.status).toBe(3);
    const after = await records(join(dir, 'all.tape'));
    expect(after.map((x) => x.what)).toEqual(before.map((x) => x.what));
    after.forEach((x, i) => (i < 3 ? expect(x.frame).not.toBe(before[i]!.frame) : expect(x.frame, `record #${i}`).toBe(before[i]!.frame)));
    const report = JSON.parse(r.stdout) as DriftReport;
    expect(report.summary).toMatchObject({ pairs: 3, added: 0, removed: 0 });
  });
});

describe('placeRerecorded', () => {
  const call = (content: string) => ({ v: 1, kind: 'http', match: 'llm', route: 'POST /v1/chat/completions', key: 'k', request: { method: 'POST', url: '/v1/chat/completions', headers: {}, body: { messages: [{ role: 'user', content }] } }, response: { status: 200, headers: {}, body: new Uint8Array() } });
  it('puts each new recording in the place of its call, whatever order the calls finished in', () => {
    const old = [call('a'), { kind: 'mcp' }, call('b'), call('c')];
    const fresh = [call('c'), call('a')];
    expect(placeRerecorded(old, [0, 3], fresh).order).toEqual([{ fresh: 1 }, { old: 1 }, { old: 2 }, { fresh: 0 }]);
  });
  it('repeats of one request keep the recorder order; a new recording found by nothing takes the first place left', () => {
    const old = [call('a'), call('a'), call('b')];
    expect(placeRerecorded(old, [0, 1], [call('a'), call('a')]).order).toEqual([{ fresh: 0 }, { fresh: 1 }, { old: 2 }]);
    expect(placeRerecorded(old, [2], [call('changed')]).order).toEqual([{ old: 0 }, { old: 1 }, { fresh: 0 }]);
  });
});
