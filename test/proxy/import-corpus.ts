// A large, varied HAR for the import's differential tests: several providers (OpenAI chat and
// embeddings, Anthropic, Gemini with the model and key in the URL, Azure with api-version, Bedrock
// Converse, Ollama), plain JSON and non-JSON calls, streams, repeats, members in shuffled order,
// and secrets everywhere the import must mask them (credential headers, query parameters, body
// members, keys pasted into prompts and echoed in answers, a key split across two stream events).
// Deterministic: entry i is a function of i alone.

type Header = { name: string; value: string };
const h = (name: string, value: string): Header => ({ name, value });

/** A key-looking string that differs per entry (so masks differ too). */
const key = (prefix: string, i: number) => `${prefix}${(i * 2654435761).toString(36).padStart(8, '0')}abcdefghijklmnopqrstuv`;

/** The object's members in a reversed or rotated order (the import stores them sorted). */
function shuffled(o: Record<string, unknown>, i: number): Record<string, unknown> {
  const ks = Object.keys(o);
  const order = i % 3 === 0 ? ks.reverse() : i % 3 === 1 ? [...ks.slice(1), ...ks.slice(0, 1)] : ks;
  return Object.fromEntries(order.map((k) => [k, o[k]]));
}

const sse = (events: unknown[]) => events.map((e) => `data: ${typeof e === 'string' ? e : JSON.stringify(e)}\n\n`).join('');

interface Shape {
  method: string;
  url: string;
  headers: Header[];
  body?: { mimeType: string; text: string };
  status?: number;
  resHeaders: Header[];
  answer: string;
  mime: string;
  base64?: boolean;
}

function openaiChat(i: number): Shape {
  const stream = i % 4 === 0;
  const secretInPrompt = i % 7 === 0 ? ` my key is ${key('sk-proj-', i)} keep it` : '';
  const body = shuffled(
    {
      model: i % 5 === 0 ? 'gpt-4o' : 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'You are a concise assistant. ü ✓ 😀' },
        ...(i % 6 === 0 ? [{ role: 'user', content: 'earlier' }, { role: 'assistant', content: null, tool_calls: [{ id: `call_${i}`, type: 'function', function: { name: 'lookup', arguments: JSON.stringify({ q: i, z: 1.5 }) } }] }, { role: 'tool', tool_call_id: `call_${i}`, content: '{"found":true}' }] : []),
        { role: 'user', content: `Question ${i}: what is ${i} squared?${secretInPrompt}` },
      ],
      temperature: (i % 10) / 10,
      ...(i % 6 === 0 ? { tools: [{ type: 'function', function: { name: 'lookup', description: 'Look up', parameters: { type: 'object', properties: { q: { type: 'number' }, a: { type: 'string' } } } } }] } : {}),
      ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
      ...(i % 11 === 0 ? { user: `u-${i}`, metadata: { z: 'last', a: 'first', m: { y: 2, b: [3, { d: 1, c: 0 }] } } } : {}),
    },
    i,
  );
  const text = `${i} squared is ${i * i}.${i % 13 === 0 ? ` Your key ${key('sk-', i)} was echoed.` : ''}`;
  const head = { id: `chatcmpl-${i}`, created: 1767225600 + i, model: 'gpt-4o-mini-2024-07-18', system_fingerprint: 'fp_1' };
  let answer: string;
  if (stream) {
    const words = text.match(/\S+\s*/g)!;
    // Every 8th stream splits a key across two events (stored as one chunk once masked).
    const split = i % 8 === 0 ? [`${key('sk-ant-api03-', i).slice(0, 14)}`, `${key('sk-ant-api03-', i).slice(14)} `] : [];
    answer =
      sse([
        { ...head, object: 'chat.completion.chunk', choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] },
        ...[...words, ...split].map((w) => ({ ...head, object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: w }, finish_reason: null }] })),
        { ...head, object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
        { ...head, object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 20, completion_tokens: words.length, total_tokens: 20 + words.length } },
      ]) + 'data: [DONE]\n\n';
  } else {
    answer = JSON.stringify(shuffled({ ...head, object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }], usage: { prompt_tokens: 20, completion_tokens: 9, total_tokens: 29 } }, i));
  }
  return {
    method: 'POST',
    url: 'https://api.openai.com/v1/chat/completions',
    headers: [h('authorization', `Bearer ${key('sk-proj-', i)}`), h('content-type', 'application/json'), h('openai-organization', `org-${i}`), h('user-agent', 'OpenAI/JS 4.77.0'), h('accept', 'application/json')],
    body: { mimeType: 'application/json', text: JSON.stringify(body) },
    resHeaders: [h('content-type', stream ? 'text/event-stream; charset=utf-8' : 'application/json'), h('content-encoding', 'br'), h('x-request-id', `req_${i}`), h('set-cookie', `__cf_bm=${i}abcdefghijklmnopqrstuvwxyz; path=/`), h('set-cookie', `_cfuvid=${i}; path=/`)],
    answer,
    mime: stream ? 'text/event-stream' : 'application/json',
  };
}

