// A local stand-in for the OpenAI and Anthropic APIs, on 127.0.0.1 and a free port: JSON and
// server-sent-event answers, tool calls, a slow stream, an error endpoint and a GET. Answers are
// derived from the request, plus a per-server call counter, so a replay that returns a recording
// is told apart from a live call.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Upstream {
  url: string;
  server: Server;
  /** Requests received, in order. */
  calls: {
    method: string;
    url: string;
    headers: IncomingMessage['headers'];
    body: string;
    bytes: Buffer;
    /** Resolves when the caller closed the connection before this answer was finished. */
    aborted: Promise<void>;
  }[];
  close(): Promise<void>;
}

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

function lastUserText(body: { messages?: { role: string; content: unknown }[] }): string {
  const m = [...(body.messages ?? [])].reverse().find((x) => x.role === 'user');
  if (!m) return '';
  if (typeof m.content === 'string') return m.content;
  if (Array.isArray(m.content)) return m.content.map((p: { text?: string }) => p.text ?? '').join('');
  return '';
}

async function sse(res: ServerResponse, events: string[], gapMs: number): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-request-id': 'req_stream' });
  for (const e of events) {
    if (res.destroyed) return;
    res.write(e);
    // A real gap between events makes each one its own chunk, as from a real provider.
    await wait(gapMs);
  }
  res.end();
}

