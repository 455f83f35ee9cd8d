// Records the drift test's calls through createFetch with the real OpenAI and Anthropic SDKs
// (and a plain fetch for a JSON API) against the drift upstream, one tape per variant.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startDriftUpstream, type Variant } from './drift-upstream.ts';

const weatherOpenAI = { type: 'function' as const, function: { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' }, unit: { type: 'string' } }, required: ['city'] } } };
const weatherResponses = { type: 'function' as const, name: 'get_weather', description: 'Weather for a city', strict: false, parameters: { type: 'object', properties: { city: { type: 'string' }, unit: { type: 'string' } }, required: ['city'] } };
const weatherAnthropic = { name: 'get_weather', description: 'Weather for a city', input_schema: { type: 'object' as const, properties: { city: { type: 'string' }, unit: { type: 'string' } }, required: ['city'] } };
const citySchema = { type: 'object', properties: { city: { type: 'string' }, population: { type: 'integer' } }, required: ['city', 'population'], additionalProperties: false };

/** The calls, by name, in recorded order: what each answer is and whether it streams. */
export const CALLS = [
  { name: 'chat text', shape: 'openai-chat', kind: 'text', streamed: false },
  { name: 'chat text streamed', shape: 'openai-chat', kind: 'text', streamed: true },
  { name: 'chat tool', shape: 'openai-chat', kind: 'tool', streamed: false },
  { name: 'chat tool streamed', shape: 'openai-chat', kind: 'tool', streamed: true },
  { name: 'chat json schema', shape: 'openai-chat', kind: 'schema', streamed: false },
  { name: 'responses text', shape: 'openai-responses', kind: 'text', streamed: false },
  { name: 'responses text streamed', shape: 'openai-responses', kind: 'text', streamed: true },
  { name: 'responses tool', shape: 'openai-responses', kind: 'tool', streamed: false },
  { name: 'anthropic text', shape: 'anthropic', kind: 'text', streamed: false },
  { name: 'anthropic text streamed', shape: 'anthropic', kind: 'text', streamed: true },
  { name: 'anthropic tool', shape: 'anthropic', kind: 'tool', streamed: false },
  { name: 'anthropic tool streamed', shape: 'anthropic', kind: 'tool', streamed: true },
  { name: 'json search', shape: 'json', kind: 'json', streamed: false },
] as const;

export interface ScriptOptions {
  /** Ask the first question in other words (its request key changes). */
  rephrase?: boolean;
  /** Leave out the last call (a plain JSON API), and make one the base script does not make. */
  swapLast?: boolean;
  /** Output tokens the upstream reports in every answer (the text stays as the variant has it). */
  outputTokens?: number;
}

/** Makes every call; errors (the status variant) are swallowed: the tape has the answers. */
async function script(openai: OpenAI, anthropic: Anthropic, f: typeof fetch, base: string, opts: ScriptOptions): Promise<void> {
  const quiet = async (p: () => Promise<unknown>) => {
    try {
      const r = await p();
      // Drain streams so the whole answer is recorded.
      if (r && typeof (r as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function') for await (const _ of r as AsyncIterable<unknown>);
    } catch {
      // the status variant answers 500
    }
  };
  const m = 'gpt-4o-mini';
  await quiet(() => openai.chat.completions.create({ model: m, messages: [{ role: 'user', content: opts.rephrase ? "What's the capital city of France?" : 'What is the capital of France?' }] }));
  await quiet(() => openai.chat.completions.create({ model: m, stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'Capital of France, streamed?' }] }));
  await quiet(() => openai.chat.completions.create({ model: m, tools: [weatherOpenAI], messages: [{ role: 'user', content: 'Weather in Paris?' }] }));
  await quiet(() => openai.chat.completions.create({ model: m, stream: true, tools: [weatherOpenAI], messages: [{ role: 'user', content: 'Weather in Paris, streamed?' }] }));
  await quiet(() => openai.chat.completions.create({ model: m, response_format: { type: 'json_schema', json_schema: { name: 'city', strict: true, schema: citySchema } }, messages: [{ role: 'user', content: 'Facts about Paris as JSON' }] }));
  await quiet(() => openai.responses.create({ model: m, input: 'Capital of France (Responses)?' }));
  await quiet(() => openai.responses.create({ model: m, stream: true, input: 'Capital of France (Responses), streamed?' }));
  await quiet(() => openai.responses.create({ model: m, tools: [weatherResponses], input: 'Weather in Paris (Responses)?' }));
  const c = 'claude-sonnet-4-5';
  await quiet(() => anthropic.messages.create({ model: c, max_tokens: 200, messages: [{ role: 'user', content: 'Capital of France, Claude?' }] }));
  await quiet(() => anthropic.messages.create({ model: c, max_tokens: 200, stream: true, messages: [{ role: 'user', content: 'Capital of France, Claude, streamed?' }] }));
  await quiet(() => anthropic.messages.create({ model: c, max_tokens: 200, tools: [weatherAnthropic], messages: [{ role: 'user', content: 'Weather in Paris, Claude?' }] }));
  await quiet(() => anthropic.messages.create({ model: c, max_tokens: 200, stream: true, tools: [weatherAnthropic], messages: [{ role: 'user', content: 'Weather in Paris, Claude, streamed?' }] }));
  const search = (query: string) => quiet(() => f(`${base}/v1/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query }) }).then((r) => r.text()));
  if (opts.swapLast) await quiet(() => anthropic.messages.create({ model: c, max_tokens: 200, messages: [{ role: 'user', content: 'Name three rivers, Claude.' }] }));
  else await search('paris');
}

/**
 * Records the script's calls into `tape` against a drift upstream answering as `variant`.
 *
 * @example
 * await recordVariant(join(dir, 'text.tape'), 'text')
 */
export async function recordVariant(tape: string, variant: Variant, opts: ScriptOptions = {}): Promise<void> {
  const up = await startDriftUpstream(variant, opts.outputTokens !== undefined ? { outputTokens: opts.outputTokens } : {});
  const rec = createFetch({ tape, mode: 'record', recordErrors: true });
  try {
    const openai = new OpenAI({ baseURL: `${up.url}/v1`, apiKey: 'sk-test', maxRetries: 0, fetch: rec });
    const anthropic = new Anthropic({ baseURL: up.url, apiKey: 'sk-ant-test', maxRetries: 0, fetch: rec });
    await script(openai, anthropic, rec, up.url, opts);
  } finally {
    await rec.close();
    await up.close();
  }
}