function anthropic(i: number): Shape {
  const stream = i % 3 === 0;
  const body = shuffled({ model: 'claude-3-5-haiku-latest', max_tokens: 256, system: 'Be brief.', messages: [{ role: 'user', content: [{ type: 'text', text: `Hello ${i}` }] }], ...(stream ? { stream: true } : {}) }, i);
  const answer = stream
    ? [
        `event: message_start\ndata: ${JSON.stringify({ type: 'message_start', message: { id: `msg_${i}`, type: 'message', role: 'assistant', model: 'claude-3-5-haiku-20241022', content: [], usage: { input_tokens: 5, output_tokens: 1 } } })}\n\n`,
        `event: content_block_delta\ndata: ${JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: `Hi ${i}` } })}\n\n`,
        `event: message_stop\ndata: {"type":"message_stop"}\n\n`,
      ].join('')
    : JSON.stringify({ id: `msg_${i}`, type: 'message', role: 'assistant', content: [{ type: 'text', text: `Hi ${i}` }], model: 'claude-3-5-haiku-20241022', usage: { input_tokens: 5, output_tokens: 3 } });
  return {
    method: 'POST',
    url: 'https://api.anthropic.com/v1/messages',
    headers: [h('x-api-key', key('sk-ant-api03-', i)), h('anthropic-version', '2023-06-01'), h('content-type', 'application/json')],
    body: { mimeType: 'application/json', text: JSON.stringify(body) },
    resHeaders: [h('content-type', stream ? 'text/event-stream' : 'application/json'), h('request-id', `req_${i}`)],
    answer,
    mime: stream ? 'text/event-stream' : 'application/json',
  };
}

function gemini(i: number): Shape {
  const stream = i % 2 === 0;
  const model = i % 4 === 0 ? 'gemini-2.0-flash' : 'gemini-1.5-pro';
  const body = { contents: [{ role: 'user', parts: [{ text: `Tell me ${i}` }] }], generationConfig: { temperature: 0.25, maxOutputTokens: 64 } };
  const chunk = (t: string) => ({ candidates: [{ content: { role: 'model', parts: [{ text: t }] }, index: 0 }], modelVersion: model });
  return {
    method: 'POST',
    url: `https://generativelanguage.googleapis.com/v1beta/models/${model}:${stream ? 'streamGenerateContent?alt=sse&' : 'generateContent?'}key=${key('AIzaSy', i)}`,
    headers: [h('content-type', 'application/json'), h('x-goog-api-client', 'genai-js/0.21.0')],
    body: { mimeType: 'application/json', text: JSON.stringify(body) },
    resHeaders: [h('content-type', stream ? 'text/event-stream' : 'application/json; charset=UTF-8')],
    answer: stream ? sse([chunk(`Part one of ${i}`), chunk(' and two.')]) : JSON.stringify(chunk(`All of ${i}`)),
    mime: stream ? 'text/event-stream' : 'application/json',
  };
}

