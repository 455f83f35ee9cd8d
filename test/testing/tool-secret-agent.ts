// The agent of the companion MCP tape tests: a fake chat completions provider, and an agent
// whose one tool (server-everything's get-env) returns a GitHub token from the server's
// environment, run through the test helper's tape (tape.fetch for the model, tape.mcp() for the
// tool).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMCPClient } from '@ai-sdk/mcp';
import { Experimental_StdioMCPTransport } from '@ai-sdk/mcp/mcp-stdio';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, stepCountIs } from 'ai';
import { expect } from 'vitest';
import { openTestTape } from '../../src/testing/session.ts';
import { EVERYTHING } from '../mcp/helpers.ts';

export const TOKEN = `ghp_${'Zx9wV8uT7sR6qP5oN4mL3kJ2iH1gF0eD9cB8'}`;

/** Chat completions: first a get-env call, then the length of the tool's answer ('hi' to a call without tools). */
export async function fakeProvider(): Promise<{ url: string; close: () => Promise<void> }> {
  let n = 0;
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      n++;
      const r = JSON.parse(body) as { messages: { role: string; content: unknown }[]; tools?: unknown[] };
      const tool = r.messages.find((m) => m.role === 'tool');
      const message = !r.tools ? { role: 'assistant', content: 'hi' } : tool ? { role: 'assistant', content: `done: ${String(tool.content).length} chars` } : { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get-env', arguments: '{}' } }] };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: `c-${n}`, object: 'chat.completion', created: 1767225600, model: 'gpt-4o-mini', usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }, choices: [{ index: 0, message, finish_reason: tool || !r.tools ? 'stop' : 'tool_calls' }] }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/**
 * The agent of a test, through the test helper's tape: the model through tape.fetch, the tool
 * through tape.mcp(). `order` says which tape the test opens first.
 */
export async function agent(mode: 'record' | 'replay', path: string, baseURL: string, order: 'mcp-first' | 'model-first' = 'mcp-first', store?: string): Promise<string> {
  const tape = openTestTape({ tape: path, mode, env: {}, test: 'agent reads env', ...(store ? { store } : {}) });
  try {
    const openai = createOpenAI({ baseURL, apiKey: 'sk-test', fetch: tape.fetch });
    const transport = () => tape.mcp(() => new Experimental_StdioMCPTransport({ command: 'node', args: [EVERYTHING, 'stdio'], env: { PATH: process.env.PATH!, GITHUB_TOKEN: TOKEN } }) as never);
    if (order === 'model-first') {
      // A call of the model before the MCP tape opens: the test's tape is made first.
      const r = await generateText({ model: openai.chat('gpt-4o-mini'), prompt: 'say hi' });
      expect(r.text).toBe('hi');
    }
    const mcp = await createMCPClient({ transport: transport() });
    try {
      const tools = await mcp.tools();
      const r = await generateText({ model: openai.chat('gpt-4o-mini'), tools: { 'get-env': tools['get-env']! }, stopWhen: stepCountIs(3), prompt: 'CALL get-env {}' });
      return r.text;
    } finally {
      await mcp.close();
    }
  } finally {
    await tape.close();
  }
}
