// After a test file is renamed, its test's tape.mcp() and tape.cache() misses said "no tape ...
// record it" (only the fetch miss named the old place), and following that re-recorded the
// server live into the new folder; then the printed `mv <old dir> <new dir>` moved the old folder
// *into* the new one. Now every miss of the moved file names where its recordings are and the
// move command, and that command works when the new folder exists already (a file there of the
// same name is kept, and the command says so). Through openTestTape, the real MCP SDK client and
// server-memory, and the real openai SDK.
import OpenAI from 'openai';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { execSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openTestTape } from '../../src/testing/session.ts';
import { FAILS_IF_RUN, MEMORY, tmp } from '../mcp/helpers.ts';
import { upstreamSuite } from '../proxy/upstream-suite.ts';

const suite = upstreamSuite('moved-file-mcp');

/** The test `remembers` of `file`: a tool call through tape.mcp(); its result, or the error it got and the test's failure. */
async function mcpTest(root: string, file: string, env: Record<string, string>, server: string[]): Promise<{ result?: string; error?: string; failure?: string }> {
  const folder = file.replace(/^test\//, 'test/__tapes__/').replace(/\.mjs$/, '');
  const t = openTestTape({ tape: join(root, folder, 'remembers.tape'), test: 'remembers', file, root, env, failOnMiss: false });
  const client = new Client({ name: 'agent', version: '1.0.0' });
  try {
    const [command, ...args] = server;
    await client.connect(t.mcp(() => new StdioClientTransport({ command: command!, args, env: { ...process.env, MEMORY_FILE_PATH: join(root, 'memory.jsonl') } as Record<string, string>, stderr: 'ignore' })));
    const r = await client.callTool({ name: 'create_entities', arguments: { entities: [{ name: 'Ada', entityType: 'person', observations: ['met'] }] } });
    return { result: JSON.stringify(r) };
  } catch (e) {
    return { error: (e as Error).message, failure: t.missFailure()?.message };
  } finally {
    await client.close().catch(() => {});
    await t.close();
  }
}

/** The test `says hello` of `file`: one chat call through tape.fetch. */
async function fetchTest(root: string, file: string, env: Record<string, string>): Promise<{ answer?: string; error?: string }> {
  const folder = file.replace(/^test\//, 'test/__tapes__/').replace(/\.mjs$/, '');
  const t = openTestTape({ tape: join(root, folder, 'says-hello.tape'), test: 'says hello', file, root, env, failOnMiss: false });
  const client = new OpenAI({ baseURL: `${suite.upstream.url}/v1`, apiKey: 'sk-test', maxRetries: 0, fetch: t.fetch });
  try {
    const r = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] });
    return { answer: r.choices[0]!.message.content! };
  } catch (e) {
    return { error: (e as Error).message };
  } finally {
    await t.close();
  }
}

/** The test `caches` of `file`: one ReplayCache get (and put when it records). */
async function cacheTest(root: string, file: string, env: Record<string, string>): Promise<{ value?: unknown; error?: string; failure?: string }> {
  const folder = file.replace(/^test\//, 'test/__tapes__/').replace(/\.mjs$/, '');
  const t = openTestTape({ tape: join(root, folder, 'caches.tape'), test: 'caches', file, root, env, failOnMiss: false });
  const request = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'cached question' }] };
  try {
    const c = await t.cache();
    const got = await c.get(request);
    if (got !== undefined) return { value: got };
    await c.put(request, { answer: 42 });
    return { value: { answer: 42 } };
  } catch (e) {
    return { error: (e as Error).message, failure: t.missFailure()?.message };
  } finally {
    await t.close();
  }
}

const MOVE = /(mkdir -p [^\n]*?)(?:\n|$)/;

