// Ollama tapes read as conversation trees: a three-turn conversation with a tool call, recorded
// through createFetch with the `ollama` client plain and streamed (NDJSON), loaded with loadTree.
// Each follow-up sends the answer back as the client returned it, so the tree must place every
// request on one unbranched path through the recorded answers, streamed or not.
import { Ollama, type Message, type Tool } from 'ollama';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { loadTree } from '../../src/tree/load.ts';
import { startFakeOllama } from '../proxy/fake-ollama.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-tree-ollama-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const weather: Tool = { type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } };

async function conversation(client: Ollama, stream: boolean): Promise<Message[]> {
  const ask = async (messages: Message[], tools?: Tool[]): Promise<Message> => {
    if (!stream) return (await client.chat({ model: 'llama3.2', messages, ...(tools ? { tools } : {}) })).message;
    // As an application accumulates a streamed answer: text joined, tool calls gathered.
    const out: Message = { role: 'assistant', content: '' };
    for await (const part of await client.chat({ model: 'llama3.2', messages, stream: true, ...(tools ? { tools } : {}) })) {
      out.content += part.message.content;
      if (part.message.tool_calls) out.tool_calls = [...(out.tool_calls ?? []), ...part.message.tool_calls];
    }
    return out;
  };
  const messages: Message[] = [{ role: 'system', content: 'You are a weather bot.' }, { role: 'user', content: 'Weather in Paris?' }];
  const first = await ask([...messages], [weather]);
  expect(first.tool_calls?.[0]?.function.name).toBe('get_weather');
  messages.push(first, { role: 'tool', content: '18C and sunny', tool_name: 'get_weather' });
  const second = await ask([...messages], [weather]);
  messages.push(second, { role: 'user', content: 'Thanks!' });
  await ask([...messages]);
  return messages;
}

describe('Ollama tapes as conversation trees', () => {
  for (const stream of [false, true]) {
    it(`${stream ? 'streamed (NDJSON)' : 'plain'} answers: one unbranched conversation`, async () => {
      const tape = join(dir, `ollama-${stream}.tape`);
      const fake = await startFakeOllama({ gapMs: 0 });
      const rec = createFetch({ tape, mode: 'record' });
      try {
        await conversation(new Ollama({ host: fake.url, fetch: rec }), stream);
      } finally {
        await rec.close();
        await fake.close();
      }
      const { tree } = await loadTree(tape);
      expect(tree.warnings).toEqual([]);
      const s = tree.stats();
      expect(s.roots).toBe(1);
      expect(s.branchPoints).toBe(0);
      expect(s.exchanges).toBe(3);
      // system, user, assistant (call), tool, assistant, user, assistant
      expect(s.maxLength).toBe(7);
    });
  }
});
