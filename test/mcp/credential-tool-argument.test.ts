// A credential the model passes to an MCP tool (the prompt holds a key; the model calls echo
// with it): the model's recorded answer holds the key masked, so the replayed agent sends the
// tool the mask. The MCP call is keyed as redaction stored it, so that call finds the recording
// made with the key itself (on a tape shared by the model and the tools: one salt). Before, MCP
// keys were computed from the raw params: the replayed call missed, and the model request built
// from the miss missed too.
import { createServer, type Server } from 'node:http';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createMCPClient } from '@ai-sdk/mcp';
import { Experimental_StdioMCPTransport } from '@ai-sdk/mcp/mcp-stdio';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, stepCountIs } from 'ai';
import { describe, expect, it } from 'vitest';
import { tapeTransport } from '../../src/mcp/index.ts';
import { createFetch } from '../../src/proxy/index.ts';
import { EVERYTHING, tmp } from './helpers.ts';

const KEY = `sk-proj-${'AbCdEfGh1234'.repeat(4)}`;

/** Chat completions: first echo with the key the prompt holds, then the tool's text back. */
async function fakeProvider(): Promise<{ url: string; close: () => Promise<void> }> {
  let n = 0;
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      n++;
      const r = JSON.parse(body) as { messages: { role: string; content: unknown }[] };
      const tool = r.messages.find((m) => m.role === 'tool');
      const key = /(sk-proj-\S+)/.exec(String(r.messages.find((m) => m.role === 'user')!.content))?.[1];
      const message = tool ? { role: 'assistant', content: `stored (${JSON.stringify(tool.content).length})` } : { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'echo', arguments: JSON.stringify({ message: `store key ${key}` }) } }] };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: `c-${n}`, object: 'chat.completion', created: 1767225600, model: 'gpt-4o-mini', usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }, choices: [{ index: 0, message, finish_reason: tool ? 'stop' : 'tool_calls' }] }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, close: () => new Promise<void>((r) => server.close(() => r())) };
}

async function agent(mode: 'record' | 'replay', tape: string, baseURL: string) {
  const llm = createFetch({ tape, mode });
  const openai = createOpenAI({ baseURL, apiKey: 'sk-test', fetch: llm });
  const mcp = await createMCPClient({ transport: tapeTransport(() => new Experimental_StdioMCPTransport({ command: 'node', args: [EVERYTHING, 'stdio'] }) as never, { tape, mode, onMiss: () => undefined }) });
  try {
    const r = await generateText({ model: openai.chat('gpt-4o-mini'), tools: await mcp.tools(), stopWhen: stepCountIs(3), prompt: `Remember this key: ${KEY}` });
    return { text: r.text, results: r.steps.flatMap((s) => s.toolResults.map((t) => JSON.stringify(t.output))) };
  } finally {
    await mcp.close();
    await llm.close();
  }
}

describe('a credential passed to an MCP tool', { timeout: 60_000 }, () => {
  it('recorded, then replayed offline: the tool call finds its recording, and the key is on no tape', async () => {
    const dir = tmp('credential-argument');
    const tape = join(dir, 'agent.tape');
    const provider = await fakeProvider();
    const live = await agent('record', tape, provider.url);
    await provider.close();
    expect(live.results.join()).toContain('Echo: store key');
    expect(readFileSync(tape).includes(KEY)).toBe(false);
    const replayed = await agent('replay', tape, provider.url);
    expect(replayed.results.join()).not.toContain('tapedeck miss');
    expect(replayed.text).toBe(live.text);
  });
});
