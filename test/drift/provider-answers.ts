// One tape with a recording of every provider tapedeck reads answers of, each in its own wire
// format (JSON, server-sent events, Ollama's NDJSON, Bedrock's binary event stream with CRCs,
// Gemini's JSON array), recorded through createFetch from an upstream that answers as the
// provider does. Each provider reports token counts of its own, so a count under the wrong
// provider, or none, shows.
import { encodeEventStreamMessage } from '../../src/providers/wire/aws-eventstream.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { readTape } from '../../src/store/tape-file.ts';

const enc = new TextEncoder();
const json = (v: unknown, headers: Record<string, string> = {}) => new Response(JSON.stringify(v), { headers: { 'content-type': 'application/json', ...headers } });
const sse = (events: unknown[], named = false) =>
  new Response(events.map((e) => `${named ? `event: ${(e as { type: string }).type}\n` : ''}data: ${typeof e === 'string' ? e : JSON.stringify(e)}\n\n`).join(''), { headers: { 'content-type': 'text/event-stream' } });

function frame(headers: Record<string, string>, payload: unknown): Uint8Array {
  return encodeEventStreamMessage({
    headers: Object.entries(headers).map(([name, value]) => ({ name, type: 'string' as const, value })),
    body: enc.encode(JSON.stringify(payload)),
  });
}
const event = (type: string, payload: unknown) => frame({ ':event-type': type, ':content-type': 'application/json', ':message-type': 'event' }, payload);

/** Input and output tokens each provider's answers report. */
export const TOKENS = {
  openai: [11, 3],
  anthropic: [13, 5],
  gemini: [17, 7],
  bedrock: [19, 9],
  ollama: [23, 2],
  azure: [29, 4],
  Groq: [31, 6],
  DeepSeek: [37, 8],
} as const;

