// The calls the browser suite makes through the OpenAI SDK, shared word for word by Node (which
// records and replays them with createFetch) and the page (which replays them with the browser
// entry): plain, streamed and tool-call chat completions. Results are plain JSON so the two
// sides can be compared with toEqual.
import type Anthropic from '@anthropic-ai/sdk';
import type OpenAI from 'openai';

const weatherTool = {
  type: 'function' as const,
  function: { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
};

export async function openaiScript(client: OpenAI) {
  const chat = await client.chat.completions.create({ model: 'gpt-4o-mini', temperature: 0, messages: [{ role: 'user', content: 'Hello there, héllo ✓' }] });
  const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', temperature: 0, stream: true, messages: [{ role: 'user', content: 'Stream me a story' }] });
  let streamed = '';
  let chunks = 0;
  for await (const chunk of stream) {
    streamed += chunk.choices[0]?.delta.content ?? '';
    chunks++;
  }
  const tool = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Weather in Paris?' }], tools: [weatherTool] });
  const toolFinal = await client.chat.completions
    .stream({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Weather in Paris, streamed?' }], tools: [weatherTool] })
    .finalChatCompletion();
  // Ordered repeats: the same request twice gets the first recording, then the second.
  const again1 = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say it twice' }] });
  const again2 = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say it twice' }] });
  return {
    chat: chat.choices[0]!.message.content,
    chatId: chat.id,
    streamed,
    chunks,
    toolCall: tool.choices[0]!.message.tool_calls,
    toolStreamCall: toolFinal.choices[0]!.message.tool_calls,
    repeats: [again1.choices[0]!.message.content, again2.choices[0]!.message.content],
  };
}

const weatherToolAnthropic = { name: 'get_weather', description: 'Weather for a city', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] } };

export async function anthropicScript(client: Anthropic) {
  const msg = await client.messages.create({ model: 'claude-test-model', max_tokens: 100, system: 'Be brief.', messages: [{ role: 'user', content: 'Hello Claude' }] });
  const stream = client.messages.stream({ model: 'claude-test-model', max_tokens: 100, messages: [{ role: 'user', content: 'Stream a haiku' }] });
  let streamed = '';
  stream.on('text', (t) => (streamed += t));
  const final = await stream.finalMessage();
  const tool = await client.messages.create({ model: 'claude-test-model', max_tokens: 100, tools: [weatherToolAnthropic], messages: [{ role: 'user', content: 'Weather in Paris?' }] });
  return { msg: msg.content, streamed, final: final.content, stop: final.stop_reason, tool: tool.content };
}

/** A request that was never recorded: the last user message differs from a recorded one. */
export async function changedPrompt(client: OpenAI): Promise<{ status: unknown; code: unknown; message: string; error: unknown }> {
  try {
    await client.chat.completions.create({ model: 'gpt-4o-mini', temperature: 0, messages: [{ role: 'user', content: 'Hello there, hello ✓' }] });
  } catch (e) {
    const err = e as { status?: unknown; code?: unknown; message: string; error?: unknown };
    return { status: err.status, code: err.code, message: err.message, error: err.error };
  }
  throw new Error('the changed prompt was answered');
}

/** Request bodies whose keys both sides compute with every backend (non-ASCII and large included). */
export function keyWorkload(): unknown[] {
  const long = Array.from({ length: 60 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `turn ${i} ${'ünïcödé ✓ 𝄞 '.repeat(i % 7)}` }));
  return [
    { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
    { model: 'gpt-4o-mini', temperature: 0.5, messages: long, tools: [weatherTool] },
    { model: 'claude-test-model', max_tokens: 100, system: 'Be brief.', messages: [{ role: 'user', content: [{ type: 'text', text: 'Grüße 👋' }] }] },
    { model: 'gpt-4o-mini', input: [{ role: 'user', content: 'x'.repeat(5000) }], instructions: 'Responses API' },
  ];
}

/**
 * Request bodies no recording answers, which the replay must still answer as Node does: JSON the
 * core refuses (malformed, a duplicate key, invalid UTF-8: a 400 naming the byte) and bodies that
 * are not JSON (text, text holding a key, a form with a secret field, multipart), keyed by their
 * bytes (a 400 miss naming the key). The status and text of each answer.
 */
export async function oddBodies(f: typeof fetch): Promise<Record<string, { status: number; text: string }>> {
  const json = { 'content-type': 'application/json' };
  const text = { 'content-type': 'text/plain' };
  const form = new FormData();
  form.append('purpose', 'fine-tune');
  form.append('note', 'héllo ✓');
  const cases: Record<string, RequestInit> = {
    malformed: { headers: json, body: '{"model": "x", "messages": [' },
    duplicateKey: { headers: json, body: '{"model":"a","model":"b","messages":[]}' },
    invalidUtf8: { headers: json, body: new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]) },
    text: { headers: text, body: 'hello' },
    textWithKey: { headers: text, body: 'my key is sk-proj-abcdefghijklmnopqrstuvwx, keep it' },
    urlencoded: { body: new URLSearchParams({ client_secret: 's3cr3t', note: 'héllo' }) },
    multipart: { body: form },
  };
  const out: Record<string, { status: number; text: string }> = {};
  for (const [name, init] of Object.entries(cases)) {
    const res = await f('https://api.openai.com/v1/chat/completions', { method: 'POST', ...init });
    out[name] = { status: res.status, text: await res.text() };
  }
  return out;
}
