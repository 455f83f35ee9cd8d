// A local stand-in for AWS Bedrock Runtime on 127.0.0.1 (HTTP/1.1, which Bedrock accepts too):
// Converse, ConverseStream, InvokeModel and InvokeModelWithResponseStream with Anthropic bodies,
// streams framed as real event-stream messages (CRCs included, the `p` padding member Bedrock
// adds to every event), errors with `x-amzn-ErrorType` and `{ message }`. Answers are derived
// from the request and a per-server call counter, so a replayed answer is told apart from a live
// one. Requests without SigV4 or Bearer authorization get Bedrock's 403.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { encodeEventStreamMessage } from '../../src/providers/wire/aws-eventstream.ts';
import { listenLoopback } from '../proxy/fake-upstream.ts';

export interface FakeBedrock {
  url: string;
  server: Server;
  calls: { method: string; url: string; modelId: string; headers: IncomingMessage['headers']; body: string }[];
  close(): Promise<void>;
}

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));
const enc = new TextEncoder();

/** Bedrock pads every stream event with a `p` member of varying length (against length side channels). */
function pad(n: number): string {
  return 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456'.slice(0, 5 + (n % 40));
}

function frame(eventType: string, payload: object, n: number): Uint8Array {
  return encodeEventStreamMessage({
    headers: [
      { name: ':event-type', type: 'string', value: eventType },
      { name: ':content-type', type: 'string', value: 'application/json' },
      { name: ':message-type', type: 'string', value: 'event' },
    ],
    body: enc.encode(JSON.stringify({ ...payload, p: pad(n) })),
  });
}

function error(res: ServerResponse, status: number, type: string, message: string): void {
  const body = JSON.stringify({ message });
  res.writeHead(status, { 'content-type': 'application/json', 'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/`, 'x-amzn-requestid': 'req-error', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

type Block = Record<string, unknown>;
interface ConverseMessage {
  role: string;
  content: Block[];
}

function lastUser(messages: ConverseMessage[]): ConverseMessage | undefined {
  return [...messages].reverse().find((m) => m.role === 'user');
}

/** The text of the last user turn, over Converse (`{text}`) and Anthropic (`{type:'text',text}`) blocks. */
function userText(m: { content: unknown } | undefined): string {
  if (!m) return '';
  if (typeof m.content === 'string') return m.content;
  return (m.content as Block[]).map((b) => (typeof b.text === 'string' ? b.text : '')).join('');
}

function wantsTool(m: { content: unknown } | undefined, hasTools: boolean): boolean {
  if (!hasTools || !m || typeof m.content === 'string') return false;
  return !(m.content as Block[]).some((b) => 'toolResult' in b || b.type === 'tool_result');
}

async function stream(res: ServerResponse, frames: Uint8Array[], gapMs: number, extra: Record<string, string> = {}): Promise<void> {
  res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-requestid': 'req-stream', ...extra });
  for (const f of frames) {
    if (res.destroyed) return;
    res.write(f);
    await wait(gapMs);
  }
  res.end();
}

function converse(n: number, body: { messages: ConverseMessage[]; toolConfig?: { tools: { toolSpec: { name: string } }[] } }): object {
  const last = lastUser(body.messages);
  const tool = body.toolConfig?.tools[0]?.toolSpec.name;
  const content = wantsTool(last, tool !== undefined) ? [{ toolUse: { toolUseId: `tooluse_${n}`, name: tool, input: { city: 'Paris' } } }] : [{ text: `Echo ${n}: ${userText(last)}` }];
  return {
    output: { message: { role: 'assistant', content } },
    stopReason: 'toolUse' in content[0]! ? 'tool_use' : 'end_turn',
    usage: { inputTokens: 12, outputTokens: 7, totalTokens: 19 },
    metrics: { latencyMs: 321 },
  };
}

function converseStream(n: number, body: Parameters<typeof converse>[1], cut: boolean): Uint8Array[] {
  const last = lastUser(body.messages);
  const tool = body.toolConfig?.tools[0]?.toolSpec.name;
  let k = 0;
  const out = [frame('messageStart', { role: 'assistant' }, k++)];
  let stopReason = 'end_turn';
  if (wantsTool(last, tool !== undefined)) {
    stopReason = 'tool_use';
    out.push(frame('contentBlockStart', { contentBlockIndex: 0, start: { toolUse: { toolUseId: `tooluse_${n}`, name: tool } } }, k++));
    out.push(frame('contentBlockDelta', { contentBlockIndex: 0, delta: { toolUse: { input: '{"city":' } } }, k++));
    out.push(frame('contentBlockDelta', { contentBlockIndex: 0, delta: { toolUse: { input: '"Paris"}' } } }, k++));
  } else {
    for (const word of `Echo ${n}: ${userText(last)}`.split(' ')) out.push(frame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: `${word} ` } }, k++));
  }
  out.push(frame('contentBlockStop', { contentBlockIndex: 0 }, k++));
  if (cut) return out;
  out.push(frame('messageStop', { stopReason }, k++));
  out.push(frame('metadata', { usage: { inputTokens: 12, outputTokens: 7, totalTokens: 19 }, metrics: { latencyMs: 321 } }, k++));
  return out;
}

interface AnthropicBody {
  anthropic_version?: string;
  messages: { role: string; content: unknown }[];
  tools?: { name: string }[];
}

