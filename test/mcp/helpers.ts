// Real MCP servers from npm, a logging client transport, and the scripted session the stdio and
// in-process suites run against server-everything.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll } from 'vitest';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

const ROOT = join(import.meta.dirname, '../..');
const pkg = (name: string) => join(ROOT, 'node_modules/@modelcontextprotocol', name, 'dist/index.js');

export const CLI = join(ROOT, 'dist/cli.js');
export const EVERYTHING = pkg('server-everything');
export const FILESYSTEM = pkg('server-filesystem');
export const MEMORY = pkg('server-memory');

/** A server command that fails loudly if anything runs it: replay must never start the server. */
export const FAILS_IF_RUN = ['node', '-e', "process.stderr.write('THE SERVER WAS STARTED\\n'); process.exit(9)"];

// Every folder made here goes at the end of the file's tests, also when a test fails before its
// own cleanup (the suite fails on a tapedeck-* folder left behind).
const made: string[] = [];
afterAll(() => {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
});
export const tmp = (prefix: string) => {
  const d = mkdtempSync(join(tmpdir(), `tapedeck-mcp-${prefix}-`));
  made.push(d);
  return d;
};

/**
 * Wraps a client transport and logs every message the client receives, in order. Server
 * requests are logged without their id (the server picks it; on replay tapedeck does).
 */
export function logged(inner: Transport): { transport: Transport; log: unknown[] } {
  const log: unknown[] = [];
  const transport: Transport = {
    start: () => inner.start(),
    send: (m, o) => inner.send(m, o),
    close: () => inner.close(),
    setProtocolVersion: (v) => inner.setProtocolVersion?.(v),
    get sessionId() {
      return inner.sessionId;
    },
  };
  inner.onmessage = (m: JSONRPCMessage, extra) => {
    const copy = { ...(m as Record<string, unknown>) };
    if ('method' in copy && 'id' in copy) delete copy.id;
    log.push(copy);
    transport.onmessage?.(m, extra);
  };
  inner.onclose = () => transport.onclose?.();
  inner.onerror = (e) => transport.onerror?.(e);
  return { transport, log };
}

/** A client that can be sampled, elicited and asked for roots, answering the same every time. */
export function richClient(): Client {
  const client = new Client({ name: 'tapedeck-test', version: String(Date.now()) }, { capabilities: { sampling: {}, elicitation: {}, roots: { listChanged: true } } });
  client.setRequestHandler(CreateMessageRequestSchema, async () => ({ model: 'fake-model', role: 'assistant', content: { type: 'text', text: 'sampled answer' } }));
  client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'decline' }));
  client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: 'file:///tmp/project', name: 'project' }] }));
  return client;
}

/**
 * What a scripted session against server-everything returned, call by call. Progress is not
 * among them: the SDK Client handles a notification a microtask after a response, so a
 * progress notification that reaches it in the same read as its answer is dropped by the
 * client itself, live or replayed; the transport logs (see logged) show every one.
 */
export interface EverythingResults {
  results: unknown[];
}

/**
 * Tools, progress, logging, resources, prompts, sampling, elicitation and roots, in one order.
 * The client version is the time: initialize is keyed without it.
 */
export async function everythingSession(client: Client): Promise<EverythingResults> {
  const results: unknown[] = [];
  results.push(await client.setLoggingLevel('debug'));
  results.push((await client.listTools()).tools.map((t) => t.name).sort());
  results.push(await client.callTool({ name: 'echo', arguments: { message: 'hello' } }));
  results.push(await client.callTool({ name: 'get-sum', arguments: { a: 2, b: 40 } }));
  results.push(await client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 0.2, steps: 3 } }, undefined, { onprogress: () => undefined }));
  results.push(await client.listResources());
  const first = (await client.listResources()).resources[0]!;
  results.push(await client.readResource({ uri: first.uri }));
  results.push(await client.listPrompts());
  results.push(await client.getPrompt({ name: 'simple-prompt' }));
  results.push(await client.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'say something', maxTokens: 20 } }));
  results.push(await client.callTool({ name: 'trigger-elicitation-request', arguments: {} }));
  results.push(await client.callTool({ name: 'get-roots-list', arguments: {} }));
  results.push(await client.callTool({ name: 'echo', arguments: { message: 'hello' } }));
  results.push(await client.ping());
  return { results };
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** server-everything over Streamable HTTP on a free port, ready when it says it listens. */
export async function everythingHttp(): Promise<{ url: string; stop: () => Promise<void> }> {
  const port = await freePort();
  const child: ChildProcess = spawn('node', [EVERYTHING, 'streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    let text = '';
    child.stderr!.on('data', (b: Buffer) => {
      text += b.toString();
      if (text.includes('listening')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`server-everything exited (${code}): ${text}`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((r) => {
        child.once('exit', () => r());
        child.kill('SIGKILL');
      }),
  };
}