const chat = (model: string, [i, o]: readonly number[], extra: object = {}) => ({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1,
  model,
  choices: [{ index: 0, message: { role: 'assistant', content: 'Paris.' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: i, completion_tokens: o, total_tokens: i + o },
  ...extra,
});
const chatChunks = (model: string, [i, o]: readonly number[]) => [
  { id: 'c', object: 'chat.completion.chunk', created: 1, model, choices: [{ index: 0, delta: { role: 'assistant', content: 'Par' }, finish_reason: null }] },
  { id: 'c', object: 'chat.completion.chunk', created: 1, model, choices: [{ index: 0, delta: { content: 'is.' }, finish_reason: 'stop' }] },
  { id: 'c', object: 'chat.completion.chunk', created: 1, model, choices: [], usage: { prompt_tokens: i, completion_tokens: o, total_tokens: i + o } },
  '[DONE]',
];
const anthropicMessage = (model: string, [i, o]: readonly number[]) => ({ id: 'msg_1', type: 'message', role: 'assistant', model, content: [{ type: 'text', text: 'Paris.' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: i, output_tokens: o } });
const anthropicEvents = (model: string, [i, o]: readonly number[]) => [
  { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model, content: [], stop_reason: null, usage: { input_tokens: i, output_tokens: 1 } } },
  { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
  { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Paris.' } },
  { type: 'content_block_stop', index: 0 },
  { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: o } },
  { type: 'message_stop' },
];
const geminiAnswer = ([i, o]: readonly number[], last = true) => ({
  candidates: [{ content: { role: 'model', parts: [{ text: last ? 'is.' : 'Par' }] }, ...(last ? { finishReason: 'STOP' } : {}), index: 0 }],
  ...(last ? { usageMetadata: { promptTokenCount: i, candidatesTokenCount: o - 2, thoughtsTokenCount: 2, totalTokenCount: i + o } } : {}),
  modelVersion: 'gemini-2.5-flash',
  responseId: 'r1',
});
const converse = ([i, o]: readonly number[]) => ({ output: { message: { role: 'assistant', content: [{ text: 'Paris.' }] } }, stopReason: 'end_turn', usage: { inputTokens: i, outputTokens: o, totalTokens: i + o }, metrics: { latencyMs: 100 } });
const ollamaChat = ([i, o]: readonly number[], content = 'Paris.') => ({ model: 'llama3.2', created_at: '2026-01-01T00:00:00Z', message: { role: 'assistant', content }, done: true, done_reason: 'stop', total_duration: 5, prompt_eval_count: i, eval_count: o });

/** One call per provider and framing: where it goes, what it sends, the provider it counts under. */
export const CALLS: { name: string; provider: keyof typeof TOKENS; url: string; body: unknown; headers?: Record<string, string>; answer: () => Response }[] = [
  { name: 'openai chat', provider: 'openai', url: 'https://api.openai.com/v1/chat/completions', body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Capital of France?' }] }, answer: () => json(chat('gpt-4o-mini-2024-07-18', TOKENS.openai)) },
  { name: 'openai chat streamed', provider: 'openai', url: 'https://api.openai.com/v1/chat/completions', body: { model: 'gpt-4o-mini', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'Capital of France?' }] }, answer: () => sse(chatChunks('gpt-4o-mini-2024-07-18', TOKENS.openai)) },
  {
    name: 'openai responses',
    provider: 'openai',
    url: 'https://api.openai.com/v1/responses',
    body: { model: 'gpt-4o-mini', input: 'Capital of France?' },
    answer: () => json({ id: 'resp_1', object: 'response', created_at: 1, status: 'completed', model: 'gpt-4o-mini-2024-07-18', output: [{ type: 'message', id: 'm', role: 'assistant', content: [{ type: 'output_text', text: 'Paris.' }] }], usage: { input_tokens: TOKENS.openai[0], output_tokens: TOKENS.openai[1], total_tokens: 14 } }),
  },
  { name: 'anthropic', provider: 'anthropic', url: 'https://api.anthropic.com/v1/messages', body: { model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'Capital of France?' }] }, answer: () => json(anthropicMessage('claude-sonnet-4-5-20250929', TOKENS.anthropic)) },
  { name: 'anthropic streamed', provider: 'anthropic', url: 'https://api.anthropic.com/v1/messages', body: { model: 'claude-sonnet-4-5', max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'Capital of France?' }] }, answer: () => sse(anthropicEvents('claude-sonnet-4-5-20250929', TOKENS.anthropic), true) },
  { name: 'gemini', provider: 'gemini', url: 'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent', body: { contents: [{ role: 'user', parts: [{ text: 'Capital of France?' }] }] }, answer: () => json(geminiAnswer(TOKENS.gemini)) },
  { name: 'gemini sse', provider: 'gemini', url: 'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse', body: { contents: [{ role: 'user', parts: [{ text: 'Capital of France?' }] }] }, answer: () => sse([geminiAnswer(TOKENS.gemini, false), geminiAnswer(TOKENS.gemini)]) },
  {
    name: 'gemini json array stream',
    provider: 'gemini',
    url: 'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent',
    body: { contents: [{ role: 'user', parts: [{ text: 'Capital of France, again?' }] }] },
    answer: () => new Response(`[${JSON.stringify(geminiAnswer(TOKENS.gemini, false))},\r\n${JSON.stringify(geminiAnswer(TOKENS.gemini))}]`, { headers: { 'content-type': 'application/json' } }),
  },
  { name: 'bedrock converse', provider: 'bedrock', url: 'https://bedrock-runtime.us-east-1.amazonaws.com/model/amazon.nova-lite-v1%3A0/converse', body: { messages: [{ role: 'user', content: [{ text: 'Capital of France?' }] }] }, answer: () => json(converse(TOKENS.bedrock)) },
  {
    name: 'bedrock converse stream',
    provider: 'bedrock',
    url: 'https://bedrock-runtime.us-east-1.amazonaws.com/model/amazon.nova-lite-v1%3A0/converse-stream',
    body: { messages: [{ role: 'user', content: [{ text: 'Capital of France?' }] }] },
    answer: () =>
      new Response(
        Buffer.concat([
          event('messageStart', { role: 'assistant' }),
          event('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Paris.' } }),
          event('contentBlockStop', { contentBlockIndex: 0 }),
          event('messageStop', { stopReason: 'end_turn' }),
          event('metadata', { usage: { inputTokens: TOKENS.bedrock[0], outputTokens: TOKENS.bedrock[1], totalTokens: 28 }, metrics: { latencyMs: 100 } }),
        ]),
        { headers: { 'content-type': 'application/vnd.amazon.eventstream' } },
      ),
  },
  {
    name: 'bedrock invoke (anthropic)',
    provider: 'bedrock',
    url: 'https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/invoke',
    body: { anthropic_version: 'bedrock-2023-05-31', max_tokens: 64, messages: [{ role: 'user', content: 'Capital of France?' }] },
    answer: () => json(anthropicMessage('claude-3-5-haiku-20241022', TOKENS.bedrock), { 'x-amzn-bedrock-input-token-count': String(TOKENS.bedrock[0]), 'x-amzn-bedrock-output-token-count': String(TOKENS.bedrock[1]) }),
  },
  {
    name: 'bedrock invoke (llama)',
    provider: 'bedrock',
    url: 'https://bedrock-runtime.us-east-1.amazonaws.com/model/meta.llama3-8b-instruct-v1%3A0/invoke',
    body: { prompt: 'Capital of France?', max_gen_len: 64 },
    answer: () => json({ generation: 'Paris.', prompt_token_count: TOKENS.bedrock[0], generation_token_count: TOKENS.bedrock[1], stop_reason: 'stop' }),
  },
  { name: 'ollama chat', provider: 'ollama', url: 'http://127.0.0.1:11434/api/chat', body: { model: 'llama3.2', stream: false, messages: [{ role: 'user', content: 'Capital of France?' }] }, answer: () => json(ollamaChat(TOKENS.ollama)) },
  {
    name: 'ollama chat ndjson',
    provider: 'ollama',
    url: 'http://127.0.0.1:11434/api/chat',
    body: { model: 'llama3.2', messages: [{ role: 'user', content: 'Capital of France?' }] },
    answer: () =>
      new Response([{ model: 'llama3.2', created_at: '2026-01-01T00:00:00Z', message: { role: 'assistant', content: 'Paris.' }, done: false }, ollamaChat(TOKENS.ollama, '')].map((l) => JSON.stringify(l) + '\n').join(''), {
        headers: { 'content-type': 'application/x-ndjson' },
      }),
  },
  {
    name: 'ollama generate',
    provider: 'ollama',
    url: 'http://127.0.0.1:11434/api/generate',
    body: { model: 'llama3.2', stream: false, prompt: 'Capital of France?' },
    answer: () => json({ model: 'llama3.2', created_at: '2026-01-01T00:00:00Z', response: 'Paris.', done: true, done_reason: 'stop', prompt_eval_count: TOKENS.ollama[0], eval_count: TOKENS.ollama[1] }),
  },
  { name: 'azure deployment', provider: 'azure', url: 'https://my.openai.azure.com/openai/deployments/prod-4o/chat/completions?api-version=2024-10-21', body: { messages: [{ role: 'user', content: 'Capital of France?' }] }, answer: () => json(chat('gpt-4o-2024-08-06', TOKENS.azure)) },
  { name: 'groq', provider: 'Groq', url: 'https://api.groq.com/openai/v1/chat/completions', body: { model: 'llama-3.3-70b-versatile', messages: [{ role: 'user', content: 'Capital of France?' }] }, answer: () => json(chat('llama-3.3-70b-versatile', TOKENS.Groq, { x_groq: { id: 'req_1' } })) },
  { name: 'deepseek', provider: 'DeepSeek', url: 'https://api.deepseek.com/chat/completions', body: { model: 'deepseek-chat', messages: [{ role: 'user', content: 'Capital of France?' }] }, answer: () => json(chat('deepseek-chat', TOKENS.DeepSeek)) },
];

/** Records every call of CALLS on `tape` and returns the tape's record values. */
export async function recordEveryProvider(tape: string): Promise<unknown[]> {
  const upstream = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const req = new Request(input, init);
    const body = await req.text();
    const c = CALLS.find((x) => req.url === new URL(x.url).href && body === JSON.stringify(x.body));
    return c ? c.answer() : new Response('{"error":"no such call"}', { status: 404, headers: { 'content-type': 'application/json' } });
  }) as typeof fetch;
  const f = createFetch({ tape, mode: 'record', fetch: upstream, onWarning: () => {} });
  try {
    for (const c of CALLS) {
      const r = await f(c.url, { method: 'POST', headers: { 'content-type': 'application/json', ...c.headers }, body: JSON.stringify(c.body) });
      if (r.status !== 200) throw new Error(`${c.name}: ${r.status} ${await r.text()}`);
      await r.arrayBuffer();
    }
  } finally {
    await f.close();
  }
  return (await readTape(tape)).records.map((x) => x.value);
}
