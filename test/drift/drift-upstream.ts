// A stand-in for the OpenAI (chat completions and Responses) and Anthropic APIs, plus a plain
// JSON endpoint, on 127.0.0.1, whose answers change on purpose: `variant` picks one kind of
// drift at a time, so a tape recorded under 'base' and one recorded under a variant differ in
// exactly that way. Answers are deterministic (ids included) for a given variant, as the wire
// formats have them: JSON bodies and server-sent events.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Variant = 'base' | 'benign' | 'text' | 'tool-calls' | 'finish' | 'structure' | 'stream' | 'status';
export const VARIANTS: readonly Variant[] = ['base', 'benign', 'text', 'tool-calls', 'finish', 'structure', 'stream', 'status'];

export interface DriftUpstream {
  url: string;
  variant: Variant;
  /** Requests received: path, headers and parsed body. */
  calls: { path: string; headers: Record<string, string | string[] | undefined>; body: Record<string, unknown> }[];
  /** Answer this many of the next requests with 429 and a retry-after of `retryAfter` seconds. */
  throttle(times: number, retryAfter?: number): void;
  /** Cut the next streamed answer mid-stream (socket destroyed after a few events). */
  cutNextStream(): void;
  close(): Promise<void>;
}

type Obj = Record<string, unknown>;

const BASE_TEXT = 'The capital of France is Paris. It sits on the Seine.';
const TEXT_CHANGED = 'The capital of France is Paris, a city on the river Seine.';
const BENIGN_TEXT = 'The capital of France is Paris.  It sits on the Seine.';

function lastUserText(body: Obj): string {
  const msgs = (Array.isArray(body.messages) ? body.messages : Array.isArray(body.input) ? body.input : typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : []) as Obj[];
  const m = [...msgs].reverse().find((x) => x.role === 'user');
  if (!m) return '';
  if (typeof m.content === 'string') return m.content;
  if (Array.isArray(m.content)) return (m.content as Obj[]).map((p) => String(p.text ?? '')).join('');
  return '';
}

/** A short stable tag of the prompt, so ids are deterministic and differ per request. */
const tag = (s: string) => {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return (h >>> 0).toString(36);
};

/** Changes made on top of a variant. */
export interface UpstreamOptions {
  /** Output tokens every answer reports (default 12, 13 for 'benign'): its usage alone changes. */
  outputTokens?: number;
}

