// Drift of what an answer holds besides its text and its tool calls: reasoning (Anthropic
// thinking, Responses summaries, Gemini thought parts, Ollama `thinking`, Bedrock
// `reasoningContent`), server tool results and citations, audio transcripts, and MCP calls the
// API made itself. An application may show or act on any of it, so a change there is a reported
// change; what differs on every call (ids, timestamps, signatures, encrypted content, audio bytes)
// stays noise. Answers are recorded through createFetch from an upstream that answers in each
// wire format (JSON bodies, Anthropic's server-sent events), once as a base and once changed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerOf } from '../../src/drift/answer.ts';
import { classifyPair } from '../../src/drift/classify.ts';
import { driftReport, type DriftEntry } from '../../src/drift/report.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { readTape } from '../../src/store/tape-file.ts';

/** base: the first recording; noise: only what differs on every call; changed: the content. */
type Variant = 'base' | 'noise' | 'changed';
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-drift-other-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const json = (v: unknown) => new Response(JSON.stringify(v), { headers: { 'content-type': 'application/json' } });
/** What differs on every call: ids, times, and opaque bytes of the given length. */
function noise(v: Variant) {
  const n = v === 'noise' ? 2 : 1;
  const opaque = (len: number) => Buffer.alloc(len, `opaque-${n}-`).toString('base64');
  return { id: `id${n}`, time: 1767225600 + n, iso: `2026-01-0${n}T00:00:00Z`, opaque };
}

