// The OpenAI SDK through the test's tape: plain, streamed and tool calls.
import OpenAI from 'openai';
import { inject } from 'vitest';
import { describe, expect, test } from 'llm-tapedeck/vitest';

const weather = {
  type: 'function' as const,
  function: { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
};

// maxRetries: 0 so a miss fails at once instead of being retried.
const client = (fetch: typeof globalThis.fetch) =>
  new OpenAI({ baseURL: inject('openaiBaseURL'), apiKey: process.env.OPENAI_API_KEY ?? 'sk-replay', fetch, maxRetries: 0 });

describe('openai sdk', () => {
  test('answers a question', async ({ tape }) => {
    const r = await client(tape.fetch).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello there' }] });
    expect(r.choices[0]!.message.content).toContain('Hello there');
  });

  test('streams an answer', async ({ tape }) => {
    const stream = await client(tape.fetch).chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'Tell me a story' }] });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toContain('Tell me a story');
  });

  test('calls a tool', async ({ tape }) => {
    const r = await client(tape.fetch).chat.completions.create({ model: 'gpt-4o-mini', tools: [weather], messages: [{ role: 'user', content: 'Weather in Paris?' }] });
    const call = r.choices[0]!.message.tool_calls![0]!;
    expect(call.type === 'function' && call.function.name).toBe('get_weather');
    expect(call.type === 'function' && JSON.parse(call.function.arguments)).toEqual({ city: 'Paris' });
  });
});
