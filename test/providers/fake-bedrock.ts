// A local stand-in for AWS Bedrock Runtime on 127.0.0.1 (HTTP/1.1, which Bedrock accepts too):
// Converse, ConverseStream, InvokeModel and InvokeModelWithResponseStream with Anthropic bodies,
// streams framed as real event-stream messages (CRCs included, the `p` padding member Bedrock
// adds to every event), errors with `x-amzn-ErrorType` and `{ message }`. Answers are derived
// from the request and a per-server call counter, so a replayed answer is told apart from a live
// one. Requests without SigV4 or Bearer authorization get Bedrock's 403; given credentials, the
// fake checks SigV4 signatures for its own host with the AWS SDK's signer, as AWS does. A stream
// can fail after its 200 and first events as Bedrock's do: an exception frame
// (`:message-type` `exception`, the exception's name in `:exception-type`, `{ message }`).
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Sha256 } from '@smithy/core/checksum';
import { HttpRequest } from '@smithy/core/protocols';
import { SignatureV4 } from '@smithy/signature-v4';
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

/** An exception that fails a stream after its 200: `:exception-type` and the frame's JSON payload. */
interface StreamFailure {
  type: string;
  payload: { message: string; [k: string]: unknown };
}

/** The failures a prompt asks for (see startBedrock), as Bedrock words them. */
const STREAM_FAILURES: Record<string, StreamFailure> = {
  'STREAM THROTTLED': { type: 'throttlingException', payload: { message: 'Too many tokens, please wait before trying again.' } },
  'STREAM MODEL ERROR': {
    type: 'modelStreamErrorException',
    payload: { message: 'Model stream error: the model returned an error while streaming.', originalStatusCode: 424, originalMessage: 'Received error from the model: overloaded' },
  },
};

/** Bedrock's exception frame: `:exception-type` in place of `:event-type`, the exception's members as JSON. */
function exceptionFrame(f: StreamFailure): Uint8Array {
  return encodeEventStreamMessage({
    headers: [
      { name: ':exception-type', type: 'string', value: f.type },
      { name: ':content-type', type: 'string', value: 'application/json' },
      { name: ':message-type', type: 'string', value: 'exception' },
    ],
    body: enc.encode(JSON.stringify(f.payload)),
  });
}

/** The first events of a stream, then the exception frame in place of the rest. */
function failedAfter(frames: Uint8Array[], f: StreamFailure): Uint8Array[] {
  return [...frames.slice(0, 3), exceptionFrame(f)];
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

/** The refusal AWS gives a request, or undefined when its SigV4 signature is right for this host. */
async function checkSignature(req: IncomingMessage, raw: string, creds: { accessKeyId: string; secretAccessKey: string; sessionToken?: string }): Promise<[number, string, string] | undefined> {
  const auth = String(req.headers.authorization ?? '');
  const m = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/\d{8}\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=[0-9a-f]{64}$/.exec(auth);
  if (!m) return auth.startsWith('Bearer ') ? undefined : [400, 'IncompleteSignatureException', 'Authorization header requires Credential, SignedHeaders and Signature.'];
  if (m[1] !== creds.accessKeyId) return [403, 'UnrecognizedClientException', 'The security token included in the request is invalid.'];
  const sha = req.headers['x-amz-content-sha256'];
  if (typeof sha === 'string' && sha !== createHash('sha256').update(raw).digest('hex')) return [400, 'XAmzContentSHA256Mismatch', 'The provided x-amz-content-sha256 header does not match what was computed.'];
  const headers: Record<string, string> = {};
  for (const name of m[4]!.split(';')) headers[name] = String(req.headers[name] ?? '');
  const d = /^(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z$/.exec(headers['x-amz-date'] ?? '');
  if (!d) return [400, 'IncompleteSignatureException', 'x-amz-date is missing or malformed.'];
  const [path, search = ''] = (req.url ?? '/').split('?');
  const query: Record<string, string | string[]> = {};
  for (const [k, v] of new URLSearchParams(search)) query[k] = k in query ? [query[k]!, v].flat() : v;
  const signer = new SignatureV4({ credentials: creds, region: m[2]!, service: m[3]!, sha256: Sha256 });
  const expected = await signer.sign(new HttpRequest({ method: req.method!, protocol: 'http:', hostname: String(req.headers.host), path: path!, query, headers, body: raw }), {
    signingDate: new Date(`${d[1]}-${d[2]}-${d[3]}T${d[4]}:${d[5]}:${d[6]}Z`),
  });
  if (expected.headers.authorization !== auth) return [403, 'InvalidSignatureException', 'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.'];
  return undefined;
}

const ROUTE = /^\/model\/([^/]+)\/(converse|converse-stream|invoke|invoke-with-response-stream)$/;

/**
 * Starts the fake. A user text containing `CUT STREAM` makes a stream end without its last
 * events (messageStop and metadata, or message_stop); `THROTTLE` answers 429 ThrottlingException.
 * `STREAM THROTTLED` and `STREAM MODEL ERROR` make a stream (a 200) send its first events, then
 * a throttlingException or modelStreamErrorException frame, and end.
 * With `verifyCredentials`, a SigV4 signature that is not right for this host and these
 * credentials gets AWS's 403 InvalidSignatureException (another access key: UnrecognizedClientException).
 */
export async function startBedrock(opts: { gapMs?: number; verifyCredentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string } } = {}): Promise<FakeBedrock> {
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
    const refused = opts.verifyCredentials ? await checkSignature(req, raw, opts.verifyCredentials) : undefined;
    if (refused) return error(res, ...refused);
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      return error(res, 400, 'ValidationException', 'Malformed input request, please reformat your input and try again.');
    }
    const n = ++count;
    const text = JSON.stringify(body);
    const failure = Object.entries(STREAM_FAILURES).find(([asked]) => text.includes(asked))?.[1];
    if (!failure && text.includes('THROTTLE')) return error(res, 429, 'ThrottlingException', 'Too many requests, please wait before trying again.');
    const cut = text.includes('CUT STREAM');
    const failing = (frames: Uint8Array[]) => (failure ? failedAfter(frames, failure) : frames);
    switch (m[2]) {
      case 'converse': {
        if (!Array.isArray(body.messages)) return error(res, 400, 'ValidationException', 'The provided request is not valid');
        const out = JSON.stringify(converse(n, body as Parameters<typeof converse>[1]));
        res.writeHead(200, { 'content-type': 'application/json', 'x-amzn-requestid': `req-${n}`, 'content-length': Buffer.byteLength(out) });
        return res.end(out);
      }
      case 'converse-stream':
        return stream(res, failing(converseStream(n, body as Parameters<typeof converse>[1], cut)), gap);
      case 'invoke': {
        if (body.anthropic_version !== 'bedrock-2023-05-31') return error(res, 400, 'ValidationException', 'anthropic_version: Invalid value');
        const out = JSON.stringify(anthropicMessage(n, modelId, body as unknown as AnthropicBody));
        res.writeHead(200, { 'content-type': 'application/json', 'x-amzn-requestid': `req-${n}`, 'x-amzn-bedrock-input-token-count': '12', 'x-amzn-bedrock-output-token-count': '7', 'content-length': Buffer.byteLength(out) });
        return res.end(out);
      }
      default:
        if (body.anthropic_version !== 'bedrock-2023-05-31') return error(res, 400, 'ValidationException', 'anthropic_version: Invalid value');
        return stream(res, failing(invokeStream(n, modelId, body as unknown as AnthropicBody, cut)), gap, { 'x-amzn-bedrock-content-type': 'application/json' });
    }
  });
  return { ...(await listenLoopback(server)), calls };
}
