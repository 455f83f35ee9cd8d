// An agent whose MCP tool result holds a credential (a file with a GitHub token, read through
// server-filesystem) replays offline when the model's recordings and the tool's share one tape:
// the token is masked alike in the tool's replayed answer and in the model request built from
// it (docs/mcp.md, "Secrets": with two tapes, two salts, the masks differ and the model request
// misses).
import { createServer, type Server } from 'node:http';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createMCPClient } from '@ai-sdk/mcp';
import { Experimental_StdioMCPTransport } from '@ai-sdk/mcp/mcp-stdio';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, stepCountIs } from 'ai';
import { describe, expect, it } from 'vitest';
import { tapeTransport } from '../../src/mcp/index.ts';
import { createFetch } from '../../src/proxy/index.ts';
import { FILESYSTEM, tmp } from './helpers.ts';

const TOKEN = `ghp_${'Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6'}`;

/** Chat completions: first a read_text_file call for the path in the prompt, then the tool's text back. */
async function fakeProvider(): Promise<{ url: string; close: () => Promise<void> }> {
  let n = 0;
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      n++;
      const r = JSON.parse(body) as { messages: { role: string; content: unknown }[] };
      const tool = r.messages.find((m) => m.role === 'tool');
      const path = /read (\S+)/.exec(String(r.messages.find((m) => m.role === 'user')!.content))![1];
      const message = tool ? { role: 'assistant', content: `done: ${String(tool.content).length} chars` } : { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read_text_file', arguments: JSON.stringify({ path }) } }] };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: `c-${n}`, object: 'chat.completion', created: 1767225600, model: 'gpt-4o-mini', usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }, choices: [{ index: 0, message, finish_reason: tool ? 'stop' : 'tool_calls' }] }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, close: () => new Promise<void>((r) => server.close(() => r())) };
}

async function agent(mode: 'record' | 'replay', llmTape: string, toolTape: string, files: string, baseURL: string) {
  const llm = createFetch({ tape: llmTape, mode });
  const openai = createOpenAI({ baseURL, apiKey: 'sk-test', fetch: llm });
  const mcp = await createMCPClient({ transport: tapeTransport(() => new Experimental_StdioMCPTransport({ command: 'node', args: [FILESYSTEM, files] }) as never, { tape: toolTape, mode }) });
  try {
    const r = await generateText({ model: openai.chat('gpt-4o-mini'), tools: await mcp.tools(), stopWhen: stepCountIs(3), prompt: `Please read ${join(files, 'env.json')}` });
    return r.text;
  } finally {
    await mcp.close();
    await llm.close();
  }
}

describe('an agent whose tool result holds a credential', { timeout: 60_000 }, () => {
  it('one tape for the model and the tools: recorded, then replayed offline, with the token on no tape', async () => {
    const dir = tmp('tool-credential');
    const files = join(dir, 'files');
    mkdirSync(files);
    writeFileSync(join(files, 'env.json'), JSON.stringify({ GITHUB_TOKEN: TOKEN, HOME: '/root' }, null, 2));
    const provider = await fakeProvider();
    const tape = join(dir, 'agent.tape');
    const live = await agent('record', tape, tape, files, provider.url);
    await provider.close();
    expect(live).toMatch(/^done/);
    expect(readFileSync(tape).includes(TOKEN)).toBe(false);
    expect(await agent('replay', tape, tape, files, provider.url)).toBe(live);
  });
});