function openaiStream(n: number, text: string, tools: boolean): string[] {
  const base = { id: `chatcmpl-${n}`, object: 'chat.completion.chunk', created: 1767225600, model: 'gpt-4o-mini' };
  const ev = (delta: unknown, finish: string | null = null) => `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const out = [ev({ role: 'assistant', content: '' })];
  if (tools) {
    out.push(ev({ tool_calls: [{ index: 0, id: `call_${n}`, type: 'function', function: { name: 'get_weather', arguments: '' } }] }));
    out.push(ev({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }));
    out.push(ev({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }));
    out.push(ev({}, 'tool_calls'));
  } else {
    for (const word of `Echo ${n}: ${text}`.split(' ')) out.push(ev({ content: `${word} ` }));
    out.push(ev({}, 'stop'));
  }
  // A comment line and an extra blank line: replay must keep them byte for byte.
  out.push(': keep-alive\n\n\n');
  out.push('data: [DONE]\n\n');
  return out;
}

function anthropicStream(n: number, text: string, tools: boolean): string[] {
  const ev = (type: string, data: unknown) => `event: ${type}\ndata: ${JSON.stringify({ type, ...(data as object) })}\n\n`;
  const out = [
    ev('message_start', {
      message: { id: `msg_${n}`, type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 12, output_tokens: 1 } },
    }),
  ];
  if (tools) {
    out.push(ev('content_block_start', { index: 0, content_block: { type: 'tool_use', id: `toolu_${n}`, name: 'get_weather', input: {} } }));
    out.push(ev('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: '{"city":' } }));
    out.push(ev('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: '"Paris"}' } }));
    out.push(ev('content_block_stop', { index: 0 }));
    out.push(ev('message_delta', { delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 9 } }));
  } else {
    out.push(ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }));
    out.push('event: ping\ndata: {"type": "ping"}\n\n');
    for (const word of `Echo ${n}: ${text}`.split(' ')) out.push(ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: `${word} ` } }));
    out.push(ev('content_block_stop', { index: 0 }));
    out.push(ev('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 7 } }));
  }
  out.push(ev('message_stop', {}));
  return out;
}

/**
 * The tokens `/oauth/token` answers with: a 70-byte-ish OAuth answer sent in two writes, so it
 * arrives in two chunks (secret members split across them).
 */
export const OAUTH_TOKENS = { access_token: 'oat-2chunk-Qw3rTy8uIo1pAs5dFg', refresh_token: 'ort-2chunk-Zx7cVb2nMq9wLk4j' };

export interface UpstreamOptions {
  /** Gap between streamed events (default 2 ms). */
  gapMs?: number;
}

/** Starts the fake provider on 127.0.0.1, port 0. */
export async function startUpstream(opts: UpstreamOptions = {}): Promise<Upstream> {
  const gap = opts.gapMs ?? 2;
  const calls: Upstream['calls'] = [];
  let n = 0;
  const server = createServer(async (req, res) => {
    const parts: Buffer[] = [];
    for await (const c of req) parts.push(c as Buffer);
    // A compressed request body is decoded, as real providers' front ends do.
    const enc = String(req.headers['content-encoding'] ?? '');
    const zlib = enc ? await import('node:zlib') : undefined;
    const plain = !zlib ? Buffer.concat(parts) : enc === 'gzip' ? zlib.gunzipSync(Buffer.concat(parts)) : enc === 'br' ? zlib.brotliDecompressSync(Buffer.concat(parts)) : zlib.inflateSync(Buffer.concat(parts));
    const raw = plain.toString('utf8');
    const aborted = new Promise<void>((r) => res.once('close', () => !res.writableFinished && r()));
    calls.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: raw, bytes: Buffer.concat(parts), aborted });
    const count = ++n;
    const path = (req.url ?? '').split('?')[0];
    const json = (status: number, v: unknown, extra: Record<string, string | string[]> = {}) => {
      const s = JSON.stringify(v);
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(s), ...extra });
      res.end(s);
    };
    if (req.method === 'GET' && path === '/v1/models') {
      return json(200, { object: 'list', data: [{ id: 'gpt-4o-mini', object: 'model', created: 1767225600, owned_by: 'fake', call: count }] });
    }
    // Never answers (a hung provider): for timeouts and shutdown bounds. Also under /v1/hang/,
    // so an SDK with its base URL there hangs on any endpoint.
    if (path === '/v1/hang' || path.startsWith('/v1/hang/')) return;
    // Sends headers and one chunk, then hangs mid-answer.
    if (path === '/v1/hang-body') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"partial":true}\n\n');
      return;
    }
    // Uploads (multipart, audio bytes, gzip): the answer names the bytes received.
    if (path === '/v1/audio/transcriptions' || path === '/v1/files') {
      const bytes = Buffer.concat(parts);
      const { createHash } = await import('node:crypto');
      return json(200, { text: `transcript ${count}`, bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex'), encoding: req.headers['content-encoding'] ?? null });
    }
    if (path === '/oauth/token') {
      const text = JSON.stringify({ ...OAUTH_TOKENS, expires_in: 3600 });
      const cut = text.indexOf('refresh') - 4;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(text.slice(0, cut));
      await wait(20);
      res.end(text.slice(cut));
      return;
    }
    if (path === '/v1/fail') return json(500, { error: { message: `upstream failure ${count}`, type: 'server_error', code: null } });
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      return json(400, { error: { message: 'bad json', type: 'invalid_request_error' } });
    }
    const text = lastUserText(body as never);
    const tools = Array.isArray(body.tools) && body.tools.length > 0;
    const slow = text.includes('slow');
    if (path === '/v1/chat/completions') {
      if (body.stream) return sse(res, openaiStream(count, text, tools), slow ? 20 : gap);
      const message = tools
        ? { role: 'assistant', content: null, tool_calls: [{ id: `call_${count}`, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }], refusal: null }
        : { role: 'assistant', content: `Echo ${count}: ${text}`, refusal: null };
      return json(
        200,
        {
          id: `chatcmpl-${count}`,
          object: 'chat.completion',
          created: 1767225600,
          model: body.model,
          choices: [{ index: 0, message, finish_reason: tools ? 'tool_calls' : 'stop', logprobs: null }],
          usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
        },
        { 'set-cookie': ['__cf_bm=secretcookievalue123; path=/; expires=Thu, 01 Jan 2099 00:00:00 GMT', 'other=1'], 'x-request-id': `req_${count}` },
      );
    }
    if (path === '/v1/messages') {
      if (body.stream) return sse(res, anthropicStream(count, text, tools), slow ? 20 : gap);
      const content = tools ? [{ type: 'tool_use', id: `toolu_${count}`, name: 'get_weather', input: { city: 'Paris' } }] : [{ type: 'text', text: `Echo ${count}: ${text}` }];
      return json(200, {
        id: `msg_${count}`,
        type: 'message',
        role: 'assistant',
        model: body.model,
        content,
        stop_reason: tools ? 'tool_use' : 'end_turn',
        stop_sequence: null,
        usage: { input_tokens: 12, output_tokens: 6 },
      });
    }
    // The Responses API (the OpenAI SDK's responses.create, the AI SDK's default OpenAI model):
    // the input's last text is echoed, as one body or as the typed events of a stream.
    if (path === '/v1/responses') {
      const input = typeof body.input === 'string' ? body.input : lastUserText({ messages: body.input as never });
      const say = `Echo ${count}: ${input}`;
      const item = { type: 'message', id: `msg_${count}`, status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: say, annotations: [] }] };
      const usage = { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 5, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 15 };
      const response = { id: `resp_${count}`, object: 'response', created_at: 1767225600, status: 'completed', model: body.model, output: [item], usage, incomplete_details: null, error: null };
      if (!body.stream) return json(200, response);
      const ev = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
      return sse(res, [
        ev('response.created', { response: { ...response, status: 'in_progress', output: [], usage: null } }),
        ev('response.output_item.added', { output_index: 0, item: { ...item, status: 'in_progress', content: [] } }),
        ...say.split(' ').map((w, k) => ev('response.output_text.delta', { item_id: item.id, output_index: 0, content_index: 0, delta: k ? ` ${w}` : w })),
        ev('response.output_item.done', { output_index: 0, item }),
        ev('response.completed', { response }),
      ], gap);
    }
    if (path === '/v1/echo') return json(200, { echo: body, call: count });
    if (path === '/v1/embeddings') return json(200, { object: 'list', data: [{ object: 'embedding', index: 0, embedding: [0.1, 0.2, count] }], model: body.model });
    return json(404, { error: { message: `no route ${path}`, type: 'invalid_request_error' } });
  });
  return { ...(await listenLoopback(server)), calls };
}

/** Starts a fake's server on 127.0.0.1 and a free port; close() cuts open connections. */
export async function listenLoopback(server: Server): Promise<{ url: string; server: Server; close(): Promise<void> }> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