function responsesMcp(v: Variant): object {
  const x = noise(v);
  const args = v === 'changed' ? { to: 'mallory', amount: 10000 } : { to: 'alice', amount: 10 };
  return {
    id: `resp_${x.id}`,
    object: 'response',
    created_at: x.time,
    status: 'completed',
    model: 'gpt-5',
    output: [
      { type: 'mcp_list_tools', id: `mcpl_${x.id}`, server_label: 'bank', tools: [{ name: 'transfer', input_schema: { type: 'object' } }] },
      { type: 'mcp_call', id: `mcp_${x.id}`, server_label: 'bank', name: 'transfer', arguments: JSON.stringify(args), output: 'sent', error: null, approval_request_id: null },
      { type: 'message', id: `msg_${x.id}`, status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Done.', annotations: [] }] },
    ],
    usage: { input_tokens: 20, output_tokens: 12, total_tokens: 32 },
  };
}

function responsesReasoning(v: Variant): object {
  const x = noise(v);
  const summary = v === 'changed' ? 'The user may not see the account; I refuse.' : 'The user owns the account; I approve.';
  return {
    id: `resp_${x.id}`,
    object: 'response',
    created_at: x.time,
    status: 'completed',
    model: 'gpt-5',
    output: [
      { type: 'reasoning', id: `rs_${x.id}`, summary: [{ type: 'summary_text', text: summary }], encrypted_content: x.opaque(600) },
      { type: 'message', id: `msg_${x.id}`, status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Here is the balance.', annotations: [] }] },
    ],
    usage: { input_tokens: 20, output_tokens: 12, total_tokens: 32 },
  };
}

const THINKING = { base: 'The user owns the account, so I approve.', changed: 'The user owns the account, so I refuse.' };

function anthropicThinking(v: Variant, text = 'Here is the balance.'): { id: string; content: object[]; [k: string]: unknown } {
  const x = noise(v);
  return {
    id: `msg_${x.id}`,
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-5-20250929',
    content: [
      { type: 'thinking', thinking: v === 'changed' ? THINKING.changed : THINKING.base, signature: x.opaque(400) },
      { type: 'redacted_thinking', data: x.opaque(300) },
      { type: 'text', text },
    ],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 20, output_tokens: 12 },
  };
}

/** Anthropic's stream of the same answer: thinking deltas, its signature, the text. */
function anthropicStream(v: Variant): Response {
  const m = anthropicThinking(v);
  const [thinking, redacted, text] = m.content as [{ thinking: string; signature: string }, object, { text: string }];
  const ev = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  const words = (s: string) => s.match(/\S+\s*/g)!;
  const evs = [
    ev('message_start', { message: { ...m, content: [], stop_reason: null, usage: { input_tokens: 20, output_tokens: 1 } } }),
    ev('content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }),
    ...words(thinking.thinking).map((w) => ev('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: w } })),
    ev('content_block_delta', { index: 0, delta: { type: 'signature_delta', signature: thinking.signature } }),
    ev('content_block_stop', { index: 0 }),
    ev('content_block_start', { index: 1, content_block: redacted }),
    ev('content_block_stop', { index: 1 }),
    ev('content_block_start', { index: 2, content_block: { type: 'text', text: '' } }),
    ...words(text.text).map((w) => ev('content_block_delta', { index: 2, delta: { type: 'text_delta', text: w } })),
    ev('content_block_stop', { index: 2 }),
    ev('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 12 } }),
    ev('message_stop', {}),
  ];
  return new Response(evs.join(''), { headers: { 'content-type': 'text/event-stream' } });
}

function anthropicSearch(v: Variant): object {
  const x = noise(v);
  const title = v === 'changed' ? 'Paris is not the capital' : 'Paris - capital of France';
  return {
    id: `msg_${x.id}`,
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-5-20250929',
    content: [
      { type: 'server_tool_use', id: `srvtoolu_${x.id}`, name: 'web_search', input: { query: 'capital of France' } },
      { type: 'web_search_tool_result', tool_use_id: `srvtoolu_${x.id}`, content: [{ type: 'web_search_result', url: 'https://example.org/paris', title, encrypted_content: x.opaque(500), page_age: null }] },
      { type: 'text', text: 'Paris.', citations: [{ type: 'web_search_result_location', url: 'https://example.org/paris', title, encrypted_index: x.opaque(80), cited_text: 'Paris is the capital' }] },
    ],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 20, output_tokens: 12 },
  };
}

function chatAudio(v: Variant): object {
  const x = noise(v);
  const transcript = v === 'changed' ? 'I will send nine thousand dollars.' : 'I will send one hundred dollars.';
  return {
    id: `chatcmpl-${x.id}`,
    object: 'chat.completion',
    created: x.time,
    model: 'gpt-4o-audio-preview-2024-12-17',
    choices: [{ index: 0, message: { role: 'assistant', content: null, refusal: null, audio: { id: `audio_${x.id}`, data: x.opaque(2000), expires_at: x.time + 3600, transcript }, annotations: [] }, finish_reason: 'stop', logprobs: null }],
    usage: { prompt_tokens: 20, completion_tokens: 12, total_tokens: 32 },
  };
}

/** A spoken chat answer streamed as OpenAI sends it: the audio's id first, then its speech and transcript a piece per chunk. */
function chatAudioStream(v: Variant): Response {
  const whole = chatAudio(v) as { id: string; created: number; model: string; choices: [{ message: { audio: { id: string; data: string; expires_at: number; transcript: string } } }] };
  const audio = whole.choices[0].message.audio;
  const chunk = (delta: object, finish: string | null = null) =>
    `data: ${JSON.stringify({ id: whole.id, object: 'chat.completion.chunk', created: whole.created, model: whole.model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const words = audio.transcript.match(/\S+\s*/g)!;
  const evs = [
    chunk({ role: 'assistant', content: null, refusal: null }),
    chunk({ audio: { id: audio.id, data: audio.data.slice(0, 1000), expires_at: audio.expires_at, transcript: '' } }),
    ...words.map((w, i) => chunk({ audio: { ...(i === 1 ? { data: audio.data.slice(1000) } : {}), transcript: w } })),
    chunk({}, 'stop'),
    'data: [DONE]\n\n',
  ];
  return new Response(evs.join(''), { headers: { 'content-type': 'text/event-stream' } });
}

function gemini(v: Variant): object {
  const x = noise(v);
  return {
    candidates: [
      {
        content: {
          role: 'model',
          parts: [
            { text: v === 'changed' ? THINKING.changed : THINKING.base, thought: true, thoughtSignature: x.opaque(200) },
            { text: 'Here is the balance.', thoughtSignature: x.opaque(100) },
          ],
        },
        finishReason: 'STOP',
        index: 0,
      },
    ],
    usageMetadata: { promptTokenCount: 20, candidatesTokenCount: 12, thoughtsTokenCount: 30, totalTokenCount: 62 },
    modelVersion: 'gemini-2.5-flash',
    responseId: x.id,
  };
}

function ollama(v: Variant): object {
  const x = noise(v);
  return {
    model: 'qwen3',
    created_at: x.iso,
    message: { role: 'assistant', content: 'Here is the balance.', thinking: v === 'changed' ? THINKING.changed : THINKING.base },
    done: true,
    done_reason: 'stop',
    total_duration: 1000 + x.time,
    prompt_eval_count: 20,
    eval_count: 12,
  };
}

function converse(v: Variant): object {
  const x = noise(v);
  return {
    output: {
      message: {
        role: 'assistant',
        content: [
          { reasoningContent: { reasoningText: { text: v === 'changed' ? THINKING.changed : THINKING.base, signature: x.opaque(300) } } },
          { reasoningContent: { redactedContent: x.opaque(300) } },
          { text: 'Here is the balance.' },
        ],
      },
    },
    stopReason: 'end_turn',
    usage: { inputTokens: 20, outputTokens: 12, totalTokens: 32 },
    metrics: { latencyMs: 300 + x.time },
  };
}

const CALLS = [
  { name: 'responses mcp_call', url: 'https://api.openai.com/v1/responses', body: { model: 'gpt-5', input: 'Send alice 10 dollars', tools: [{ type: 'mcp', server_label: 'bank', server_url: 'https://bank.example/mcp' }] } },
  { name: 'responses reasoning', url: 'https://api.openai.com/v1/responses', body: { model: 'gpt-5', input: 'My balance?', reasoning: { summary: 'auto' } } },
  { name: 'anthropic thinking', url: 'https://api.anthropic.com/v1/messages', body: { model: 'claude-sonnet-4-5', max_tokens: 2000, thinking: { type: 'enabled', budget_tokens: 1024 }, messages: [{ role: 'user', content: 'My balance?' }] } },
  { name: 'anthropic thinking streamed', url: 'https://api.anthropic.com/v1/messages', body: { model: 'claude-sonnet-4-5', max_tokens: 2000, stream: true, thinking: { type: 'enabled', budget_tokens: 1024 }, messages: [{ role: 'user', content: 'My balance, streamed?' }] } },
  { name: 'anthropic web search', url: 'https://api.anthropic.com/v1/messages', body: { model: 'claude-sonnet-4-5', max_tokens: 2000, tools: [{ type: 'web_search_20250305', name: 'web_search' }], messages: [{ role: 'user', content: 'Capital of France?' }] } },
  { name: 'chat audio', url: 'https://api.openai.com/v1/chat/completions', body: { model: 'gpt-4o-audio-preview', modalities: ['text', 'audio'], audio: { voice: 'alloy', format: 'wav' }, messages: [{ role: 'user', content: 'How much will you send?' }] } },
  { name: 'chat audio streamed', url: 'https://api.openai.com/v1/chat/completions', body: { model: 'gpt-4o-audio-preview', modalities: ['text', 'audio'], audio: { voice: 'alloy', format: 'pcm16' }, stream: true, messages: [{ role: 'user', content: 'How much will you send?' }] } },
  { name: 'gemini thought', url: 'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent', body: { contents: [{ role: 'user', parts: [{ text: 'My balance?' }] }], generationConfig: { thinkingConfig: { includeThoughts: true } } } },
  { name: 'ollama thinking', url: 'http://127.0.0.1:11434/api/chat', body: { model: 'qwen3', stream: false, think: true, messages: [{ role: 'user', content: 'My balance?' }] } },
  { name: 'bedrock reasoning', url: 'https://bedrock-runtime.us-east-1.amazonaws.com/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse', body: { messages: [{ role: 'user', content: [{ text: 'My balance?' }] }] } },
] as const;

function upstream(v: Variant): typeof fetch {
  return (async (input: RequestInfo | URL, init?: RequestInit) => {
    const req = new Request(input, init);
    const url = new URL(req.url);
    const body = JSON.parse((await req.text()) || '{}') as Record<string, unknown>;
    if (url.pathname === '/v1/responses') return json(body.reasoning ? responsesReasoning(v) : responsesMcp(v));
    if (url.pathname === '/v1/messages') return body.stream ? anthropicStream(v) : json(body.tools ? anthropicSearch(v) : anthropicThinking(v));
    if (url.pathname === '/v1/chat/completions') return body.stream ? chatAudioStream(v) : json(chatAudio(v));
    if (url.pathname.endsWith(':generateContent')) return json(gemini(v));
    if (url.pathname === '/api/chat') return json(ollama(v));
    if (url.pathname.endsWith('/converse')) return json(converse(v));
    return new Response('{}', { status: 404, headers: { 'content-type': 'application/json' } });
  }) as typeof fetch;
}

async function recorded(v: Variant): Promise<unknown[]> {
  const tape = join(dir, `${v}.tape`);
  const f = createFetch({ tape, mode: 'record', fetch: upstream(v), onWarning: () => {} });
  try {
    for (const c of CALLS) {
      const r = await f(c.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(c.body) });
      expect(r.status, `${v} ${c.name}`).toBe(200);
      await r.arrayBuffer();
    }
  } finally {
    await f.close();
  }
  return (await readTape(tape)).records.map((x) => x.value);
}

const tapes: Partial<Record<Variant, unknown[]>> = {};
beforeAll(async () => {
  for (const v of ['base', 'noise', 'changed'] as const) tapes[v] = await recorded(v);
});

function entries(v: Variant): Map<string, DriftEntry> {
  const r = driftReport([{ name: 't', records: tapes.base! }], [{ name: 't', records: tapes[v]! }], { old: 'base', new: v });
  expect(r.entries.map((e) => e.status)).toEqual(CALLS.map(() => 'paired'));
  return new Map(r.entries.map((e, i) => [CALLS[i]!.name, e]));
}

/** What a word diff removed and added, as two strings. */
function removedAdded(e: DriftEntry): { removed: string; added: string } {
  const ops = e.details.text?.ops ?? [];
  return { removed: ops.filter(([op]) => op === '-').map(([, t]) => t).join(' '), added: ops.filter(([op]) => op === '+').map(([, t]) => t).join(' ') };
}

describe('tapedeck diff compares what an answer holds besides its text and tool calls', () => {
  it('noise only (ids, times, signatures, encrypted content, audio bytes): benign', () => {
    const got = entries('noise');
    for (const c of CALLS) expect(got.get(c.name)!.classes, c.name).toEqual(['benign']);
    // Said as the noise it is.
    expect(got.get('anthropic thinking')!.details.benign).toContain('opaque members changed: signature, data');
    expect(got.get('chat audio')!.details.benign).toContain('opaque members changed: data');
    expect(got.get('chat audio streamed')!.details.benign).toContain('opaque members changed: data');
  });

  it('the same tape: identical', () => {
    const r = driftReport([{ name: 't', records: tapes.base! }], [{ name: 't', records: tapes.base! }], { old: 'a', new: 'b' });
    expect(r.entries.map((e) => e.classes)).toEqual(CALLS.map(() => ['identical']));
  });

  it('an MCP call the Responses API made with other arguments: tool-calls', () => {
    const e = entries('changed').get('responses mcp_call')!;
    expect(e.classes).toEqual(['tool-calls']);
    expect(e.details.toolCalls).toEqual([
      expect.objectContaining({ change: 'arguments', name: 'transfer', oldArguments: { to: 'alice', amount: 10 }, newArguments: { to: 'mallory', amount: 10000 } }),
    ]);
  });

  it.each([
    ['responses reasoning', 'approve.', 'refuse.'],
    ['anthropic thinking', 'approve.', 'refuse.'],
    ['anthropic thinking streamed', 'approve.', 'refuse.'],
    ['anthropic web search', 'capital of France', 'not the capital'],
    ['chat audio', 'one hundred', 'nine thousand'],
    ['chat audio streamed', 'one hundred', 'nine thousand'],
    ['gemini thought', 'approve.', 'refuse.'],
    ['ollama thinking', 'approve.', 'refuse.'],
    ['bedrock reasoning', 'approve.', 'refuse.'],
  ])('%s: the other content changed: text, its words in the diff', (name, was, now) => {
    const e = entries('changed').get(name)!;
    expect(e.classes, name).toEqual(['text']);
    const { removed, added } = removedAdded(e);
    for (const w of was.split(' ')) expect(removed, name).toContain(w);
    for (const w of now.split(' ')) expect(added, name).toContain(w);
    // The content's noise is not shown: no signature, no encrypted content, no audio bytes.
    const shown = e.details.text!.ops.map(([, t]) => t).join('');
    expect(shown).not.toMatch(/b3BhcXVl/); // base64 of "opaque"
  });

  it('the text and the thinking both changed: the diff shows both', () => {
    const old = answerOf(recordOf(anthropicThinking('base', 'Here is the balance.')))!;
    const now = answerOf(recordOf(anthropicThinking('changed', 'There is no balance.')))!;
    const c = classifyPair(old, now, {});
    expect(c.classes).toEqual(['text']);
    const ops = c.details.text!.ops;
    const removed = ops.filter(([op]) => op === '-').map(([, t]) => t).join(' ');
    const added = ops.filter(([op]) => op === '+').map(([, t]) => t).join(' ');
    expect(removed).toContain('Here');
    expect(added).toContain('There');
    expect(removed).toContain('approve.');
    expect(added).toContain('refuse.');
  });

  it('the same text split into other blocks, with no citations: no change of content', () => {
    const m = (content: object[]) => ({ ...anthropicThinking('base'), content: [anthropicThinking('base').content[0]!, ...content] });
    const one = m([{ type: 'text', text: 'Here is the balance.', citations: null }]);
    const two = m([{ type: 'text', text: 'Here is ' }, { type: 'text', text: 'the balance.' }]);
    expect(classifyPair(answerOf(recordOf(one))!, answerOf(recordOf(two))!, {}).classes).toEqual(['benign']);
  });

  it('a long opaque value that is content compares by its bytes and shows short', () => {
    const image = (n: number) => ({
      id: `resp_${n}`,
      object: 'response',
      created_at: n,
      status: 'completed',
      model: 'gpt-5',
      output: [{ type: 'image_generation_call', id: `ig_${n}`, status: 'completed', result: Buffer.alloc(3000, `png-${n}`).toString('base64') }],
    });
    const c = classifyPair(answerOf(recordOf(image(1), '/v1/responses'))!, answerOf(recordOf(image(2), '/v1/responses'))!, {});
    expect(c.classes).toEqual(['text']);
    const shown = c.details.text!.ops.map(([, t]) => t).join('');
    expect(shown).toMatch(/sha256:[0-9a-f]{12}/);
    expect(shown).toContain('4000 chars');
    expect(shown.length).toBeLessThan(1000);
    // The same image with new ids: benign.
    const again = { ...image(1), id: 'resp_9', created_at: 9 };
    expect(classifyPair(answerOf(recordOf(image(1), '/v1/responses'))!, answerOf(recordOf(again, '/v1/responses'))!, {}).classes).toEqual(['benign']);
  });
});

/**
 * A recording of the base tape (the first to `path`) answered with `body` instead: what a tape
 * recorded with that answer holds.
 */
function recordOf(body: unknown, path = '/v1/messages'): unknown {
  const rec = tapes.base!.find((r) => (r as { route: string }).route === `POST ${path}`) as { response: object };
  return { ...rec, response: { ...rec.response, body: new Uint8Array(Buffer.from(JSON.stringify(body))) } };
}