function anthropicMessage(n: number, modelId: string, body: AnthropicBody): { id: string; content: Block[]; stop_reason: string; [k: string]: unknown } {
  const last = [...body.messages].reverse().find((m) => m.role === 'user');
  const tool = body.tools?.[0]?.name;
  const content: Block[] = wantsTool(last, tool !== undefined) ? [{ type: 'tool_use', id: `toolu_bdrk_${n}`, name: tool, input: { city: 'Paris' } }] : [{ type: 'text', text: `Echo ${n}: ${userText(last)}` }];
  return {
    id: `msg_bdrk_${n}`,
    type: 'message',
    role: 'assistant',
    model: modelId.replace(/^.*\//, '').replace(/^(us|eu|apac)\.anthropic\.|^anthropic\./, ''),
    content,
    stop_reason: content[0]!.type === 'tool_use' ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 12, output_tokens: 7 },
  };
}

function invokeStream(n: number, modelId: string, body: AnthropicBody, cut: boolean): Uint8Array[] {
  const msg = anthropicMessage(n, modelId, body);
  const chunk = (event: object, k: number) =>
    encodeEventStreamMessage({
      headers: [
        { name: ':event-type', type: 'string', value: 'chunk' },
        { name: ':content-type', type: 'string', value: 'application/json' },
        { name: ':message-type', type: 'string', value: 'event' },
      ],
      body: enc.encode(JSON.stringify({ bytes: Buffer.from(JSON.stringify(event)).toString('base64'), p: pad(k) })),
    });
  const events: object[] = [{ type: 'message_start', message: { ...msg, content: [], stop_reason: null, usage: { input_tokens: 12, output_tokens: 1 } } }];
  const block = msg.content[0]!;
  if (block.type === 'tool_use') {
    events.push({ type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } });
    events.push({ type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"city":' } });
    events.push({ type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '"Paris"}' } });
  } else {
    events.push({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
    for (const word of String(block.text).split(' ')) events.push({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: `${word} ` } });
  }
  events.push({ type: 'content_block_stop', index: 0 });
  events.push({ type: 'message_delta', delta: { stop_reason: msg.stop_reason, stop_sequence: null }, usage: { output_tokens: 7 } });
  if (!cut) events.push({ type: 'message_stop', 'amazon-bedrock-invocationMetrics': { inputTokenCount: 12, outputTokenCount: 7, invocationLatency: 321, firstByteLatency: 100 } });
  return events.map(chunk);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}

const ROUTE = /^\/model\/([^/]+)\/(converse|converse-stream|invoke|invoke-with-response-stream)$/;

/**
 * Starts the fake. A user text containing `CUT STREAM` makes a stream end without its last
 * events (messageStop and metadata, or message_stop); `THROTTLE` answers 429 ThrottlingException.
 */
export async function startBedrock(opts: { gapMs?: number } = {}): Promise<FakeBedrock> {
  const gap = opts.gapMs ?? 15;
  const calls: FakeBedrock['calls'] = [];
  let count = 0;
  const server = createServer(async (req, res) => {
    const raw = await readBody(req);
    const path = (req.url ?? '/').split('?')[0]!;
    const m = ROUTE.exec(path);
    if (req.method !== 'POST' || !m) return error(res, 404, 'UnknownOperationException', 'Unknown operation');
    const modelId = decodeURIComponent(m[1]!);
    calls.push({ method: req.method, url: req.url ?? '/', modelId, headers: req.headers, body: raw });
    const auth = String(req.headers.authorization ?? '');
    if (!auth.startsWith('AWS4-HMAC-SHA256 Credential=') && !auth.startsWith('Bearer ')) return error(res, 403, 'MissingAuthenticationTokenException', 'Missing Authentication Token');
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      return error(res, 400, 'ValidationException', 'Malformed input request, please reformat your input and try again.');
    }
    const n = ++count;
    const text = JSON.stringify(body);
    if (text.includes('THROTTLE')) return error(res, 429, 'ThrottlingException', 'Too many requests, please wait before trying again.');
    const cut = text.includes('CUT STREAM');
    switch (m[2]) {
      case 'converse': {
        if (!Array.isArray(body.messages)) return error(res, 400, 'ValidationException', 'The provided request is not valid');
        const out = JSON.stringify(converse(n, body as Parameters<typeof converse>[1]));
        res.writeHead(200, { 'content-type': 'application/json', 'x-amzn-requestid': `req-${n}`, 'content-length': Buffer.byteLength(out) });
        return res.end(out);
      }
      case 'converse-stream':
        return stream(res, converseStream(n, body as Parameters<typeof converse>[1], cut), gap);
      case 'invoke': {
        if (body.anthropic_version !== 'bedrock-2023-05-31') return error(res, 400, 'ValidationException', 'anthropic_version: Invalid value');
        const out = JSON.stringify(anthropicMessage(n, modelId, body as unknown as AnthropicBody));
        res.writeHead(200, { 'content-type': 'application/json', 'x-amzn-requestid': `req-${n}`, 'x-amzn-bedrock-input-token-count': '12', 'x-amzn-bedrock-output-token-count': '7', 'content-length': Buffer.byteLength(out) });
        return res.end(out);
      }
      default:
        if (body.anthropic_version !== 'bedrock-2023-05-31') return error(res, 400, 'ValidationException', 'anthropic_version: Invalid value');
        return stream(res, invokeStream(n, modelId, body as unknown as AnthropicBody, cut), gap, { 'x-amzn-bedrock-content-type': 'application/json' });
    }
  });
  return { ...(await listenLoopback(server)), calls };
}
