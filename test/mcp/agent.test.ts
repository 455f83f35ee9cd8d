// The whole agent offline: an AI SDK generateText loop whose tools come from an MCP server
// through @ai-sdk/mcp, the model through createFetch on a fake provider. Recorded once, then
// replayed with the provider closed and the server command replaced by one that fails if run.
import { createServer, type Server } from 'node:http';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createMCPClient } from '@ai-sdk/mcp';
import { Experimental_StdioMCPTransport } from '@ai-sdk/mcp/mcp-stdio';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, stepCountIs } from 'ai';
import { describe, expect, it } from 'vitest';
import { tapeTransport } from '../../src/mcp/index.ts';
import { createFetch } from '../../src/proxy/index.ts';
import { FAILS_IF_RUN, FILESYSTEM, tmp } from './helpers.ts';

/**
 * A chat completions endpoint that first asks for the file named in the user's message through
 * the read_text_file tool, then answers with what the tool returned.
 */
async function fakeProvider(): Promise<{ url: string; calls: number; close: () => Promise<void> }> {
  const state = { calls: 0 };
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      state.calls++;
      const r = JSON.parse(body) as { messages: { role: string; content: unknown }[] };
      const tool = r.messages.find((m) => m.role === 'tool');
      const base = { id: `chatcmpl-${state.calls}`, object: 'chat.completion', created: 1767225600, model: 'gpt-4o-mini', usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } };
      let message: unknown;
      let finish = 'stop';
      if (tool) message = { role: 'assistant', content: `The file says: ${JSON.stringify(tool.content)}` };
      else {
        const user = String(r.messages.find((m) => m.role === 'user')!.content);
        const path = /read (\S+)/.exec(user)![1];
        message = { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read_text_file', arguments: JSON.stringify({ path }) } }] };
        finish = 'tool_calls';
      }
      const text = JSON.stringify({ ...base, choices: [{ index: 0, message, finish_reason: finish }] });
      res.writeHead(200, { 'content-type': 'application/json' }).end(text);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    get calls() {
      return state.calls;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

async function agent(opts: { mode: 'record' | 'replay'; dir: string; files: string; baseURL: string; server: string[] }) {
  const llm = createFetch({ tape: join(opts.dir, 'model.tape'), mode: opts.mode });
  const openai = createOpenAI({ baseURL: opts.baseURL, apiKey: 'sk-test', fetch: llm });
  const [command, ...args] = opts.server;
  const mcp = await createMCPClient({
    transport: tapeTransport(() => new Experimental_StdioMCPTransport({ command: command!, args }) as never, { tape: join(opts.dir, 'tools.tape'), mode: opts.mode }),
  });
  try {
    const tools = await mcp.tools();
    const r = await generateText({
      model: openai.chat('gpt-4o-mini'),
      tools,
      stopWhen: stepCountIs(4),
      prompt: `Please read ${join(opts.files, 'notes.txt')} and tell me what it says.`,
    });
    return { text: r.text, steps: r.steps.length, tools, toolResults: r.steps.flatMap((s) => s.toolResults.map((t) => t.output)) };
  } finally {
    await mcp.close();
    await llm.close();
  }
}

describe('an AI SDK agent with MCP tools, offline', () => {
  it('recorded once, replayed with the provider and the server gone: the same final answer; a changed tool argument is the MCP miss', async () => {
    const dir = tmp('agent');
    const files = join(dir, 'files');
    mkdirSync(files);
    writeFileSync(join(files, 'notes.txt'), 'The launch code is 4242.');
    const provider = await fakeProvider();
    const live = await agent({ mode: 'record', dir, files, baseURL: provider.url, server: ['node', FILESYSTEM, files] });
    expect(live.text).toContain('4242');
    expect(live.steps).toBe(2);
    expect(provider.calls).toBe(2);
    await provider.close();
    rmSync(files, { recursive: true });

    const replayed = await agent({ mode: 'replay', dir, files, baseURL: provider.url, server: FAILS_IF_RUN });
    expect(replayed.text).toBe(live.text);
    expect(replayed.toolResults).toEqual(live.toolResults);

    // The same agent calling the tool with another argument: the tape has no such call.
    const llm = createFetch({ tape: join(dir, 'model.tape'), mode: 'replay' });
    const mcp = await createMCPClient({ transport: tapeTransport(undefined, { tape: join(dir, 'tools.tape'), mode: 'replay', onMiss: () => undefined }) as never });
    const tools = await mcp.tools();
    const err = await tools.read_text_file!.execute!({ path: join(files, 'other.txt') }, { toolCallId: 'x', messages: [] }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    await mcp.close();
    await llm.close();
    expect(err?.message).toContain('tapedeck miss: tools/call read_text_file: params.arguments.path differs');
    rmSync(dir, { recursive: true, force: true });
  });
});
