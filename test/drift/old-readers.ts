// The answer readers drift/, tree/ and the stats had before each provider module read its own
// answers (src/providers, readAnswer), kept as they were: the oracle the differential test
// (answer-readers.test.ts) holds the modules' readers to, for the shapes these knew.
/* eslint-disable */
type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The shape of a JSON answer body, from the members each API's answers carry. */
export function oldShapeOf(body: unknown): string {
  if (!isObj(body)) return body === undefined ? 'none' : 'json';
  if (body.object === 'chat.completion' || body.object === 'text_completion' || (Array.isArray(body.choices) && 'created' in body)) return 'openai-chat';
  if (body.object === 'response' && Array.isArray(body.output)) return 'openai-responses';
  if (body.type === 'message' && Array.isArray(body.content)) return 'anthropic';
  if (Array.isArray(body.candidates)) return 'gemini';
  if (isObj(body.output) && isObj(body.output.message) && 'stopReason' in body) return 'bedrock-converse';
  if (typeof body.done === 'boolean' && (isObj(body.message) || typeof body.response === 'string')) return 'ollama';
  return 'json';
}

export interface Content { texts: string[]; calls: { name: string; args: unknown }[]; finish: string[]; refusal: string; usage: { input?: number; output?: number } | undefined; rest: unknown }
const parseArgs = (s: unknown): unknown => {
  if (typeof s !== 'string') return s;
  try {
    return JSON.parse(s);
  } catch {
    return s;
  }
};

const num = (v: unknown) => (typeof v === 'number' ? v : undefined);

function partsText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((p) => (isObj(p) && typeof p.text === 'string' ? p.text : '')).join('');
}

function openaiChat(a: Obj): Content {
  const c: Content = { texts: [], calls: [], finish: [], refusal: '', usage: undefined, rest: undefined };
  const choices: unknown[] = [];
  for (const ch of Array.isArray(a.choices) ? a.choices : []) {
    if (!isObj(ch)) continue;
    const m = isObj(ch.message) ? ch.message : {};
    c.texts.push(typeof ch.text === 'string' ? ch.text : partsText(m.content));
    for (const t of Array.isArray(m.tool_calls) ? m.tool_calls : []) {
      if (isObj(t) && isObj(t.function)) c.calls.push({ name: String(t.function.name ?? ''), args: parseArgs(t.function.arguments) });
      else if (isObj(t)) c.calls.push({ name: String(t.type ?? ''), args: t });
    }
    if (isObj(m.function_call)) c.calls.push({ name: String(m.function_call.name ?? ''), args: parseArgs(m.function_call.arguments) });
    c.finish.push(String(ch.finish_reason ?? ''));
    if (typeof m.refusal === 'string') c.refusal += m.refusal;
    const { content: _c, tool_calls: _t, function_call: _f, refusal: _r, ...mrest } = m;
    const { message: _m, text: _x, finish_reason: _fr, logprobs: _l, ...crest } = ch;
    choices.push({ ...crest, message: mrest });
  }
  const u = isObj(a.usage) ? a.usage : undefined;
  if (u) c.usage = { input: num(u.prompt_tokens), output: num(u.completion_tokens) };
  c.rest = { ...a, choices };
  return c;
}

function openaiResponses(a: Obj): Content {
  const c: Content = { texts: [], calls: [], finish: [], refusal: '', usage: undefined, rest: undefined };
  const other: unknown[] = [];
  let text = '';
  for (const item of Array.isArray(a.output) ? a.output : []) {
    if (!isObj(item)) continue;
    if (item.type === 'message') {
      for (const p of Array.isArray(item.content) ? item.content : []) {
        if (!isObj(p)) continue;
        if (p.type === 'refusal' && typeof p.refusal === 'string') c.refusal += p.refusal;
        else if (typeof p.text === 'string') text += p.text;
      }
    } else if (item.type === 'function_call' || item.type === 'custom_tool_call') {
      c.calls.push({ name: String(item.name ?? ''), args: parseArgs(item.arguments ?? item.input) });
    } else {
      // Reasoning, searches and other items: their kind is structure, their words are not read.
      other.push({ type: item.type });
    }
  }
  c.texts.push(text);
  const incomplete = isObj(a.incomplete_details) ? a.incomplete_details.reason : undefined;
  c.finish.push(`${String(a.status ?? '')}${incomplete ? `:${String(incomplete)}` : ''}`);
  const u = isObj(a.usage) ? a.usage : undefined;
  if (u) c.usage = { input: num(u.input_tokens), output: num(u.output_tokens) };
  const { output: _o, output_text: _ot, status: _s, incomplete_details: _i, ...rest } = a;
  c.rest = { ...rest, output: other };
  return c;
}

