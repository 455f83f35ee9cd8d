// Every client and method the miss tests run, each the real SDK from npm (openai-python's
// requests are sent byte for byte as that SDK sends them): `call(fetch, base, prompt, streamed)`
// runs one call to its end, the way its users read an answer.
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import Anthropic from '@anthropic-ai/sdk';
import { ChatOpenAI } from '@langchain/openai';
import { generateText, streamText, type LanguageModel } from 'ai';
import OpenAI from 'openai';
import { pythonChat } from './python-requests.ts';

/** One client and method: `call(fetch, baseURL, prompt, streamed)` runs it to the end. */
export interface Client {
  name: string;
  /** Whose errors the client raises. */
  sdk: 'openai' | 'anthropic' | 'ai-sdk' | 'python';
  streams: boolean;
  call(f: typeof fetch, base: string, prompt: string, streamed: boolean): Promise<unknown>;
}

const openai = (f: typeof fetch, base: string) => new OpenAI({ baseURL: `${base}/v1`, apiKey: 'sk-test', maxRetries: 0, fetch: f });
const anthropic = (f: typeof fetch, base: string) => new Anthropic({ baseURL: base, apiKey: 'sk-ant-test', maxRetries: 0, fetch: f });
const drain = async (s: AsyncIterable<unknown>) => {
  for await (const _ of s);
};
/** AI SDK streams report errors as stream parts: rethrow the first, as a consumer would. */
export async function aiStream(r: ReturnType<typeof streamText>): Promise<void> {
  for await (const part of r.fullStream) if (part.type === 'error') throw part.error;
}

/** The AI SDK with one provider's model: generateText, or streamText read through fullStream. */
function aiSdk(provider: string, model: (f: typeof fetch, base: string) => LanguageModel): Client {
  return {
    name: `AI SDK (${provider}) generateText / streamText`,
    sdk: 'ai-sdk',
    streams: true,
    call: async (f, base, prompt, streamed) => {
      const m = model(f, base);
      return streamed ? aiStream(streamText({ model: m, prompt, maxRetries: 0, onError: () => {} })) : generateText({ model: m, prompt, maxRetries: 0 });
    },
  };
}

export const clients: Client[] = [
  {
    name: 'openai chat.completions',
    sdk: 'openai',
    streams: true,
    call: async (f, base, prompt, streamed) => {
      const body = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: prompt }] };
      return streamed ? drain(await openai(f, base).chat.completions.create({ ...body, stream: true })) : openai(f, base).chat.completions.create(body);
    },
  },
  {
    name: 'openai chat.completions.stream()',
    sdk: 'openai',
    streams: true,
    call: async (f, base, prompt, streamed) => {
      const body = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: prompt }] };
      return streamed ? openai(f, base).chat.completions.stream(body).finalChatCompletion() : openai(f, base).chat.completions.create(body);
    },
  },
  {
    name: 'openai responses',
    sdk: 'openai',
    streams: true,
    call: async (f, base, prompt, streamed) => {
      const body = { model: 'gpt-4o-mini', input: prompt };
      return streamed ? drain(await openai(f, base).responses.create({ ...body, stream: true })) : openai(f, base).responses.create(body);
    },
  },
  {
    name: 'anthropic messages',
    sdk: 'anthropic',
    streams: true,
    call: async (f, base, prompt, streamed) => {
      const body = { model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user' as const, content: prompt }] };
      return streamed ? anthropic(f, base).messages.stream(body).finalMessage() : anthropic(f, base).messages.create(body);
    },
  },
  aiSdk('OpenAI', (f, base) => createOpenAI({ baseURL: `${base}/v1`, apiKey: 'sk-test', fetch: f })('gpt-4o-mini')),
  aiSdk('OpenAI chat', (f, base) => createOpenAI({ baseURL: `${base}/v1`, apiKey: 'sk-test', fetch: f }).chat('gpt-4o-mini')),
  aiSdk('Anthropic', (f, base) => createAnthropic({ baseURL: `${base}/v1`, apiKey: 'sk-ant-test', fetch: f })('claude-sonnet-4-5')),
  {
    name: 'LangChain ChatOpenAI invoke / stream',
    sdk: 'openai',
    streams: true,
    call: async (f, base, prompt, streamed) => {
      const chat = new ChatOpenAI({ model: 'gpt-4o-mini', apiKey: 'sk-test', maxRetries: 0, configuration: { baseURL: `${base}/v1`, fetch: f } });
      return streamed ? drain(await chat.stream(prompt)) : chat.invoke(prompt);
    },
  },
  {
    name: 'openai-python chat.completions (its requests, byte for byte)',
    sdk: 'python',
    streams: true,
    call: (f, base, prompt, streamed) => pythonChat(f, base, prompt, streamed),
  },
];

