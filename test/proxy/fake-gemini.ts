// A local stand-in for the Gemini API (Generative Language API paths) on 127.0.0.1 and a free
// port, speaking its wire format: generateContent, streamGenerateContent as server-sent events
// (`alt=sse`, `data: {...}\r\n\r\n` per chunk) and as one JSON array sent piece by piece
// (without `alt`), countTokens, embedContent, batchEmbedContents, and errors as
// `{ error: { code, message, status } }`. Answers are derived from the request plus a per-server
// call counter, so a replayed recording is told apart from a live call. A `cut` prompt makes the
// stream stop before its final chunk.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { listenLoopback } from './fake-upstream.ts';

export interface FakeGemini {
  url: string;
  server: Server;
  calls: { method: string; url: string; headers: IncomingMessage['headers']; body: string }[];
  close(): Promise<void>;
}

type Obj = Record<string, unknown>;
type Part = { text?: string; functionCall?: { name: string; args: Obj }; functionResponse?: { name: string; response: Obj }; thought?: boolean };
type Content = { role?: string; parts?: Part[] };

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body, null, 2);
  res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8', 'x-goog-request-id': 'req-fake' });
  res.end(text);
}

function googleError(res: ServerResponse, code: number, status: string, message: string): void {
  json(res, code, { error: { code, message, status } });
}

/** What the model answers: a call when tools are offered and no result came back yet, else text. */
function answer(n: number, model: string, body: { contents?: Content[]; tools?: { functionDeclarations?: { name: string }[] }[] }): { parts: Part[]; finishReason: string } {
  const contents = body.contents ?? [];
  const last = contents[contents.length - 1];
  const result = last?.parts?.find((p) => p.functionResponse)?.functionResponse;
  if (result) return { parts: [{ text: `Reply ${n}: ${result.name} said ${JSON.stringify(result.response)}` }], finishReason: 'STOP' };
  const text = last?.parts?.map((p) => p.text ?? '').join('') ?? '';
  const fn = body.tools?.flatMap((t) => t.functionDeclarations ?? [])[0];
  if (fn) return { parts: [{ functionCall: { name: fn.name, args: { city: 'Paris' } }, thoughtSignature: `sig-${n}` } as Part], finishReason: 'STOP' };
  return { parts: [{ text: `Echo ${n} from ${model}: ${text}` }], finishReason: 'STOP' };
}

function response(n: number, model: string, parts: Part[], finishReason?: string): Obj {
  return {
    candidates: [{ content: { parts, role: 'model' }, ...(finishReason ? { finishReason } : {}), index: 0 }],
    usageMetadata: { promptTokenCount: 7, candidatesTokenCount: 5, totalTokenCount: 12 },
    modelVersion: model,
    responseId: `resp-${n}`,
  };
}

/** An answer in streamed pieces: text word by word, a call whole; the last piece carries the finish reason. */
function pieces(n: number, model: string, a: { parts: Part[]; finishReason: string }, cut: boolean): Obj[] {
  const out: Obj[] = [];
  for (const p of a.parts) {
    if (p.text === undefined) out.push(response(n, model, [p]));
    else for (const w of p.text.split(/(?<= )/)) out.push(response(n, model, [{ text: w }]));
  }
  if (cut) return out;
  const final = out.pop() ?? response(n, model, []);
  (final.candidates as Obj[])[0]!.finishReason = a.finishReason;
  out.push(final);
  return out;
}

export async function startGemini(opts: { apiKey?: string } = {}): Promise<FakeGemini> {
  const calls: FakeGemini['calls'] = [];
  let n = 0;
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    calls.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: raw });
    const url = new URL(req.url ?? '/', 'http://x');
    const key = req.headers['x-goog-api-key'] ?? url.searchParams.get('key');
    if (opts.apiKey !== undefined && key !== opts.apiKey) return googleError(res, 400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.');
    const m = /\/v1beta\/models\/([^/:]+):(\w+)$/.exec(url.pathname);
    if (req.method !== 'POST' || !m) return googleError(res, 404, 'NOT_FOUND', `Method not found: ${url.pathname}`);
    const [, model, op] = m as unknown as [string, string, string];
    let body: Obj;
    try {
      body = JSON.parse(raw) as Obj;
    } catch {
      return googleError(res, 400, 'INVALID_ARGUMENT', 'Invalid JSON payload received.');
    }
    n++;
    if (op === 'generateContent') {
      const a = answer(n, model, body);
      return json(res, 200, response(n, model, a.parts, a.finishReason));
    }
    if (op === 'streamGenerateContent') {
      const a = answer(n, model, body);
      const text = JSON.stringify((body.contents as Content[] | undefined)?.at(-1)?.parts ?? []);
      const list = pieces(n, model, a, text.includes('cut'));
      if (url.searchParams.get('alt') === 'sse') {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'x-goog-request-id': 'req-fake' });
        for (const p of list) {
          res.write(`data: ${JSON.stringify(p)}\r\n\r\n`);
          await wait(5);
        }
        return res.end();
      }
      // The JSON-array stream: `[` + pretty-printed elements separated by `,\r\n` + `]`, sent as it comes.
      res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8', 'x-goog-request-id': 'req-fake' });
      for (let i = 0; i < list.length; i++) {
        res.write(`${i === 0 ? '[' : ',\r\n'}${JSON.stringify(list[i], null, 2)}\n`);
        await wait(5);
      }
      return res.end(text.includes('cut') ? '' : ']');
    }
    if (op === 'countTokens') {
      const contents = (body.contents ?? (body.generateContentRequest as Obj | undefined)?.contents ?? []) as Content[];
      const words = JSON.stringify(contents).split(/\s+/).length;
      return json(res, 200, { totalTokens: words + n, promptTokensDetails: [{ modality: 'TEXT', tokenCount: words + n }] });
    }
    const vector = (t: string) => [t.length, n, 0.25, -0.5];
    const textOf = (c: unknown) => ((c as Content | undefined)?.parts ?? []).map((p) => p.text ?? '').join('');
    if (op === 'embedContent') return json(res, 200, { embedding: { values: vector(textOf(body.content)) } });
    if (op === 'batchEmbedContents') {
      return json(res, 200, { embeddings: ((body.requests as Obj[] | undefined) ?? []).map((r) => ({ values: vector(textOf(r.content)) })) });
    }
    return googleError(res, 404, 'NOT_FOUND', `Method not found: ${op}`);
  });
  return { ...(await listenLoopback(server)), calls };
}