function anthropic(a: Obj): Content {
  const c: Content = { texts: [], calls: [], finish: [], refusal: '', usage: undefined, rest: undefined };
  const other: unknown[] = [];
  let text = '';
  for (const b of Array.isArray(a.content) ? a.content : []) {
    if (!isObj(b)) continue;
    if (b.type === 'text' && typeof b.text === 'string') text += b.text;
    else if (b.type === 'tool_use' || b.type === 'server_tool_use' || b.type === 'mcp_tool_use') c.calls.push({ name: String(b.name ?? ''), args: b.input });
    else other.push({ type: b.type });
  }
  c.texts.push(text);
  c.finish.push(String(a.stop_reason ?? ''));
  if (a.stop_reason === 'refusal') c.refusal = 'refusal';
  const u = isObj(a.usage) ? a.usage : undefined;
  if (u) c.usage = { input: num(u.input_tokens), output: num(u.output_tokens) };
  const { content: _c, stop_reason: _s, stop_sequence: _q, ...rest } = a;
  c.rest = { ...rest, content: other };
  return c;
}

function gemini(a: Obj): Content {
  const c: Content = { texts: [], calls: [], finish: [], refusal: '', usage: undefined, rest: undefined };
  const candidates: unknown[] = [];
  for (const cand of Array.isArray(a.candidates) ? a.candidates : []) {
    if (!isObj(cand)) continue;
    const content = isObj(cand.content) ? cand.content : {};
    let text = '';
    const other: unknown[] = [];
    for (const p of Array.isArray(content.parts) ? content.parts : []) {
      if (!isObj(p)) continue;
      if (p.thought === true) other.push({ thought: true });
      else if (typeof p.text === 'string') text += p.text;
      else if (isObj(p.functionCall)) c.calls.push({ name: String(p.functionCall.name ?? ''), args: p.functionCall.args });
      else other.push(Object.keys(p).sort());
    }
    c.texts.push(text);
    c.finish.push(String(cand.finishReason ?? ''));
    if (cand.finishReason === 'SAFETY' || cand.finishReason === 'PROHIBITED_CONTENT') c.refusal = String(cand.finishReason);
    const { content: _c, finishReason: _f, safetyRatings: _s, citationMetadata: _m, avgLogprobs: _l, ...crest } = cand;
    candidates.push({ ...crest, parts: other });
  }
  const u = isObj(a.usageMetadata) ? a.usageMetadata : undefined;
  if (u) c.usage = { input: num(u.promptTokenCount), output: num(u.candidatesTokenCount) };
  const { candidates: _cs, usageMetadata: _u, responseId: _r, modelVersion: _v, createTime: _t, ...rest } = a;
  c.rest = { ...rest, candidates };
  return c;
}

function bedrockConverse(a: Obj): Content {
  const c: Content = { texts: [], calls: [], finish: [], refusal: '', usage: undefined, rest: undefined };
  const message = isObj(a.output) && isObj(a.output.message) ? a.output.message : {};
  const other: unknown[] = [];
  let text = '';
  for (const b of Array.isArray(message.content) ? message.content : []) {
    if (!isObj(b)) continue;
    if (typeof b.text === 'string') text += b.text;
    else if (isObj(b.toolUse)) c.calls.push({ name: String(b.toolUse.name ?? ''), args: b.toolUse.input });
    else other.push(Object.keys(b).sort());
  }
  c.texts.push(text);
  c.finish.push(String(a.stopReason ?? ''));
  if (a.stopReason === 'guardrail_intervened' || a.stopReason === 'content_filtered') c.refusal = String(a.stopReason);
  const u = isObj(a.usage) ? a.usage : undefined;
  if (u) c.usage = { input: num(u.inputTokens), output: num(u.outputTokens) };
  const { output: _o, stopReason: _s, usage: _u, metrics: _m, ...rest } = a;
  c.rest = { ...rest, content: other };
  return c;
}

