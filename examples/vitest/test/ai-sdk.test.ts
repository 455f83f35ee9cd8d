// The Vercel AI SDK (ai + @ai-sdk/openai) through the test's tape: plain, streamed and tool calls.
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, jsonSchema, streamText, tool } from 'ai';
import { inject } from 'vitest';
import { describe, expect, test } from 'llm-tapedeck/vitest';

const model = (fetch: typeof globalThis.fetch) =>
  createOpenAI({ baseURL: inject('openaiBaseURL'), apiKey: process.env.OPENAI_API_KEY ?? 'sk-replay', fetch }).chat('gpt-4o-mini');

describe('ai sdk', () => {
  test('generates text', async ({ tape }) => {
    const { text } = await generateText({ model: model(tape.fetch), prompt: 'Hello AI SDK', maxRetries: 0 });
    expect(text).toContain('Hello AI SDK');
  });

  test('streams text', async ({ tape }) => {
    const result = streamText({ model: model(tape.fetch), prompt: 'Stream to me', maxRetries: 0 });
    let text = '';
    for await (const part of result.textStream) text += part;
    expect(text).toContain('Stream to me');
  });

  test('calls a tool', async ({ tape }) => {
    const { toolCalls } = await generateText({
      model: model(tape.fetch),
      prompt: 'What is the weather in Paris?',
      maxRetries: 0,
      tools: {
        get_weather: tool({
          description: 'Weather for a city',
          inputSchema: jsonSchema<{ city: string }>({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }),
        }),
      },
    });
    expect(toolCalls.map((c) => [c.toolName, c.input])).toEqual([['get_weather', { city: 'Paris' }]]);
  });
});