describe('the misses of a renamed test file', { timeout: 60_000 }, () => {
  it('an MCP miss names the old place and the move command, as the fetch miss does', async () => {
    const root = tmp('moved-mcp');
    mkdirSync(join(root, 'test'), { recursive: true });
    const recorded = await mcpTest(root, 'test/a.test.mjs', { TAPEDECK_MODE: 'record' }, ['node', MEMORY]);
    expect(recorded.result).toContain('Ada');
    expect(existsSync(join(root, 'test/__tapes__/a.test/remembers.mcp.tape'))).toBe(true);

    // a.test.mjs was renamed b.test.mjs (it never existed on disk here: it is gone).
    const moved = await mcpTest(root, 'test/b.test.mjs', { CI: 'true' }, FAILS_IF_RUN);
    expect(moved.error).toBeDefined();
    expect(moved.error).toContain('test/__tapes__/a.test/remembers.mcp.tape');
    expect(moved.error).not.toContain('record it');
    expect(moved.failure).toContain('Move them: ');
    const command = MOVE.exec(moved.failure!)?.[1];
    expect(command, moved.failure).toBeDefined();
    execSync(command!, { cwd: root });
    const replayed = await mcpTest(root, 'test/b.test.mjs', { CI: 'true' }, FAILS_IF_RUN);
    expect(replayed.result).toBe(recorded.result);
  });

  it('a ReplayCache miss names the old place and the move command', async () => {
    const root = tmp('moved-cache');
    mkdirSync(join(root, 'test'), { recursive: true });
    expect((await cacheTest(root, 'test/a.test.mjs', { TAPEDECK_MODE: 'record' })).value).toEqual({ answer: 42 });
    const moved = await cacheTest(root, 'test/b.test.mjs', { CI: 'true' });
    expect(moved.error).toContain('test/__tapes__/a.test/caches.cache.tape');
    expect(moved.failure).toContain('Move them: ');
    execSync(MOVE.exec(moved.failure!)![1]!, { cwd: root });
    expect(await cacheTest(root, 'test/b.test.mjs', { CI: 'true' })).toEqual({ value: { answer: 42 } });
  });

  it('the move command works when the new folder exists, and keeps a file of the same name there', async () => {
    const root = tmp('moved-into-existing');
    mkdirSync(join(root, 'test'), { recursive: true });
    const hello = await fetchTest(root, 'test/a.test.mjs', { TAPEDECK_MODE: 'record' });
    expect(hello.answer).toBeDefined();
    await mcpTest(root, 'test/a.test.mjs', { TAPEDECK_MODE: 'record' }, ['node', MEMORY]);
    // Something recorded into the new folder already (a local run of another test of the file),
    // and a file of the same name as one of the old folder's is there.
    mkdirSync(join(root, 'test/__tapes__/b.test'), { recursive: true });
    writeFileSync(join(root, 'test/__tapes__/b.test/other.tape'), 'x');
    writeFileSync(join(root, 'test/__tapes__/b.test/remembers.mcp.tape'), 'kept');

    const moved = await fetchTest(root, 'test/b.test.mjs', { CI: 'true' });
    const command = /move them: (.*)$/m.exec(moved.error!)?.[1] ?? MOVE.exec(moved.error!)?.[1];
    expect(command, moved.error).toBeDefined();
    // The whole old folder moves, the file of the same name excepted, which the command names.
    expect(command).toContain('remembers.mcp.tape');
    execSync(command!, { cwd: root });
    // Not nested: the files are in the new folder itself.
    expect(existsSync(join(root, 'test/__tapes__/b.test/a.test'))).toBe(false);
    expect(existsSync(join(root, 'test/__tapes__/b.test/says-hello.tape'))).toBe(true);
    expect(readFileSync(join(root, 'test/__tapes__/b.test/remembers.mcp.tape'), 'utf8')).toBe('kept');
    expect(existsSync(join(root, 'test/__tapes__/a.test/remembers.mcp.tape'))).toBe(true);
    expect(existsSync(join(root, 'test/__tapes__/b.test/other.tape'))).toBe(true);
    expect(await fetchTest(root, 'test/b.test.mjs', { CI: 'true' })).toEqual({ answer: hello.answer });
  });
});