function ollama(a: Obj): Content {
  const c: Content = { texts: [], calls: [], finish: [], refusal: '', usage: undefined, rest: undefined };
  const m = isObj(a.message) ? a.message : undefined;
  c.texts.push(m ? (typeof m.content === 'string' ? m.content : '') : String(a.response ?? ''));
  for (const t of m && Array.isArray(m.tool_calls) ? m.tool_calls : []) {
    if (isObj(t) && isObj(t.function)) c.calls.push({ name: String(t.function.name ?? ''), args: parseArgs(t.function.arguments) });
  }
  c.finish.push(String(a.done_reason ?? (a.done === true ? 'stop' : '')));
  if (typeof a.prompt_eval_count === 'number' || typeof a.eval_count === 'number') c.usage = { input: num(a.prompt_eval_count), output: num(a.eval_count) };
  // Timings and the context vector change on every call: noise, as ids are.
  const { message: _m, response: _r, done_reason: _d, done: _dn, prompt_eval_count: _p, eval_count: _e, total_duration: _t, load_duration: _l, prompt_eval_duration: _pd, eval_duration: _ed, context: _c, thinking: _th, ...rest } = a;
  const mrest = m ? (({ content: _mc, tool_calls: _mt, thinking: _mth, ...x }) => x)(m) : undefined;
  c.rest = { ...rest, ...(mrest ? { message: mrest } : {}) };
  return c;
}

export function oldContentOf(shape: string, b: unknown): Content | undefined {
  if (isObj(b) && shape === 'openai-chat') return openaiChat(b);
  if (isObj(b) && shape === 'openai-responses') return openaiResponses(b);
  if (isObj(b) && shape === 'anthropic') return anthropic(b);
  if (isObj(b) && shape === 'gemini') return gemini(b);
  if (isObj(b) && shape === 'bedrock-converse') return bedrockConverse(b);
  if (isObj(b) && shape === 'ollama') return ollama(b);
  return undefined;
}

const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
/** Input and output tokens an answer reports (Anthropic's cached input counted as input). */
export function oldUsageOf(body: unknown): { input: number; output: number } | undefined {
  if (!isObj(body) || !isObj(body.usage)) return undefined;
  const u = body.usage;
  if ('prompt_tokens' in u || 'completion_tokens' in u) return { input: n(u.prompt_tokens), output: n(u.completion_tokens) };
  if ('input_tokens' in u || 'output_tokens' in u) return { input: n(u.input_tokens) + n(u.cache_creation_input_tokens) + n(u.cache_read_input_tokens), output: n(u.output_tokens) };
  return undefined;
}

/** The assistant message a chat-completion choice stands for. */
function choiceMessage(choice: unknown): unknown[] | undefined {
  if (!isObj(choice)) return undefined;
  const m = isObj(choice.message) ? choice.message : isObj(choice.delta) ? choice.delta : undefined;
  if (m) return [m.role === undefined ? { ...m, role: 'assistant' } : m];
  if (typeof choice.text === 'string') return [{ role: 'assistant', content: choice.text }];
  return undefined;
}
export function oldResponseMessages(value: unknown): unknown[][] {
  if (value === undefined || value === null) return [];
  if (typeof value === 'string') return [[{ role: 'assistant', content: value }]];
  if (!isObj(value)) return [[{ role: 'assistant', content: value }]];
  if (Array.isArray(value.choices)) {
    const alts = value.choices.map(choiceMessage).filter((m): m is unknown[] => m !== undefined);
    if (alts.length > 0) return alts;
  }
  if (Array.isArray(value.candidates)) {
    // Gemini: each candidate's content ({ role: 'model', parts }) is what the client sends back.
    const alts = value.candidates.filter((c): c is Obj => isObj(c) && isObj(c.content)).map((c) => [c.content]);
    if (alts.length > 0) return alts;
  }
  if (isObj(value.output) && isObj(value.output.message)) {
    // Bedrock Converse: `output.message` ({ role, content blocks }) is what the client sends back.
    return [[value.output.message]];
  }
  // An Ollama chat answer: the client sends `message` back as it is.
  if (isObj(value.message) && typeof value.done === 'boolean') return [[value.message]];
  if (Array.isArray(value.output) && (value.object === 'response' || value.role === undefined)) {
    if (value.output.length > 0) return [value.output.slice()];
  }
  if ('content' in value || 'tool_calls' in value) {
    // An Anthropic message (type 'message', stop_reason, usage...) is continued as { role, content }:
    // its bookkeeping members are not part of what the client sends back.
    const bookkeeping = value.type === 'message' || 'stop_reason' in value || 'usage' in value || 'model' in value;
    if (bookkeeping || value.role === undefined) {
      const m: Obj = { role: typeof value.role === 'string' ? value.role : 'assistant', content: value.content };
      if (value.tool_calls !== undefined) m.tool_calls = value.tool_calls;
      return [[m]];
    }
    return [[value]];
  }
  return [[{ role: 'assistant', content: value }]];
}