function various(i: number): Shape {
  switch (i % 6) {
    case 0:
      return {
        method: 'POST',
        url: `https://example.openai.azure.com/openai/deployments/gpt4o-${i % 3}/chat/completions?api-version=2024-10-21`,
        headers: [h('api-key', key('azk', i)), h('content-type', 'application/json')],
        body: { mimeType: 'application/json', text: JSON.stringify({ messages: [{ role: 'user', content: `azure ${i}` }], max_tokens: 10 }) },
        resHeaders: [h('content-type', 'application/json')],
        answer: JSON.stringify({ id: `az-${i}`, choices: [{ index: 0, message: { role: 'assistant', content: `ok ${i}` } }] }),
        mime: 'application/json',
      };
    case 1:
      return {
        method: 'POST',
        url: 'https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse',
        headers: [h('authorization', `AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20260101/us-east-1/bedrock/aws4_request, SignedHeaders=host;x-amz-date, Signature=${'0123456789abcdef'.repeat(4)}`), h('x-amz-date', '20260101T000000Z'), h('content-type', 'application/json')],
        body: { mimeType: 'application/json', text: JSON.stringify({ messages: [{ role: 'user', content: [{ text: `bedrock ${i}` }] }], inferenceConfig: { maxTokens: 20 } }) },
        resHeaders: [h('content-type', 'application/json'), h('x-amzn-requestid', `r-${i}`)],
        answer: JSON.stringify({ output: { message: { role: 'assistant', content: [{ text: `rock ${i}` }] } }, stopReason: 'end_turn', usage: { inputTokens: 3, outputTokens: 2, totalTokens: 5 } }),
        mime: 'application/json',
      };
    case 2:
      return {
        method: 'POST',
        url: 'https://api.openai.com/v1/embeddings',
        headers: [h('authorization', `Bearer ${key('sk-', i)}`), h('content-type', 'application/json')],
        body: { mimeType: 'application/json', text: JSON.stringify({ input: [`a ${i}`, 'b'], model: 'text-embedding-3-small', encoding_format: 'float' }) },
        resHeaders: [h('content-type', 'application/json')],
        answer: JSON.stringify({ object: 'list', data: [{ object: 'embedding', index: 0, embedding: [0.1, -0.25, 1e-7, i] }], model: 'text-embedding-3-small' }),
        mime: 'application/json',
      };
    case 3:
      // A token endpoint: secret members in the request and in the JSON answer.
      return {
        method: 'POST',
        url: `https://auth.example.com/oauth/token?client_id=app&token=${key('tok', i)}`,
        headers: [h('content-type', 'application/json'), h('cookie', `sid=${i}`)],
        body: { mimeType: 'application/json', text: JSON.stringify({ grant_type: 'client_credentials', client_secret: `cs-${i}`, nested: { password: `pw${i}`, keep: i, apiKey: null } }) },
        resHeaders: [h('content-type', 'application/json')],
        answer: JSON.stringify({ access_token: `at-${i}-abcdefghijklmnopqrstuvwxyz`, token_type: 'bearer', expires_in: 3600, scope: 'a b' }),
        mime: 'application/json',
      };
    case 4:
      // Form-encoded and plain-text calls, and a GET without a body; a binary answer in base64.
      return i % 12 === 4
        ? {
            method: 'POST',
            url: 'https://api.example.com/login',
            headers: [h('content-type', 'application/x-www-form-urlencoded')],
            body: { mimeType: 'application/x-www-form-urlencoded', text: `user=u${i}&password=p${i}&remember=1` },
            resHeaders: [h('content-type', 'application/octet-stream')],
            answer: Buffer.from(Uint8Array.from({ length: 40 }, (_, j) => (i * 7 + j * 13) & 0xff)).toString('base64'),
            mime: 'application/octet-stream',
            base64: true,
          }
        : {
            method: 'GET',
            url: `https://api.example.com/items/${i % 5}?page=2&access_token=${key('at', i)}`,
            headers: [h('accept', 'text/plain'), h('x-trace', `t${i}`)],
            resHeaders: [h('content-type', 'text/plain')],
            answer: `item ${i % 5}\n`,
            mime: 'text/plain',
          };
    default: {
      // Some bodies hold masks already (a tape exported and imported again): in a message, spelled
      // with an escape (\u005b for its bracket), and as a member name.
      const again = i % 120 === 29 ? ' [REDACTED:0123456789abcdef]' : i % 120 === 59 ? ' @escaped@' : '';
      const options = i % 120 === 89 ? { seed: 1, '[REDACTED]': 2 } : { seed: 1 };
      const text = JSON.stringify({ model: 'llama3.2', messages: [{ role: 'user', content: `ollama ${i % 4}${again}` }], stream: false, options }).replace('@escaped@', '\\u005bREDACTED]');
      return {
        method: 'POST',
        url: 'http://localhost:11434/api/chat',
        headers: [h('content-type', 'application/json')],
        body: { mimeType: 'application/json', text },
        status: i % 30 === 5 ? 500 : 200,
        resHeaders: [h('content-type', 'application/json; charset=utf-8')],
        answer: JSON.stringify({ model: 'llama3.2', message: { role: 'assistant', content: `llama ${i % 4}` }, done: true }),
        mime: 'application/json',
      };
    }
  }
}

/** Entry i of the corpus, as a HAR 1.2 entry. Some requests repeat (the same body twice or more). */
export function corpusEntry(i: number): unknown {
  const kind = i % 10;
  // Every 9th entry repeats entry i - 9's request and answer exactly (a repeat, kept in order).
  const n = i % 9 === 8 ? i - 9 : i;
  const s = kind < 5 ? openaiChat(n) : kind < 7 ? anthropic(n) : kind < 8 ? gemini(n) : various(n);
  const u = new URL(s.url);
  return {
    startedDateTime: new Date(Date.UTC(2026, 0, 1) + i * 1537).toISOString(),
    time: 100 + (i % 17) * 10.125,
    request: {
      method: s.method,
      url: s.url,
      httpVersion: 'HTTP/1.1',
      cookies: [],
      headers: [h('Host', u.host), ...s.headers],
      queryString: [...u.searchParams].map(([name, value]) => ({ name, value })),
      ...(s.body ? { postData: s.body } : {}),
      headersSize: -1,
      bodySize: s.body?.text.length ?? 0,
    },
    response: {
      status: s.status ?? 200,
      statusText: 'OK',
      httpVersion: 'HTTP/1.1',
      cookies: [],
      headers: s.resHeaders,
      content: { size: s.answer.length, mimeType: s.mime, text: s.answer, ...(s.base64 ? { encoding: 'base64' } : {}) },
      redirectURL: '',
      headersSize: -1,
      bodySize: -1,
    },
    cache: {},
    timings: { blocked: 1, dns: -1, connect: -1, send: 0.5, wait: 80 + (i % 7), receive: 10 + (i % 5) },
  };
}

/** A HAR document of `n` corpus entries. */
export function corpusHar(n: number): string {
  return JSON.stringify({ log: { version: '1.2', creator: { name: 'corpus', version: '1' }, pages: [], entries: Array.from({ length: n }, (_, i) => corpusEntry(i)) } });
}