export async function startDriftUpstream(variant: Variant = 'base', opts: UpstreamOptions = {}): Promise<DriftUpstream> {
  const calls: DriftUpstream['calls'] = [];
  let throttled = 0;
  let retryAfter = 0;
  let cut = false;
  const up: DriftUpstream = {
    url: '',
    variant,
    calls,
    throttle(times, after = 0) {
      throttled = times;
      retryAfter = after;
    },
    cutNextStream() {
      cut = true;
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };

  const server = createServer(async (req, res) => {
    const parts: Buffer[] = [];
    for await (const c of req) parts.push(c as Buffer);
    const path = (req.url ?? '').split('?')[0]!;
    let body: Obj = {};
    try {
      body = JSON.parse(Buffer.concat(parts).toString('utf8')) as Obj;
    } catch {
      // not JSON: answered below as a bad request
    }
    calls.push({ path, headers: req.headers, body });
    const v = up.variant;
    const json = (status: number, value: unknown, headers: Record<string, string> = {}) => {
      const s = JSON.stringify(value);
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(s), ...headers });
      res.end(s);
    };
    if (throttled > 0) {
      throttled--;
      return json(429, { error: { message: 'Rate limit reached', type: 'rate_limit_error' } }, { 'retry-after': String(retryAfter) });
    }
    if (v === 'status') return json(500, { error: { message: 'The server had an error', type: 'server_error' } });
    const prompt = lastUserText(body);
    const id = `${tag(prompt)}${v === 'benign' ? 'b' : ''}`;
    const created = v === 'benign' ? 1767229200 : 1767225600;
    const text = v === 'text' ? TEXT_CHANGED : v === 'benign' ? BENIGN_TEXT : BASE_TEXT;
    const args = { city: 'Paris', unit: v === 'tool-calls' ? 'fahrenheit' : 'celsius' };
    const tools = Array.isArray(body.tools) && body.tools.length > 0;
    const out = opts.outputTokens ?? (v === 'benign' ? 13 : 12);
    const extra: Obj = v === 'structure' ? { moderation: { flagged: false } } : {};
    const schema = path === '/v1/chat/completions' && (body.response_format as Obj | undefined)?.type === 'json_schema';
    const answerText = schema ? JSON.stringify(v === 'structure' ? { city: 'Paris' } : { city: 'Paris', population: 2102650 }) : text;

    if (path === '/v1/chat/completions') {
      const finish = v === 'finish' ? 'length' : tools ? 'tool_calls' : 'stop';
      const head = { id: `chatcmpl-${id}`, object: 'chat.completion', created, model: 'gpt-4o-mini-2024-07-18', system_fingerprint: v === 'benign' ? 'fp_b2' : 'fp_a1', ...extra };
      const usage = { prompt_tokens: 20, completion_tokens: out, total_tokens: 20 + out };
      if (body.stream) {
        const chunk = (delta: Obj, finish_reason: string | null = null, more: Obj = {}) => `data: ${JSON.stringify({ ...head, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason, logprobs: null }], ...more })}\n\n`;
        const evs = [chunk({ role: 'assistant', content: '' })];
        if (tools) {
          const a = JSON.stringify(args);
          evs.push(chunk({ tool_calls: [{ index: 0, id: `call_${id}`, type: 'function', function: { name: 'get_weather', arguments: '' } }] }));
          const pieces = v === 'stream' ? a.match(/.{1,4}/g)! : [a.slice(0, 10), a.slice(10)];
          for (const p of pieces) evs.push(chunk({ tool_calls: [{ index: 0, function: { arguments: p } }] }));
        } else {
          const pieces = v === 'stream' ? answerText.match(/.{1,3}/gs)! : answerText.match(/\S+\s*/g)!;
          for (const p of pieces) evs.push(chunk({ content: p }));
        }
        evs.push(chunk({}, finish));
        evs.push(`data: ${JSON.stringify({ ...head, object: 'chat.completion.chunk', choices: [], usage })}\n\n`);
        evs.push('data: [DONE]\n\n');
        return sse(res, evs);
      }
      const message = tools
        ? { role: 'assistant', content: null, tool_calls: [{ id: `call_${id}`, type: 'function', function: { name: 'get_weather', arguments: JSON.stringify(args) } }], refusal: null }
        : { role: 'assistant', content: answerText, refusal: null };
      return json(200, { ...head, choices: [{ index: 0, message, finish_reason: finish, logprobs: null }], usage });
    }

    if (path === '/v1/responses') {
      const status = v === 'finish' ? 'incomplete' : 'completed';
      const output = tools
        ? [{ type: 'function_call', id: `fc_${id}`, call_id: `call_${id}`, name: 'get_weather', arguments: JSON.stringify(args), status: 'completed' }]
        : [{ type: 'message', id: `msg_${id}`, status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] }];
      const response = {
        id: `resp_${id}`,
        object: 'response',
        created_at: created,
        status,
        incomplete_details: v === 'finish' ? { reason: 'max_output_tokens' } : null,
        model: 'gpt-4o-mini-2024-07-18',
        output,
        usage: { input_tokens: 20, output_tokens: out, total_tokens: 20 + out },
        ...extra,
      };
      if (body.stream) {
        let seq = 0;
        const ev = (type: string, data: Obj) => `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...data })}\n\n`;
        const evs = [ev('response.created', { response: { ...response, status: 'in_progress', output: [], usage: null } })];
        if (v === 'stream') evs.push(ev('response.in_progress', { response: { ...response, status: 'in_progress', output: [], usage: null } }));
        evs.push(ev('response.output_item.added', { output_index: 0, item: { ...output[0], content: [] } }));
        for (const p of text.match(/\S+\s*/g)!) evs.push(ev('response.output_text.delta', { item_id: `msg_${id}`, output_index: 0, content_index: 0, delta: p }));
        evs.push(ev('response.output_text.done', { item_id: `msg_${id}`, output_index: 0, content_index: 0, text }));
        evs.push(ev('response.output_item.done', { output_index: 0, item: output[0] }));
        evs.push(ev(status === 'completed' ? 'response.completed' : 'response.incomplete', { response }));
        return sse(res, evs);
      }
      return json(200, response);
    }

    if (path === '/v1/messages') {
      const stop = v === 'finish' ? 'max_tokens' : tools ? 'tool_use' : 'end_turn';
      const content = tools ? [{ type: 'tool_use', id: `toolu_${id}`, name: 'get_weather', input: args }] : [{ type: 'text', text }];
      const message = { id: `msg_${id}`, type: 'message', role: 'assistant', model: 'claude-sonnet-4-5-20250929', content, stop_reason: stop, stop_sequence: null, usage: { input_tokens: 20, output_tokens: out }, ...extra };
      if (body.stream) {
        const ev = (type: string, data: Obj) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
        const evs = [ev('message_start', { message: { ...message, content: [], stop_reason: null, usage: { input_tokens: 20, output_tokens: 1 } } })];
        if (tools) {
          evs.push(ev('content_block_start', { index: 0, content_block: { type: 'tool_use', id: `toolu_${id}`, name: 'get_weather', input: {} } }));
          const a = JSON.stringify(args);
          for (const p of v === 'stream' ? a.match(/.{1,5}/g)! : [a.slice(0, 9), a.slice(9)]) evs.push(ev('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: p } }));
        } else {
          evs.push(ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }));
          const pieces = text.match(/\S+\s*/g)!;
          pieces.forEach((p, i) => {
            evs.push(ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: p } }));
            // The stream variant sends a keep-alive ping in the middle of the text.
            if (v === 'stream' && i === 2) evs.push(ev('ping', {}));
          });
        }
        evs.push(ev('content_block_stop', { index: 0 }));
        evs.push(ev('message_delta', { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: out } }));
        evs.push(ev('message_stop', {}));
        return sse(res, evs);
      }
      return json(200, message);
    }

    if (path === '/v1/search') {
      const score = v === 'structure' ? '0.93' : 0.93;
      return json(200, {
        query: body.query,
        request_id: `req_${id}`,
        results: [{ title: v === 'text' ? 'Paris, capital of France' : 'Paris - the capital of France', score, url: 'https://example.org/paris' }],
      });
    }
    return json(404, { error: { message: `no route ${path}`, type: 'invalid_request_error' } });
  });

  async function sse(res: ServerResponse, events: string[]): Promise<void> {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    const cutAt = cut ? Math.min(3, events.length - 1) : -1;
    cut = false;
    for (let i = 0; i < events.length; i++) {
      if (i === cutAt) {
        res.destroy();
        return;
      }
      res.write(events[i]);
      await new Promise((r) => setTimeout(r, 1));
    }
    res.end();
  }

  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  up.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return up;
}
