// A local stand-in for the OpenAI Chat Completions API on 127.0.0.1 and a free port: plain and
// streamed answers, and tool calls when the request offers tools. Each answer carries a call
// counter, so an answer replayed from a tape is told apart from a live one.
// Point the tests at the real API instead by setting OPENAI_BASE_URL and OPENAI_API_KEY.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeOpenAI {
  url: string;
  /** Request bodies received, in order. */
  calls: string[];
  close(): Promise<void>;
}

export async function startFakeOpenAI(): Promise<FakeOpenAI> {
  const calls: string[] = [];
  const server: Server = createServer(async (req, res) => {
    let raw = '';
    for await (const c of req) raw += c;
    calls.push(raw);
    const n = calls.length;
    if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `no route ${req.url}`, type: 'invalid_request_error' } }));
      return;
    }
    const body = JSON.parse(raw) as { model: string; stream?: boolean; tools?: unknown[]; messages: { role: string; content: unknown }[] };
    const last = body.messages.filter((m) => m.role === 'user').pop();
    const text = `You said: ${typeof last?.content === 'string' ? last.content : JSON.stringify(last?.content)} (call ${n})`;
    const toolCall = { id: `call_${n}`, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } };
    const tools = Array.isArray(body.tools) && body.tools.length > 0;
    const base = { id: `chatcmpl-${n}`, created: 1767225600, model: body.model };
    if (!body.stream) {
      const message = tools ? { role: 'assistant', content: null, tool_calls: [toolCall] } : { role: 'assistant', content: text };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ...base, object: 'chat.completion', choices: [{ index: 0, message, finish_reason: tools ? 'tool_calls' : 'stop' }], usage: { prompt_tokens: 9, completion_tokens: 6, total_tokens: 15 } }));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const send = (delta: unknown, finish: string | null = null) =>
      res.write(`data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`);
    send({ role: 'assistant', content: '' });
    if (tools) {
      send({ tool_calls: [{ index: 0, id: toolCall.id, type: 'function', function: { name: 'get_weather', arguments: '' } }] });
      send({ tool_calls: [{ index: 0, function: { arguments: '{"city":"Paris"}' } }] });
      send({}, 'tool_calls');
    } else {
      for (const word of text.split(' ')) send({ content: `${word} ` });
      send({}, 'stop');
    }
    res.write(`data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 9, completion_tokens: 6, total_tokens: 15 } })}\n\n`);
    res.end('data: [DONE]\n\n');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    calls,
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}
