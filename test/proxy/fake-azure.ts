// A local stand-in for an Azure OpenAI resource on 127.0.0.1 and a free port: deployments in the
// path (`/openai/deployments/{name}/chat/completions?api-version=...`, `/embeddings`), the v1
// path (`/openai/v1/chat/completions`, model in the body, no api-version needed), the `api-key`
// header or an Entra ID bearer token, Azure's content-filter annotations (a first stream chunk
// with no choices and `prompt_filter_results`), and Azure's error bodies. Answers name the
// deployment and count calls, so a replayed recording is told apart from a live call.
import { startFake, type FakeServer } from './loopback.ts';

export type FakeAzure = FakeServer;

type Obj = Record<string, unknown>;
const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));
const FILTER = { hate: { filtered: false, severity: 'safe' }, self_harm: { filtered: false, severity: 'safe' }, sexual: { filtered: false, severity: 'safe' }, violence: { filtered: false, severity: 'safe' } };

function lastUserText(messages: unknown): string {
  if (!Array.isArray(messages)) return '';
  const m = [...messages].reverse().find((x) => x && typeof x === 'object' && (x as Obj).role === 'user') as Obj | undefined;
  if (!m) return '';
  return typeof m.content === 'string' ? m.content : Array.isArray(m.content) ? m.content.map((p) => String((p as Obj).text ?? '')).join('') : '';
}

/** Starts the fake Azure OpenAI resource on 127.0.0.1, port 0. `apiKey` is the key it accepts. */
export async function startFakeAzure(apiKey: string, token?: string): Promise<FakeAzure> {
  return startFake(async (req, res, raw, count) => {
    const url = new URL(req.url ?? '/', 'http://azure.invalid');
    const json = (status: number, v: unknown, headers: Obj = {}) => {
      const s = JSON.stringify(v);
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(s), 'apim-request-id': `apim-${count}`, ...(headers as Record<string, string>) });
      res.end(s);
    };
    const authorized = req.headers['api-key'] === apiKey || (token !== undefined && req.headers.authorization === `Bearer ${token}`);
    if (!authorized) {
      return json(401, { error: { code: '401', message: 'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.' } });
    }
    const dep = /^\/openai\/deployments\/([^/]+)\/(chat\/completions|embeddings)$/.exec(url.pathname);
    const v1 = /^\/openai\/v1\/(chat\/completions|embeddings)$/.exec(url.pathname);
    if (!dep && !v1) return json(404, { error: { code: '404', message: 'Resource not found' } });
    if (dep && !url.searchParams.get('api-version')) return json(404, { error: { code: '404', message: 'Resource not found' } });
    let body: Obj;
    try {
      body = JSON.parse(raw) as Obj;
    } catch {
      return json(400, { error: { code: 'BadRequest', message: 'Invalid JSON.' } });
    }
    const deployment = dep ? decodeURIComponent(dep[1]!) : String(body.model ?? '');
    if (!/^(gpt-4o|chat|embed)/.test(deployment)) {
      return json(404, { error: { code: 'DeploymentNotFound', message: 'The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again.' } });
    }
    const what = (dep ?? v1)![dep ? 2 : 1];
    if (what === 'embeddings') {
      const inputs = Array.isArray(body.input) ? body.input : [body.input];
      return json(200, { object: 'list', data: inputs.map((s, i) => ({ object: 'embedding', index: i, embedding: [0.5, String(s).length / 100, count] })), model: 'text-embedding-3-small', usage: { prompt_tokens: 4, total_tokens: 4 } });
    }
    const text = `Azure ${deployment} ${count}: ${lastUserText(body.messages)}`;
    const tools = Array.isArray(body.tools) && body.tools.length > 0;
    const last = Array.isArray(body.messages) ? (body.messages[body.messages.length - 1] as Obj) : undefined;
    const call = tools && last?.role !== 'tool' ? [{ id: `call_az${count}`, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] : undefined;
    const base = { id: `chatcmpl-az${count}`, created: 1767225600, model: 'gpt-4o-2024-11-20', system_fingerprint: 'fp_az' };
    if (body.stream !== true) {
      const message: Obj = call ? { role: 'assistant', content: null, tool_calls: call, refusal: null } : { role: 'assistant', content: last?.role === 'tool' ? `The tool said ${String(last.content)}` : text, refusal: null };
      return json(200, {
        ...base,
        object: 'chat.completion',
        prompt_filter_results: [{ prompt_index: 0, content_filter_results: FILTER }],
        choices: [{ index: 0, message, finish_reason: call ? 'tool_calls' : 'stop', logprobs: null, content_filter_results: FILTER }],
        usage: { prompt_tokens: 11, completion_tokens: 6, total_tokens: 17 },
      });
    }
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'apim-request-id': `apim-${count}` });
    const chunk = (choices: unknown[]) => `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices })}\n\n`;
    const events = [`data: ${JSON.stringify({ choices: [], created: 0, id: '', model: '', object: '', prompt_filter_results: [{ prompt_index: 0, content_filter_results: FILTER }] })}\n\n`];
    events.push(chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null, content_filter_results: {} }]));
    if (call) events.push(chunk([{ index: 0, delta: { tool_calls: [{ index: 0, ...call[0] }] }, finish_reason: null }]));
    else for (const w of text.split(' ')) events.push(chunk([{ index: 0, delta: { content: `${w} ` }, finish_reason: null, content_filter_results: FILTER }]));
    events.push(chunk([{ index: 0, delta: {}, finish_reason: call ? 'tool_calls' : 'stop', content_filter_results: {} }]));
    events.push('data: [DONE]\n\n');
    for (const e of events) {
      res.write(e);
      await wait(2);
    }
    res.end();
  });
}
